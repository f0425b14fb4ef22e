package io.subrange.webhook.kubernetes;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.internal.SSLUtils;
import io.fabric8.kubernetes.client.vertx.VertxHttpClientFactory;
import io.vertx.core.net.KeyCertOptions;
import io.vertx.core.net.OpenSSLEngineOptions;
import io.vertx.core.net.TrustOptions;
import io.vertx.ext.web.client.WebClientOptions;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.KeyManager;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509KeyManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Clients for the API server whose TLS goes through BoringSSL, as the webhook's own serving does
 * (see {@code TlsEngineReport}). fabric8's Vert.x client builds a JDK TLS context; every shard
 * write, its answer and every watch event pass through it, and the JDK's AES-GCM without C2 was
 * a large part of the reconciler's CPU. The certificates and trust are fabric8's own, from the
 * same {@link Config}; when netty-tcnative is not there, or anything about it fails, the client
 * keeps fabric8's JDK engine.
 */
public final class KubernetesClients {

  private static final Logger log = LoggerFactory.getLogger(KubernetesClients.class);
  private static final AtomicBoolean told = new AtomicBoolean();

  private KubernetesClients() {
  }

  /** A client for {@code config}. */
  public static KubernetesClient build(Config config) {
    return new KubernetesClientBuilder().withConfig(config).withHttpClientFactory(new OpenSslClientFactory(config))
        .build();
  }

  /** A client configured as fabric8 finds it (the pod's ServiceAccount, KUBECONFIG, ~/.kube/config). */
  public static KubernetesClient fromEnvironment() {
    return build(Config.autoConfigure(null));
  }

  /** fabric8's Vert.x client factory, with OpenSSL in place of its JDK TLS context. */
  static final class OpenSslClientFactory extends VertxHttpClientFactory {

    private final Config config;

    OpenSslClientFactory(Config config) {
      this.config = config;
    }

    @Override
    protected void additionalConfig(WebClientOptions options) {
      if (options.getSslEngineOptions() == null || !OpenSSLEngineOptions.isAvailable()) {
        return;
      }
      try {
        TrustManager[] trust = SSLUtils.trustManagers(config);
        KeyManager[] keys = SSLUtils.keyManagers(config);
        if (trust != null && trust.length > 0) {
          options.setTrustOptions(TrustOptions.wrap(trust[0]));
        }
        Optional<X509KeyManager> key = keys == null ? Optional.empty() : Arrays.stream(keys)
            .filter(X509KeyManager.class::isInstance).map(X509KeyManager.class::cast).findFirst();
        key.ifPresent(k -> options.setKeyCertOptions(KeyCertOptions.wrap(k)));
        options.setSslEngineOptions(new OpenSSLEngineOptions());
        if (told.compareAndSet(false, true)) {
          log.info("API server client TLS: BoringSSL through netty-tcnative");
        }
      } catch (Exception e) {
        log.warn("The API server client keeps the JDK's TLS: {}", e.toString());
      }
    }
  }
}
