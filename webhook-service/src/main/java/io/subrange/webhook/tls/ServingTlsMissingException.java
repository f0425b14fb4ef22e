package io.subrange.webhook.tls;

import java.util.List;

/** TLS is on but the serving certificate or key is not where subrange looks for it. */
public class ServingTlsMissingException extends RuntimeException {

  private final String certDir;
  private final List<String> problems;

  public ServingTlsMissingException(String certDir, List<String> problems) {
    super("serving certificate not usable in " + certDir + ": " + String.join("; ", problems));
    this.certDir = certDir;
    this.problems = List.copyOf(problems);
  }

  public String certDir() {
    return certDir;
  }

  public List<String> problems() {
    return problems;
  }
}
