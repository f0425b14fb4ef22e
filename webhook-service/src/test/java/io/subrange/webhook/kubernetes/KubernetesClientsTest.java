package io.subrange.webhook.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.utils.TokenRefreshInterceptor;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The API clients subrange builds: a kubeconfig that authenticates by client certificate is not
 * read again before every request (fabric8's token refresh would), and watch events reach their
 * handlers on the client's one event thread.
 */
@EnableKubernetesMockClient(crud = true)
class KubernetesClientsTest {

  /** Set by the mock server extension: a fake API server that keeps what is written to it. */
  KubernetesClient mockClient;

  @TempDir
  Path dir;
  private String previousKubeconfig;

  @BeforeEach
  void keepKubeconfigProperty() {
    previousKubeconfig = System.getProperty(Config.KUBERNETES_KUBECONFIG_FILE);
  }

  @AfterEach
  void restoreKubeconfigProperty() {
    if (previousKubeconfig == null) {
      System.clearProperty(Config.KUBERNETES_KUBECONFIG_FILE);
    } else {
      System.setProperty(Config.KUBERNETES_KUBECONFIG_FILE, previousKubeconfig);
    }
  }

  /**
   * fabric8's token interceptor, a minute after its client was made (the first refresh is due
   * then): with the Config as fabric8 makes it, it reads the kubeconfig again before the request
   * (the token written since shows), and again before every later one, since no refresh finds a
   * token; with subrange's copy, it reads nothing.
   */
  @Test
  void aCertificateKubeconfigIsNotReadAgainBeforeEachRequest() throws Exception {
    Path kubeconfig = certificateKubeconfig();
    Config asFabric8MakesIt = Config.autoConfigure(null);
    Config ours = KubernetesClients.withoutFruitlessRefresh(asFabric8MakesIt);
    addTokenTo(kubeconfig);

    assertThat(authorizationBeforeARequest(asFabric8MakesIt)).as("fabric8 alone reads the kubeconfig again")
        .isEqualTo("Bearer written-later");
    assertThat(authorizationBeforeARequest(ours)).as("subrange's copy reads nothing").isEqualTo("none");
  }

  /** The Authorization header fabric8's token interceptor sets on a request, its refresh due. */
  private static String authorizationBeforeARequest(Config config) {
    Map<String, String> headers = new HashMap<>();
    BasicBuilder builder = new BasicBuilder() {
      @Override
      public BasicBuilder uri(URI uri) {
        return this;
      }

      @Override
      public BasicBuilder header(String key, String value) {
        headers.put(key, value);
        return this;
      }

      @Override
      public BasicBuilder setHeader(String key, String value) {
        headers.put(key, value);
        return this;
      }
    };
    new TokenRefreshInterceptor(config, null, Instant.now().minus(Duration.ofMinutes(2))).before(builder, null, null);
    return headers.getOrDefault(TokenRefreshInterceptor.AUTHORIZATION, "none");
  }

  @Test
  void aConfigThatCanHaveATokenIsKeptAsItIs() {
    Config token = new ConfigBuilder().withMasterUrl("https://127.0.0.1:6443").withOauthToken("t")
        .withClientCertData("cert").build();
    Config noCertificate = new ConfigBuilder().withMasterUrl("https://127.0.0.1:6443").build();
    Config user = new ConfigBuilder().withMasterUrl("https://127.0.0.1:6443").withClientCertData("cert")
        .withUsername("admin").withPassword("secret").build();

    assertThat(KubernetesClients.withoutFruitlessRefresh(token)).isSameAs(token);
    assertThat(KubernetesClients.withoutFruitlessRefresh(noCertificate)).isSameAs(noCertificate);
    assertThat(KubernetesClients.withoutFruitlessRefresh(user)).isSameAs(user);
  }

  @Test
  void watchEventsReachTheirHandlersOnTheClientsOneEventThread() {
    try (KubernetesClient client = KubernetesClients.build(mockClient.getConfiguration())) {
      Set<String> threads = threadsThatHandleTwentyAdds(client, "c");
      assertThat(threads).hasSize(1);
      assertThat(threads.iterator().next()).startsWith("subrange-events-");
    }
  }

  /**
   * A client for handlers that never block decodes and handles its watch events on the I/O
   * thread that read them: no event thread to wake.
   */
  @Test
  void handlersThatNeverBlockRunOnTheIoThread() {
    try (KubernetesClient client = KubernetesClients.forHandlersThatNeverBlock(mockClient.getConfiguration())) {
      assertThat(threadsThatHandleTwentyAdds(client, "io"))
          .isNotEmpty().allSatisfy(name -> assertThat(name).startsWith("vert.x-eventloop"));
    }
  }

  /**
   * Creates twenty ConfigMaps named {@code prefix0..19} while an informer of {@code client} watches;
   * the names of the threads its handler ran on, for every event it got.
   */
  private Set<String> threadsThatHandleTwentyAdds(KubernetesClient client, String prefix) {
    Set<String> threads = ConcurrentHashMap.newKeySet();
    Set<String> seen = ConcurrentHashMap.newKeySet();
    SharedIndexInformer<ConfigMap> informer = client.configMaps().inNamespace("default").runnableInformer(0);
    informer.addEventHandler(new ResourceEventHandler<>() {
      @Override
      public void onAdd(ConfigMap object) {
        threads.add(Thread.currentThread().getName());
        seen.add(object.getMetadata().getName());
      }

      @Override
      public void onUpdate(ConfigMap before, ConfigMap after) {
        threads.add(Thread.currentThread().getName());
      }

      @Override
      public void onDelete(ConfigMap object, boolean finalStateUnknown) {
        threads.add(Thread.currentThread().getName());
      }
    });
    informer.start().toCompletableFuture().join();
    for (int i = 0; i < 20; i++) {
      mockClient.configMaps().inNamespace("default")
          .resource(new ConfigMapBuilder().withNewMetadata().withName(prefix + i).endMetadata().build()).create();
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> seen.size() == 20);
    informer.stop();
    return threads;
  }

  /** A kubeconfig whose user has a client certificate and key, no token. */
  private Path certificateKubeconfig() throws Exception {
    Path key = dir.resolve("client.key");
    Path cert = dir.resolve("client.crt");
    Process openssl = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
        key.toString(), "-out", cert.toString(), "-days", "1", "-subj", "/CN=subrange-test")
        .redirectErrorStream(true).start();
    openssl.getInputStream().readAllBytes();
    assertThat(openssl.waitFor(60, TimeUnit.SECONDS) && openssl.exitValue() == 0).as("openssl made a key pair").isTrue();
    Path kubeconfig = dir.resolve("kubeconfig");
    Files.writeString(kubeconfig, kubeconfig(cert, key, ""));
    System.setProperty(Config.KUBERNETES_KUBECONFIG_FILE, kubeconfig.toString());
    return kubeconfig;
  }

  private void addTokenTo(Path kubeconfig) throws Exception {
    Files.writeString(kubeconfig, kubeconfig(dir.resolve("client.crt"), dir.resolve("client.key"),
        "    token: written-later\n"));
  }

  private String kubeconfig(Path cert, Path key, String token) {
    return "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
        + "clusters:\n- name: test\n  cluster:\n    server: https://127.0.0.1:6443\n"
        + "contexts:\n- name: test\n  context:\n    cluster: test\n    user: test\n    namespace: default\n"
        + "users:\n- name: test\n  user:\n    client-certificate: " + cert + "\n    client-key: " + key + "\n" + token;
  }
}
