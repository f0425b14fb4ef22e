package io.subrange.webhook.admission;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.subrange.webhook.admission.AdmissionAnswers.Outcome;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * The AdmissionReview answers as written for the API server, field by field: what each kind of
 * outcome carries and what it leaves out, and the patch in the base64 Go's encoding/json reads
 * (the standard alphabet, padded).
 */
class AdmissionAnswersTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final AdmissionCall CALL = new AdmissionCall("u-2", ObjectKind.SERVICE, Operation.CREATE, "team-a",
      "web", false, null, null);
  private static final Duration BUDGET = Duration.ofSeconds(5);

  @Test
  void aPatchedAnswerCarriesThePatchAsPaddedStandardBase64AndItsWarnings() {
    byte[] patch = "[{\"op\":\"add\",\"path\":\"/spec/clusterIP\",\"value\":\"10.96.0.1\"}]"
        .getBytes(StandardCharsets.UTF_8);
    assertThat(patch.length % 3).as("so that the base64 needs padding").isNotZero();

    String answer = written(AdmissionAnswers.patched("u-1", patch, List.of("one", "two")));

    assertThat(answer).isEqualTo("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
        + "\"response\":{\"uid\":\"u-1\",\"allowed\":true,\"patchType\":\"JSONPatch\",\"patch\":\""
        + Base64.getEncoder().encodeToString(patch) + "\",\"warnings\":[\"one\",\"two\"]}}");
  }

  @Test
  void anAnswerWithoutAPatchSaysAllowedAndNothingElse() {
    Outcome outcome = AdmissionAnswers.patched("u-1", null, List.of());

    assertThat(outcome.result()).isEqualTo("allowed");
    assertThat(written(outcome)).isEqualTo("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
        + "\"response\":{\"uid\":\"u-1\",\"allowed\":true}}");
  }

  @Test
  void aDenialCarriesItsStatusWithDetailsAndNoPatch() throws Exception {
    Outcome outcome = AdmissionAnswers.failure(CALL, AdmissionDenied.alreadyExists("services", "web"), BUDGET);

    JsonNode response = JSON.readTree(written(outcome)).path("response");

    assertThat(outcome.result()).isEqualTo("denied");
    assertThat(response.fieldNames()).toIterable().containsExactly("uid", "allowed", "status");
    assertThat(response.path("uid").asText()).isEqualTo("u-2");
    assertThat(response.path("allowed").asBoolean(true)).isFalse();
    JsonNode status = response.path("status");
    assertThat(status.path("status").asText()).isEqualTo("Failure");
    assertThat(status.path("code").asInt()).isEqualTo(409);
    assertThat(status.path("reason").asText()).isEqualTo("AlreadyExists");
    assertThat(status.path("message").asText()).isEqualTo("services \"web\" already exists");
    assertThat(status.path("details").path("name").asText()).isEqualTo("web");
    assertThat(status.path("details").path("kind").asText()).isEqualTo("services");
  }

  @Test
  void aTimeoutIsA503ThatNamesTheBudget() throws Exception {
    Outcome outcome = AdmissionAnswers.failure(CALL, new TimeoutException(), BUDGET);

    JsonNode status = JSON.readTree(written(outcome)).path("response").path("status");

    assertThat(outcome.result()).isEqualTo("denied");
    assertThat(status.path("code").asInt()).isEqualTo(503);
    assertThat(status.path("reason").asText()).isEqualTo("ServiceUnavailable");
    assertThat(status.path("message").asText()).contains("within 5000 ms");
  }

  @Test
  void anUnexpectedFailureIsA500ThatLeaksNoInternals() throws Exception {
    Outcome outcome = AdmissionAnswers.failure(CALL, new IllegalStateException("secret detail"), BUDGET);

    JsonNode status = JSON.readTree(written(outcome)).path("response").path("status");

    assertThat(outcome.result()).isEqualTo("error");
    assertThat(status.path("code").asInt()).isEqualTo(500);
    assertThat(status.path("reason").asText()).isEqualTo("InternalError");
    assertThat(status.path("message").asText()).contains("IllegalStateException").doesNotContain("secret detail");
  }

  private static String written(Outcome outcome) {
    return new String(AdmissionAnswers.json(JSON, outcome), StandardCharsets.UTF_8);
  }
}
