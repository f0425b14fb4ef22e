package io.subrange.webhook.admission;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponse;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponseBuilder;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionReview;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionReviewBuilder;
import io.fabric8.zjsonpatch.DiffFlags;
import io.fabric8.zjsonpatch.JsonDiff;
import io.subrange.webhook.config.SubrangeProperties;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * Routes an {@link AdmissionCall} to the {@link Mutator} for its kind and operation, and turns
 * the outcome into the AdmissionReview answer: allowed, allowed with a JSON Patch, or denied.
 * Kinds and operations nobody handles are allowed untouched.
 */
@Component
public class MutatingAdmission {

  private static final Logger log = LoggerFactory.getLogger(MutatingAdmission.class);

  private final List<Mutator<?>> mutators;
  private final ObjectMapper mapper;
  private final Duration timeout;

  public MutatingAdmission(List<Mutator<?>> mutators, ObjectMapper mapper, SubrangeProperties properties) {
    this.mutators = List.copyOf(mutators);
    this.mapper = mapper;
    this.timeout = properties.admission().timeout();
  }

  /** The outcome of one call; {@code result} names it for metrics. */
  public record Outcome(AdmissionReview review, String result) {
  }

  /**
   * Admits one call. Completes with an answer in every case except a malformed object, which
   * throws {@link MalformedAdmissionReviewException} before any allocation happens.
   */
  public CompletableFuture<Outcome> admit(AdmissionCall call) {
    Optional<Mutator<?>> mutator = mutators.stream()
        .filter(m -> m.kind().equals(call.kind()) && m.operations().contains(call.operation()))
        .findFirst();
    if (mutator.isEmpty()) {
      return CompletableFuture.completedFuture(new Outcome(allowed(call.uid()), "allowed"));
    }
    return admitWith(mutator.get(), call);
  }

  private <T extends HasMetadata> CompletableFuture<Outcome> admitWith(Mutator<T> mutator, AdmissionCall call) {
    T original = decode(call.object(), mutator.type(), "request.object", call.kind());
    T working = decode(call.object(), mutator.type(), "request.object", call.kind());
    T old = call.oldObject() == null ? null : decode(call.oldObject(), mutator.type(), "request.oldObject", call.kind());
    CompletableFuture<T> mutated;
    try {
      mutated = mutator.mutate(new Mutator.AdmissionContext<>(call, working, old));
    } catch (RuntimeException e) {
      mutated = CompletableFuture.failedFuture(e);
    }
    return mutated.orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS).handle((result, failure) -> {
      if (failure == null) {
        return patched(call.uid(), original, result);
      }
      Throwable cause = failure instanceof CompletionException && failure.getCause() != null
          ? failure.getCause() : failure;
      if (cause instanceof TimeoutException) {
        // The answer must not claim an allocation that is not durable; a late one is reclaimed.
        return new Outcome(denied(call.uid(), 503, "ServiceUnavailable", "subrange could not make the allocation"
            + " for this request durable within " + timeout.toMillis() + " ms; retry shortly"), "denied");
      }
      if (cause instanceof AdmissionDenied denied) {
        return new Outcome(denied(call.uid(), denied.code(), denied.reason(), denied.getMessage()), "denied");
      }
      log.error("Internal error admitting {} {} {}/{} (uid {})", call.operation(), call.kind(), call.namespace(),
          call.name(), call.uid(), cause);
      return new Outcome(denied(call.uid(), 500, "InternalError", "subrange failed to process this request ("
          + cause.getClass().getSimpleName() + "); nothing was allocated for it; see the subrange logs"), "error");
    });
  }

  private <T> T decode(JsonNode node, Class<T> type, String where, ObjectKind kind) {
    try {
      return mapper.treeToValue(node, type);
    } catch (JsonProcessingException | IllegalArgumentException e) {
      String reason = e instanceof JsonProcessingException jpe ? jpe.getOriginalMessage() : e.getMessage();
      throw new MalformedAdmissionReviewException(where + " is not a valid " + kind + ": " + reason);
    }
  }

  private Outcome patched(String uid, Object original, Object mutated) {
    JsonNode patch = JsonDiff.asJson(mapper.valueToTree(original), mapper.valueToTree(mutated),
        DiffFlags.dontNormalizeOpIntoMoveAndCopy());
    if (patch.isEmpty()) {
      return new Outcome(allowed(uid), "allowed");
    }
    AdmissionResponse response = new AdmissionResponseBuilder()
        .withUid(uid)
        .withAllowed(true)
        .withPatchType("JSONPatch")
        .withPatch(Base64.getEncoder().encodeToString(patch.toString().getBytes(StandardCharsets.UTF_8)))
        .build();
    return new Outcome(review(response), "patched");
  }

  static AdmissionReview allowed(String uid) {
    return review(new AdmissionResponseBuilder().withUid(uid).withAllowed(true).build());
  }

  static AdmissionReview denied(String uid, int code, String reason, String message) {
    return review(new AdmissionResponseBuilder()
        .withUid(uid)
        .withAllowed(false)
        .withStatus(new StatusBuilder().withStatus("Failure").withCode(code).withReason(reason)
            .withMessage(message).build())
        .build());
  }

  private static AdmissionReview review(AdmissionResponse response) {
    return new AdmissionReviewBuilder()
        .withApiVersion(AdmissionReviewReader.API_VERSION)
        .withKind(AdmissionReviewReader.KIND)
        .withResponse(response)
        .build();
  }
}
