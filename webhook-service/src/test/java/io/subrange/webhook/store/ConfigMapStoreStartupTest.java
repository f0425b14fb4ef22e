package io.subrange.webhook.store;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.absent;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static com.github.tomakehurst.wiremock.stubbing.Scenario.STARTED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.tomakehurst.wiremock.WireMockServer;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.subrange.allocator.band.ThreadLocalRandomGenerator;
import io.subrange.allocator.port.PortRange;
import io.subrange.allocator.store.AllocationEngine;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The store's first list at start, against an API server (WireMock) that answers slower than the
 * store's request timeout, or refuses: a slow list is tried again until the startup timeout, a
 * refusal fails at once. A real API server does not slow down or refuse on demand.
 */
class ConfigMapStoreStartupTest {

  private static final String NAMESPACE = "subrange-state";
  private static final String CONFIGMAPS = "/api/v1/namespaces/" + NAMESPACE + "/configmaps";
  private static final String EMPTY_LIST =
      "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMapList\",\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[]}";
  /** The store's budget; each of its requests gives up after a quarter of it (at least 250 ms). */
  private static final Duration BUDGET = Duration.ofSeconds(1);

  private WireMockServer apiServer;
  private KubernetesClient shared;
  private ConfigMapAllocationStore store;

  @BeforeEach
  void apiServer() {
    apiServer = new WireMockServer(wireMockConfig().dynamicPort());
    apiServer.start();
    // A watch that ends at once, empty, a second later: the informer keeps watching.
    apiServer.stubFor(get(urlPathEqualTo(CONFIGMAPS)).withQueryParam("watch", equalTo("true")).atPriority(1)
        .willReturn(aResponse().withStatus(200).withFixedDelay(1000).withBody("")));
    shared = new KubernetesClientBuilder().withConfig(new ConfigBuilder().withMasterUrl(apiServer.baseUrl())
        .withNamespace(NAMESPACE).withTrustCerts(true).build()).build();
  }

  @AfterEach
  void close() {
    if (store != null) {
      store.close();
    }
    shared.close();
    apiServer.stop();
  }

  private ConfigMapAllocationStore store() {
    AllocationEngine engine = new AllocationEngine(PortRange.parse("30000-32767"),
        ThreadLocalRandomGenerator.INSTANCE);
    store = new ConfigMapAllocationStore(engine, ConfigMapAllocationStore.clientFor(shared, BUDGET), NAMESPACE,
        BUDGET, StoreMetrics.unregistered());
    return store;
  }

  private void listAnswers(String state, String next, int status, int delayMillis, String body) {
    apiServer.stubFor(get(urlPathEqualTo(CONFIGMAPS)).withQueryParam("watch", absent()).atPriority(5)
        .inScenario("list").whenScenarioStateIs(state).willSetStateTo(next)
        .willReturn(aResponse().withStatus(status).withFixedDelay(delayMillis)
            .withHeader("Content-Type", "application/json").withBody(body)));
  }

  @Test
  void aListSlowerThanTheRequestTimeoutIsTriedAgainUntilItAnswers() {
    listAnswers(STARTED, "second", 200, 2000, EMPTY_LIST);
    listAnswers("second", "third", 200, 2000, EMPTY_LIST);
    listAnswers("third", "third", 200, 0, EMPTY_LIST);

    store().start(Duration.ofSeconds(20));

    assertThat(apiServer.countRequestsMatching(getRequestedFor(urlPathEqualTo(CONFIGMAPS))
        .withQueryParam("watch", absent()).build()).getCount()).as("two slow lists, then one answered").isEqualTo(3);
    assertThat(store.rangesToRebuild()).as("nothing stored yet: every range waits for the reconciler").isNotEmpty();
  }

  @Test
  void aListThatNeverAnswersInTimeFailsAtTheStartupTimeoutSayingHowOftenItTried() {
    listAnswers(STARTED, STARTED, 200, 2000, EMPTY_LIST);

    long started = System.nanoTime();
    assertThatThrownBy(() -> store().start(Duration.ofSeconds(3)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("could not list subrange's ConfigMaps in namespace " + NAMESPACE)
        .hasMessageContaining("attempts within 3 s");
    assertThat((System.nanoTime() - started) / 1_000_000).as("ms until it gave up").isBetween(2_000L, 6_000L);
  }

  @Test
  void aRefusalFailsAtOnce() {
    listAnswers(STARTED, STARTED, 403, 0, "{\"apiVersion\":\"v1\",\"kind\":\"Status\",\"status\":\"Failure\","
        + "\"message\":\"configmaps is forbidden\",\"reason\":\"Forbidden\",\"code\":403}");

    long started = System.nanoTime();
    assertThatThrownBy(() -> store().start(Duration.ofSeconds(20)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("(1 attempt within 20 s)")
        .hasMessageContaining("may list, watch and update ConfigMaps");
    assertThat((System.nanoTime() - started) / 1_000_000).as("ms until it gave up").isLessThan(5_000L);
  }
}
