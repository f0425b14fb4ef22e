package io.subrange.webhook.admission;

import static io.subrange.webhook.admission.AdmissionReviews.review;
import static io.subrange.webhook.admission.AdmissionReviews.service;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.subrange.webhook.lifecycle.ShutdownDrain;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The admission routes run ahead of WebFlux, so ShutdownDrain's filter does not see them: they
 * must close their connections during the drain themselves (kube-apiserver reuses connections,
 * and a call written on one the server closes under it fails the create).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "server.ssl.enabled=false",
    "management.server.port=0",
    "subrange.service.cidrs=10.0.0.0/24",
    "subrange.shutdown.drain=3s"})
@DirtiesContext
class AdmissionDrainTest {

  @Autowired
  WebTestClient client;

  @Autowired
  ShutdownDrain drain;

  @Test
  void duringTheDrainAdmissionsAreAnsweredAndCloseTheirConnection() {
    EntityExchangeResult<JsonNode> before = mutate("before-drain");
    assertThat(before.getResponseHeaders().getConnection()).doesNotContain("close");

    CompletableFuture<Void> stopping = CompletableFuture.runAsync(drain::stop);
    await().atMost(Duration.ofSeconds(2)).until(drain::draining);
    EntityExchangeResult<JsonNode> during = mutate("during-drain");
    assertThat(during.getResponseBody().path("response").path("allowed").asBoolean()).isTrue();
    assertThat(during.getResponseHeaders().getFirst(HttpHeaders.CONNECTION)).isEqualTo("close");
    stopping.join();
  }

  private EntityExchangeResult<JsonNode> mutate(String name) {
    return client.post().uri("/mutate").contentType(MediaType.APPLICATION_JSON)
        .bodyValue(review("CREATE", service("default", name, "ClusterIP", null), false).toString())
        .exchange().expectStatus().isOk().expectBody(JsonNode.class).returnResult();
  }
}
