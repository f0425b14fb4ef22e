package io.subrange.e2e;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.extension.requestfilter.RequestFilterAction;
import com.github.tomakehurst.wiremock.extension.requestfilter.StubRequestFilterV2;
import com.github.tomakehurst.wiremock.http.Fault;
import com.github.tomakehurst.wiremock.http.Request;
import com.github.tomakehurst.wiremock.http.RequestMethod;
import com.github.tomakehurst.wiremock.stubbing.ServeEvent;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.subrange.testing.ControlPlane;
import io.subrange.testing.RepoLayout;
import io.subrange.testing.ReplicatedCluster;
import io.subrange.testing.ServiceLoad;
import io.subrange.testing.ServiceValues;
import io.subrange.testing.SubrangeServer;
import java.time.Duration;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 5 (d): WireMock between subrange and the API server, injecting into subrange's
 * ConfigMap writes what a real API server does not do on demand: 409 storms, 500s, slow answers
 * (the write lands, the client has given up) and cut connections. Two webhook replicas talk
 * through it; the reconciler talks to the API server directly. Every create must be answered
 * within the webhook's timeout, either with a durable allocation or with subrange's clear 503;
 * no value may be given twice and none that was given may be missing from the ConfigMaps.
 */
class StoreFaultsIT {

  private static final int CLIENTS = 8;
  private static final int PER_PHASE = 60;
  /**
   * The manifests' webhook timeoutSeconds, as the bucket boundary subrange's admission histogram
   * prints for it. The API server enforces that limit itself (a late answer fails the request,
   * which the load counts as a retry); the histogram shows subrange kept it on its own side.
   */
  private static final String WEBHOOK_TIMEOUT_BUCKET = "5.0";
  /**
   * What a client may wait for one create in all: far above the webhook's timeout, because on two
   * shared cores the API server and the client queue too. Only a hang goes past it; the timeout
   * itself is checked where subrange measures it.
   */
  private static final long HANG_LIMIT_MILLIS = 20_000;

  private static ControlPlane plane;
  private static WireMockServer proxy;
  private static ReplicatedCluster cluster;
  private static final FaultPlan faults = new FaultPlan();

  @BeforeAll
  static void start() {
    RepoLayout repo = RepoLayout.locate();
    Path workDir = repo.root().resolve("test/target/e2e-faults");
    plane = ControlPlane.start(repo, ReplicatedE2e.APISERVER_SERVICE_CIDRS, ControlPlane.FEATURE_GATES, workDir);
    proxy = new WireMockServer(wireMockConfig().dynamicPort().trustAllProxyTargets(true).containerThreads(64)
        .extensions(faults));
    proxy.start();
    // A watch through WireMock would never stream: it ends at once, empty, and the replicas learn
    // of others' writes from their conflicts instead.
    proxy.stubFor(any(anyUrl()).withQueryParam("watch", equalTo("true")).atPriority(1)
        .willReturn(aResponse().withStatus(200).withFixedDelay(1000).withBody("")));
    proxy.stubFor(any(anyUrl()).atPriority(10)
        .willReturn(aResponse().proxiedFrom("https://127.0.0.1:" + plane.port())));
    Path throughProxy = plane.writeTokenKubeconfig(workDir.resolve("kubeconfig-proxied"),
        "http://127.0.0.1:" + proxy.port());
    // Every create writes here (no values reserved ahead): the faults are in the writes, and a
    // create answered from a reservation made before a fault would not meet it. HighAvailabilityIT
    // runs the replicas as manifests/ do, with reservations.
    cluster = ReplicatedCluster.start(repo, plane, workDir, ReplicatedCluster.Settings.defaults().withWebhooks(2)
        .quick().withWebhookKubeconfig(throughProxy).withReserveAhead(0));
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
    if (proxy != null) {
      proxy.stop();
    }
    if (plane != null) {
      plane.close();
    }
  }

