package io.subrange.webhook.tls;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Serves TLS from the PEM pair in {@code subrange.tls.cert-dir} ({@code tls.crt}, {@code tls.key},
 * the layout of a {@code kubernetes.io/tls} Secret) through a Spring SSL bundle that is re-read
 * when the files change.
 *
 * <p>The bundle is defined here rather than in application.yaml because Spring loads every
 * configured bundle at startup: with {@code server.ssl.enabled=false} no files are needed, and
 * when TLS is on but the files are missing, startup fails with {@link ServingTlsMissingException}
 * saying what to mount, not with a bean-creation stack trace. Anyone who configures
 * {@code server.ssl.bundle} or {@code server.ssl.certificate} themselves keeps their own setup.
 */
public class ServingTlsEnvironment implements EnvironmentPostProcessor {

  static final String BUNDLE = "subrange-serving";
  static final String DEFAULT_CERT_DIR = "/etc/subrange/tls";

  @Override
  public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
    if (!environment.getProperty("server.ssl.enabled", Boolean.class, true)
        || environment.containsProperty("server.ssl.bundle")
        || environment.containsProperty("server.ssl.certificate")) {
      return;
    }
    String dir = environment.getProperty("subrange.tls.cert-dir", DEFAULT_CERT_DIR);
    Path certificate = Path.of(dir, "tls.crt");
    Path privateKey = Path.of(dir, "tls.key");
    List<String> problems = new ArrayList<>();
    check(certificate, "CERTIFICATE", problems);
    check(privateKey, "PRIVATE KEY", problems);
    String clientCa = environment.getProperty("subrange.tls.client-ca-file", "");
    if (!clientCa.isEmpty()) {
      check(Path.of(clientCa), "CERTIFICATE", problems);
    }
    if (!problems.isEmpty()) {
      throw new ServingTlsMissingException(dir, problems);
    }
    String prefix = "spring.ssl.bundle.pem." + BUNDLE + ".";
    Map<String, Object> properties = new HashMap<>(Map.of(
        "server.ssl.bundle", BUNDLE,
        prefix + "reload-on-update", "true",
        prefix + "keystore.certificate", "file:" + certificate.toAbsolutePath(),
        prefix + "keystore.private-key", "file:" + privateKey.toAbsolutePath()));
    if (!clientCa.isEmpty()) {
      // mTLS: only callers with a certificate from this CA (the API server's webhook client
      // certificate, from its --admission-control-config-file kubeConfigFile) get an answer.
      properties.put(prefix + "truststore.certificate", "file:" + Path.of(clientCa).toAbsolutePath());
      properties.put("server.ssl.client-auth", "need");
    }
    environment.getPropertySources().addLast(new MapPropertySource("subrangeServingTls", properties));
  }

  private static void check(Path file, String pemType, List<String> problems) {
    if (!Files.isReadable(file)) {
      problems.add(file + " is missing or unreadable");
      return;
    }
    try {
      String text = Files.readString(file);
      if (!text.contains("-----BEGIN ") || !text.contains(pemType + "-----")) {
        problems.add(file + " is not a PEM " + pemType.toLowerCase(Locale.ROOT));
      }
    } catch (IOException e) {
      problems.add(file + " could not be read: " + e.getMessage());
    }
  }
}
