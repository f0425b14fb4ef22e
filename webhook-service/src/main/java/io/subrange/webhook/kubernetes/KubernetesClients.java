package io.subrange.webhook.kubernetes;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.OAuthTokenProvider;
import io.fabric8.kubernetes.client.internal.SSLUtils;
import io.fabric8.kubernetes.client.utils.Utils;
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
  /** A client that authenticates by certificate has no token, now or after any refresh. */
  private static final OAuthTokenProvider NO_TOKEN = () -> null;

  private KubernetesClients() {
  }

  /** A client for {@code config}. */
  public static KubernetesClient build(Config config) {
    return build(config, new EventThread());
  }

  /**
   * A client for {@code config} whose watch events are decoded and handled on the I/O thread that
   * read them ({@link OnTheIoThread}): only for informers whose handlers never block.
   */
  public static KubernetesClient forHandlersThatNeverBlock(Config config) {
    return build(config, new OnTheIoThread());
  }

  private static KubernetesClient build(Config config, KubernetesClientBuilder.ExecutorSupplier tasks) {
    Config effective = withoutFruitlessRefresh(config);
    return new KubernetesClientBuilder().withConfig(effective)
        .withHttpClientFactory(new OpenSslClientFactory(effective))
        .withTaskExecutorSupplier(tasks)
        .withKubernetesSerialization(new ClientSerialization())
        .build();
  }

  /**
   * {@code config}, or where it can never be given a token, a copy that fabric8 does not read
   * again before every request.
   *
   * <p>fabric8's token interceptor refreshes an automatically configured Config at most once a
   * minute, but counts the minute only from a refresh that found a token. With a kubeconfig that
   * authenticates by client certificate there is none to find, so every request re-read and
   * parsed the kubeconfig and its certificate files (in the load harness, most of the store
   * thread's system calls). The copy says, through a token provider, that there is no token: the
   * interceptor then asks the provider, not the files. A Config with a token (a pod's
   * ServiceAccount, an exec plugin), a token provider, an auth provider or a user name, or
   * without a client certificate, is returned as it is.
   */
  static Config withoutFruitlessRefresh(Config config) {
    boolean certificate = Utils.isNotNullOrEmpty(config.getClientCertFile())
        || Utils.isNotNullOrEmpty(config.getClientCertData());
    boolean couldGetToken = Utils.isNotNullOrEmpty(config.getOauthToken())
        || Utils.isNotNullOrEmpty(config.getAutoOAuthToken()) || config.getOauthTokenProvider() != null
        || config.getAuthProvider() != null || Utils.isNotNullOrEmpty(config.getUsername());
    if (!certificate || couldGetToken) {
      return config;
    }
    Config copy = new ConfigBuilder(config).build();
    copy.setOauthTokenProvider(NO_TOKEN);
    return copy;
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
