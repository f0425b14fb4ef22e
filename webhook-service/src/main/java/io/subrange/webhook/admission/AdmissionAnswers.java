package io.subrange.webhook.admission;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.StatusDetails;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponse;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponseBuilder;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionReview;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionReviewBuilder;
import io.subrange.webhook.Failures;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The answers a webhook gives (allowed, allowed with a patch, denied) and the translation of a
 * handler's failure into a denial, shared by the mutating and validating dispatchers.
 */
final class AdmissionAnswers {

  private static final Logger log = LoggerFactory.getLogger(AdmissionAnswers.class);

  private AdmissionAnswers() {
  }

  /** The outcome of one call; {@code result} names it for metrics. */
  record Outcome(AdmissionReview review, String result) {
  }

  static Outcome allowed(String uid, List<String> warnings) {
    AdmissionResponseBuilder response = new AdmissionResponseBuilder().withUid(uid).withAllowed(true);
    if (!warnings.isEmpty()) {
      response.withWarnings(warnings);
    }
    return new Outcome(review(response.build()), "allowed");
  }

  static Outcome patched(ObjectMapper mapper, String uid, JsonNode patch, List<String> warnings) {
    if (patch.isEmpty()) {
      return allowed(uid, warnings);
    }
    byte[] json;
    try {
      json = mapper.writeValueAsBytes(patch);  // not patch.toString(): that goes through a String and a mapper of its own
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a JSON Patch could not be written", e);
    }
    AdmissionResponseBuilder response = new AdmissionResponseBuilder()
        .withUid(uid)
        .withAllowed(true)
        .withPatchType("JSONPatch")
        .withPatch(Base64.getEncoder().encodeToString(json));
    if (!warnings.isEmpty()) {
      response.withWarnings(warnings);
    }
    return new Outcome(review(response.build()), "patched");
  }

  static Outcome denied(String uid, int code, String reason, String message) {
    return denied(uid, code, reason, message, null);
  }

  private static Outcome denied(String uid, int code, String reason, String message, StatusDetails details) {
    return new Outcome(review(new AdmissionResponseBuilder()
        .withUid(uid)
        .withAllowed(false)
        .withStatus(new StatusBuilder().withStatus("Failure").withCode(code).withReason(reason)
            .withMessage(message).withDetails(details).build())
        .build()), "denied");
  }

  /** A handler's failure as the answer: its denial, a 503 on timeout, or a 500 that leaks no internals. */
  static Outcome failure(AdmissionCall call, Throwable failure, Duration timeout) {
    Throwable cause = Failures.cause(failure);
    if (cause instanceof AdmissionDenied denied) {
      return denied(call.uid(), denied.code(), denied.reason(), denied.getMessage(), denied.details());
    }
    if (cause instanceof TimeoutException) {
      // The answer must not claim an allocation that is not durable; a late one is reclaimed.
      return denied(call.uid(), 503, "ServiceUnavailable", "subrange could not make the allocation for this"
          + " request durable within " + timeout.toMillis() + " ms; retry shortly");
    }
    log.error("Internal error admitting {} {} {}/{} (uid {})", call.operation(), call.kind(), call.namespace(),
        call.name(), call.uid(), cause);
    Outcome error = denied(call.uid(), 500, "InternalError", "subrange failed to process this request ("
        + cause.getClass().getSimpleName() + "); nothing was allocated for it; see the subrange logs");
    return new Outcome(error.review(), "error");
  }

  private static AdmissionReview review(AdmissionResponse response) {
    return new AdmissionReviewBuilder()
        .withApiVersion(AdmissionReviewReader.API_VERSION)
        .withKind(AdmissionReviewReader.KIND)
        .withResponse(response)
        .build();
  }
}
