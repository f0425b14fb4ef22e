package io.subrange.webhook.admission;

import static io.subrange.webhook.admission.AdmissionReviews.admitted;
import static io.subrange.webhook.admission.AdmissionReviews.review;
import static io.subrange.webhook.admission.AdmissionReviews.update;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/** The webhook as the API server calls it, for tests: answers, the objects as stored, denials. */
final class AdmissionClient {

  private final WebTestClient client;

  AdmissionClient(WebTestClient client) {
    this.client = client;
  }

  /** The AdmissionReview answered to {@code review} at {@code path} ("/mutate", "/validate"). */
  JsonNode post(String path, ObjectNode review) {
    return client.post().uri(path).contentType(MediaType.APPLICATION_JSON).bodyValue(review.toString())
        .exchange().expectStatus().isOk().expectBody(JsonNode.class).returnResult().getResponseBody();
  }

  /** Creates {@code object} through /mutate, which must allow it; the object as stored. */
  JsonNode created(ObjectNode object) {
    return allowed(review("CREATE", object, false));
  }

  /** Updates {@code stored} to {@code changed} through /mutate, which must allow it; the object as stored. */
  JsonNode updated(JsonNode stored, JsonNode changed) {
    return allowed(update(stored, changed, false));
  }

  /** The denial of {@code review} by /mutate, checked for its code and the start of its message. */
  JsonNode denied(ObjectNode review, int code, String messageStart) {
    JsonNode response = post("/mutate", review).path("response");
    assertThat(response.path("allowed").asBoolean()).as(response.toString()).isFalse();
    assertThat(response.path("status").path("code").asInt()).as(response.toString()).isEqualTo(code);
    assertThat(response.path("status").path("message").asText()).startsWith(messageStart);
    return response;
  }

  private JsonNode allowed(ObjectNode review) {
    JsonNode answer = post("/mutate", review);
    assertThat(answer.path("response").path("allowed").asBoolean()).as(answer.toString()).isTrue();
    return admitted(review, answer);
  }
}
