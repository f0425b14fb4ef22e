package io.subrange.webhook.admission;

import static io.subrange.webhook.admission.AdmissionReviews.review;
import static io.subrange.webhook.admission.AdmissionReviews.service;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.mockito.ArgumentMatchers.argThat;
import static org.mockito.Mockito.doReturn;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.subrange.allocator.store.AllocationStore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.MediaType;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.bean.override.mockito.MockitoSpyBean;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * An admission whose caller gives up first (the API server at the webhook's timeoutSeconds) is
 * counted as abandoned, so a store budget too close to the timeout shows in the metrics, and
 * the next request is served as usual.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "server.ssl.enabled=false",
    "management.server.port=0",
    "subrange.service.cidrs=10.0.0.0/24"})
@DirtiesContext
class AbandonedAdmissionTest {

  @Autowired
  WebTestClient client;

  @Autowired
  MeterRegistry registry;

  @MockitoSpyBean
  AllocationStore store;

  @Test
  void aRequestTheCallerGaveUpOnIsCountedAsAbandoned() {
    // The store never answers for this one Service, as if its write could not finish.
    doReturn(new CompletableFuture<>()).when(store).reserve(argThat(r -> r != null
        && "stuck".equals(r.holder().name())));
    admitNext("warm-up");  // so the held request reaches the store well before the client gives up
    WebTestClient impatient = client.mutate().responseTimeout(Duration.ofSeconds(2)).build();
    assertThatThrownBy(() -> impatient.post().uri("/mutate").contentType(MediaType.APPLICATION_JSON)
        .bodyValue(review("CREATE", service("default", "stuck", "ClusterIP", null), false).toString())
        .exchange()).hasMessageContaining("Timeout");

    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(abandoned()).isEqualTo(1));
    admitNext("next");
    assertThat(abandoned()).as("answered requests are not abandoned").isEqualTo(1);
  }

  private void admitNext(String name) {
    client.post().uri("/mutate").contentType(MediaType.APPLICATION_JSON)
        .bodyValue(review("CREATE", service("default", name, "ClusterIP", null), false).toString())
        .exchange().expectStatus().isOk().expectBody().jsonPath("$.response.allowed").isEqualTo(true);
  }

  private double abandoned() {
    Counter counter = registry.find("subrange.admission.requests").tag("result", "abandoned")
        .tag("webhook", "mutate").counter();
    return counter == null ? 0 : counter.count();
  }
}
