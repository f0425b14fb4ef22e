package io.subrange.webhook.tls;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Turns {@link ServingTlsMissingException} into Spring's "APPLICATION FAILED TO START" report. */
public class ServingTlsFailureAnalyzer extends AbstractFailureAnalyzer<ServingTlsMissingException> {

  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, ServingTlsMissingException cause) {
    return new FailureAnalysis(
        "TLS is enabled but the serving certificate in subrange.tls.cert-dir=" + cause.certDir()
            + " is not usable:\n  - " + String.join("\n  - ", cause.problems()),
        "Mount a kubernetes.io/tls Secret (tls.crt, tls.key) at " + cause.certDir()
            + ", point SUBRANGE_TLS_CERT_DIR at a folder made by certs/make-certs.sh,"
            + " or set SERVER_SSL_ENABLED=false to serve plain HTTP.",
        cause);
  }
}
