package io.subrange.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class KubeletProbesTest {

  private HttpServer server;
  /** Requests by path, the client ports they came from, and the Connection header of the last one. */
  private final Map<String, AtomicInteger> requests = new ConcurrentHashMap<>();
  private final List<Integer> clientPorts = new CopyOnWriteArrayList<>();
  private final AtomicReference<String> lastConnectionHeader = new AtomicReference<>();
  private final AtomicReference<Headers> lastHeaders = new AtomicReference<>();
  /** What /metrics answers, its status, and whether with a Content-Length (else chunked). */
  private volatile String metrics = "";
  private volatile int metricsStatus = 200;
  private volatile boolean metricsChunked;
  private volatile int livezStatus = 200;

  @BeforeEach
  void serve() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", exchange -> {
      String path = exchange.getRequestURI().getPath();
      requests.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
      lastConnectionHeader.set(exchange.getRequestHeaders().getFirst("Connection"));
      lastHeaders.set(exchange.getRequestHeaders());
      clientPorts.add(exchange.getRemoteAddress().getPort());
      if (path.equals("/metrics")) {
        byte[] text = metrics.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(metricsStatus, metricsChunked ? 0 : text.length);
        exchange.getResponseBody().write(text);
        exchange.close();
        return;
      }
      int status = path.equals("/livez") ? livezStatus : 200;
      byte[] body = "ok".getBytes();
      exchange.sendResponseHeaders(status, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    server.start();
  }

  @AfterEach
  void stop() {
    server.stop(0);
  }

  /** The manifests' probes, as the harness runs them: what the kubelet would call, how often. */
  @Test
  void readsTheProbesTheManifestsDeclare() {
    List<KubeletProbes.HttpProbe> webhook = KubeletProbes.declared(RepoLayout.locate(), "deployment.yaml");
    assertThat(webhook).extracting(KubeletProbes.HttpProbe::kind)
        .containsExactly("startup", "liveness", "readiness", "scrape");
    assertThat(webhook.get(0)).isEqualTo(new KubeletProbes.HttpProbe("startup", "/livez", "https", true,
        Duration.ofSeconds(2), Duration.ofSeconds(1)));
    assertThat(webhook.get(2).path()).isEqualTo("/readyz");
    assertThat(webhook.get(2).period()).isEqualTo(Duration.ofSeconds(5));

    List<KubeletProbes.HttpProbe> reconciler = KubeletProbes.declared(RepoLayout.locate(), "reconciler.yaml");
    assertThat(reconciler).filteredOn(p -> !p.kind().equals("scrape"))
        .allSatisfy(p -> {
          assertThat(p.portName()).isEqualTo("http");
          assertThat(p.tls()).as("the reconciler serves plain HTTP").isFalse();
        });
    assertThat(reconciler.get(3)).isEqualTo(new KubeletProbes.HttpProbe("scrape", "/metrics", "metrics", false,
        KubeletProbes.SCRAPE_INTERVAL, Duration.ofSeconds(10)));
  }

  /** The port named metrics is the management port; a process without one is not scraped. */
  @Test
  void podsMapTheManifestsPortNames() {
    List<KubeletProbes.HttpProbe> webhook = KubeletProbes.declared(RepoLayout.locate(), "deployment.yaml");
    KubeletProbes.Pod replica = KubeletProbes.Pod.of("replica", 8443, 8081, null, webhook);
    assertThat(replica.ports()).containsExactlyInAnyOrderEntriesOf(Map.of("https", 8443, "metrics", 8081));
    assertThat(replica.probes()).isEqualTo(webhook);

    KubeletProbes.Pod noMetrics = KubeletProbes.Pod.of("no-op", 9443, null, null, webhook);
    assertThat(noMetrics.ports()).containsExactlyEntriesOf(Map.of("https", 9443));
    assertThat(noMetrics.probes()).extracting(KubeletProbes.HttpProbe::kind)
        .containsExactly("startup", "liveness", "readiness");
  }

  /** Liveness and readiness wait for the startup probe; each probe is a new connection the kubelet closes. */
  @Test
  void probesAfterStartupOnNewConnections() {
    livezStatus = 503;
    List<KubeletProbes.HttpProbe> probes = List.of(
        probe("startup", "/livez"), probe("liveness", "/livez"), probe("readiness", "/readyz"));
    try (KubeletProbes kubelet = new KubeletProbes()) {
      kubelet.watch(new KubeletProbes.Pod("pod", Map.of("http", server.getAddress().getPort()), null, probes));
      await().atMost(Duration.ofSeconds(5)).until(() -> kubelet.counts().getOrDefault("startup failed", 0L) >= 3);
      assertThat(requests).doesNotContainKey("/readyz");

      livezStatus = 200;
      await().atMost(Duration.ofSeconds(5)).until(() -> kubelet.counts().getOrDefault("readiness ok", 0L) >= 3
          && kubelet.counts().getOrDefault("liveness ok", 0L) >= 3);
      assertThat(kubelet.counts()).containsEntry("startup ok", 1L);
      assertThat(kubelet.counts("pod")).isEqualTo(kubelet.counts());
      assertThat(lastConnectionHeader.get()).isEqualToIgnoringCase("close");
      assertThat(clientPorts).as("a new connection for every probe").doesNotHaveDuplicates().hasSizeGreaterThan(6);

      kubelet.forget("pod");
      Map<String, Long> afterForget = kubelet.counts();
      int readyz = requests.get("/readyz").get();
      sleep(400);
      assertThat(requests.get("/readyz").get()).as("no probes once forgotten").isLessThanOrEqualTo(readyz + 1);
      // A probe in flight when it was forgotten may still finish (and fail, on a slow machine).
      assertThat(kubelet.describeSince(afterForget)).isIn("none", "readiness ok 1", "liveness ok 1",
          "readiness failed 1", "liveness failed 1");
    }
  }

  /** A port nothing listens on is a failure, counted, and the probing goes on. */
  @Test
  void countsFailuresAndGoesOn() {
    int closedPort = Processes.freePort();
    try (KubeletProbes kubelet = new KubeletProbes()) {
      kubelet.watch(new KubeletProbes.Pod("gone", Map.of("http", closedPort), null,
          List.of(probe("liveness", "/livez"))));
      await().atMost(Duration.ofSeconds(5)).until(() -> kubelet.failures() >= 3);
      assertThat(kubelet.counts()).doesNotContainKey("liveness ok");
    }
  }

  /**
   * The harness's reads of /metrics are Prometheus' scrape, byte for byte: no h2c upgrade, which
   * Java's HttpClient asks for and which made the JVMs recompile Netty's request decoding.
   */
  @Test
  void scrapeReadsMetricsAsPrometheusAsks() {
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < 2_000; i++) {
      text.append("subrange_sample_total{n=\"").append(i).append("\"} ").append(i).append("\n");
    }
    metrics = text.toString();
    int port = server.getAddress().getPort();
    for (boolean chunked : new boolean[] {true, false}) {
      metricsChunked = chunked;
      assertThat(KubeletProbes.scrape(port)).as(chunked ? "chunked" : "with a Content-Length").isEqualTo(metrics);
    }
    Headers sent = lastHeaders.get();
    assertThat(sent.getFirst("User-Agent")).startsWith("Prometheus/");
    assertThat(sent.getFirst("Accept")).startsWith("application/openmetrics-text");
    assertThat(sent.getFirst("Connection")).isEqualToIgnoringCase("close");
    assertThat(sent).doesNotContainKeys("Upgrade", "Http2-settings", "Content-length");

    metricsStatus = 503;
    assertThatThrownBy(() -> KubeletProbes.scrape(port)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("answered 503");
    assertThatThrownBy(() -> KubeletProbes.scrape(Processes.freePort())).isInstanceOf(UncheckedIOException.class);
  }

  /** Answers cut short are errors, not a shorter text. */
  @Test
  void answersCutShortAreErrors() {
    byte[] whole = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc".getBytes(StandardCharsets.US_ASCII);
    assertThatThrownBy(() -> KubeletProbes.Answer.of(whole)).hasMessageContaining("7 bytes short");
    byte[] chunk = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\nabc".getBytes(StandardCharsets.US_ASCII);
    assertThatThrownBy(() -> KubeletProbes.Answer.of(chunk)).hasMessageContaining("inside a chunk");
    byte[] headers = "HTTP/1.1 200 OK\r\nContent-Le".getBytes(StandardCharsets.US_ASCII);
    assertThatThrownBy(() -> KubeletProbes.Answer.of(headers)).hasMessageContaining("inside its headers");
  }

  private static KubeletProbes.HttpProbe probe(String kind, String path) {
    return new KubeletProbes.HttpProbe(kind, path, "http", false, Duration.ofMillis(100), Duration.ofSeconds(1));
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
