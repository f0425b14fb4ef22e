package io.subrange.webhook.tls;

import io.netty.handler.ssl.OpenSsl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * Says at start which TLS engine serves admissions. Netty takes BoringSSL (netty-tcnative) when
 * its native library loads, and the JDK's engine otherwise; the JDK's AES-GCM without C2 costs
 * several times more CPU per request, so an operator should know which one runs.
 */
@Component
class TlsEngineReport {

  private static final Logger log = LoggerFactory.getLogger(TlsEngineReport.class);

  @EventListener(ApplicationReadyEvent.class)
  void report() {
    if (OpenSsl.isAvailable()) {
      log.info("TLS engine: {} through netty-tcnative", OpenSsl.versionString());
    } else {
      log.warn("TLS engine: the JDK's (netty-tcnative did not load: {}); serving works, at a higher CPU cost",
          OpenSsl.unavailabilityCause() == null ? "unknown" : OpenSsl.unavailabilityCause().toString());
    }
  }
}