  @Test
  void everyAnswerIsADurableAllocationOrAClear503WithinTheTimeout() {
    ControlPlane.ensureNamespace(cluster.client(), "faults");
    Map<String, ServiceLoad.Report> phases = new LinkedHashMap<>();
    try (KubernetesClient load = ServiceLoad.concurrentClient(cluster.client().getConfiguration(), CLIENTS)) {
      phases.put("no faults", run(load, "calm", Trouble.NONE, 0));
      phases.put("409 on 50% of writes", run(load, "conflict", Trouble.CONFLICT, 0.5));
      phases.put("500 on 30% of writes", run(load, "error", Trouble.ERROR, 0.3));
      phases.put("30% of writes answered after 2.5 s (they land)", run(load, "slow", Trouble.SLOW, 0.3));
      phases.put("connection cut on 30% of writes", run(load, "cut", Trouble.CUT, 0.3));
      phases.put("409 on every write (a storm)", run(load, "storm", Trouble.CONFLICT, 1.0));
      phases.put("after the faults", run(load, "after", Trouble.NONE, 0));
    }
    phases.forEach((phase, report) -> System.out.println("faults (d) " + phase + ": " + report.summary()));

    for (Map.Entry<String, ServiceLoad.Report> phase : phases.entrySet()) {
      // The load retries only when the API server got no answer from the webhook (a timeout
      // among them); no replica is killed here, so any retry is an answer that came too late.
      assertThat(phase.getValue().retries()).as("%s: every admission answered within its timeout", phase.getKey())
          .isZero();
      for (ServiceLoad.Outcome outcome : phase.getValue().outcomes()) {
        assertThat(outcome.nanos() / 1_000_000).as("%s: %s answered, not hung", phase.getKey(), outcome.name())
            .isLessThanOrEqualTo(HANG_LIMIT_MILLIS);
        if (!outcome.created()) {
          assertThat(outcome.error()).as("%s: %s was refused by subrange, clearly", phase.getKey(), outcome.name())
              .contains("subrange could not store").contains("nothing was allocated");
        }
      }
    }
    assertThat(phases.get("no faults").failures()).isEmpty();
    assertThat(phases.get("after the faults").failures()).as("back to normal").isEmpty();
    assertThat(phases.get("409 on every write (a storm)").failures()).as("a storm is answered 503").isNotEmpty();
    assertThat(phases.get("409 on 50% of writes").created()).as("retries get through partial conflicts")
        .isGreaterThan(PER_PHASE / 2);

    assertEveryAdmissionAnsweredWithinTheWebhookTimeout();
    assertNoDuplicatesAndNothingLost();
    assertThat(cluster.reconciler().metric("subrange_reconciler_repairs_total", Map.of("type", "not_allocated")))
        .as("the reconciler never had to record a value a Service carried: none was lost").isZero();
    assertThat(faults.injected.get()).as("faults were injected").isGreaterThan(50);
  }

  private static ServiceLoad.Report run(KubernetesClient load, String prefix, Trouble fault, double share) {
    faults.set(fault, share);
    try {
      return ServiceLoad.create(load, "faults", prefix, PER_PHASE, CLIENTS, done -> { });
    } finally {
      faults.set(Trouble.NONE, 0);
    }
  }

  private static void assertEveryAdmissionAnsweredWithinTheWebhookTimeout() {
    double answered = 0;
    for (SubrangeServer replica : cluster.webhooks()) {
      Map<String, String> mutate = Map.of("webhook", "mutate", "kind", "Service");
      double count = replica.metric("subrange_admission_duration_seconds_count", mutate);
      double inTime = replica.metric("subrange_admission_duration_seconds_bucket",
          Map.of("webhook", "mutate", "kind", "Service", "le", WEBHOOK_TIMEOUT_BUCKET));
      assertThat(inTime).as("replica on port %d: Service admissions answered within the webhook timeout",
          replica.port()).isEqualTo(count);
      assertThat(replica.metric("subrange_admission_requests_total", Map.of("result", "abandoned")))
          .as("replica on port %d: admissions the API server gave up on before the answer", replica.port()).isZero();
      answered += count;
    }
    assertThat(answered).as("the replicas answered every create at least once").isGreaterThanOrEqualTo(PER_PHASE * 7);
  }

  private static void assertNoDuplicatesAndNothingLost() {
    assertThat(ServiceValues.duplicates(cluster.client())).as("values on more than one Service").isEmpty();
    assertThat(ServiceValues.unaccounted(cluster.stored(), cluster.client()))
        .as("values Services carry that the ConfigMaps do not hold for them").isEmpty();
  }

  /** What goes wrong with a write: a conflict, a server error, a late answer, a cut connection. */
  enum Trouble { NONE, CONFLICT, ERROR, SLOW, CUT }

  /** Faults on PUTs of subrange's ConfigMaps: a share of them, of one kind at a time. */
  public static final class FaultPlan implements StubRequestFilterV2 {

    private volatile Trouble fault = Trouble.NONE;
    private volatile double share;
    final AtomicInteger injected = new AtomicInteger();  // WireMock filters on many threads

    void set(Trouble fault, double share) {
      this.fault = fault;
      this.share = share;
    }

    @Override
    public String getName() {
      return "subrange-store-faults";
    }

    @Override
    public RequestFilterAction filter(Request request, ServeEvent serveEvent) {
      boolean storeWrite = RequestMethod.PUT.equals(request.getMethod())
          && request.getUrl().startsWith("/api/v1/namespaces/" + ReplicatedCluster.NAMESPACE + "/configmaps/");
      if (!storeWrite || fault == Trouble.NONE || ThreadLocalRandom.current().nextDouble() >= share) {
        return RequestFilterAction.continueWith(request);
      }
      injected.incrementAndGet();
      return switch (fault) {
        case CONFLICT -> RequestFilterAction.stopWith(aResponse().withStatus(409)
            .withBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"Conflict\","
                + "\"message\":\"Operation cannot be fulfilled on configmaps: the object has been modified\","
                + "\"code\":409}").build());
        case ERROR -> RequestFilterAction.stopWith(aResponse().withStatus(500)
            .withBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"etcdserver:"
                + " request timed out\",\"code\":500}").build());
        case CUT -> RequestFilterAction.stopWith(aResponse().withFault(Fault.CONNECTION_RESET_BY_PEER).build());
        case SLOW -> RequestFilterAction.stopWith(aResponse().proxiedFrom("https://127.0.0.1:" + plane.port())
            .withFixedDelay(2500).build());
        case NONE -> RequestFilterAction.continueWith(request);
      };
    }
  }
}
