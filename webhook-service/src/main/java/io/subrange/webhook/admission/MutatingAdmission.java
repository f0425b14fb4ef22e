package io.subrange.webhook.admission;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.subrange.webhook.admission.AdmissionAnswers.Outcome;
import io.subrange.webhook.config.SubrangeProperties;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.springframework.stereotype.Component;

/**
 * Routes an {@link AdmissionCall} to the {@link Mutator} for its kind and operation, and turns
 * the outcome into the AdmissionReview answer: allowed, allowed with a JSON Patch, or denied.
 * Kinds and operations nobody handles are allowed untouched.
 */
@Component
public class MutatingAdmission {

  private final List<Mutator<?>> mutators;
  private final ObjectMapper mapper;
  private final Duration timeout;

  public MutatingAdmission(List<Mutator<?>> mutators, ObjectMapper mapper, SubrangeProperties properties) {
    this.mutators = List.copyOf(mutators);
    this.mapper = mapper;
    this.timeout = properties.admission().timeout();
  }

  /**
   * Admits one call. Completes with an answer in every case except a malformed object, which
   * throws {@link MalformedAdmissionReviewException} before any allocation happens.
   */
  CompletableFuture<Outcome> admit(AdmissionCall call) {
    Optional<Mutator<?>> mutator = mutators.stream()
        .filter(m -> m.target().matches(call))
        .findFirst();
    if (mutator.isEmpty()) {
      return CompletableFuture.completedFuture(AdmissionAnswers.allowed(call.uid(), List.of()));
    }
    return admitWith(mutator.get(), call);
  }

  private <T extends HasMetadata> CompletableFuture<Outcome> admitWith(Mutator<T> mutator, AdmissionCall call) {
    T working = call.object().decode(mutator.target().type(), "request.object", call.kind());
    // The patch is taken against the object as the model writes it, not the raw request, so
    // fields the model merely spells differently are not "changed".
    PatchScope.Snapshot<T> original = mutator.patchScope().before(mapper, working);
    T old = call.oldObject() == null ? null
        : call.oldObject().decode(mutator.target().type(), "request.oldObject", call.kind());
    AdmissionContext<T> context = new AdmissionContext<>(call, working, old);
    CompletableFuture<T> mutated;
    try {
      ObjectIdentity.check(context, call.kind());
      mutated = mutator.mutate(context);
    } catch (RuntimeException e) {
      mutated = CompletableFuture.failedFuture(e);
    }
    return mutated.orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS).handle((result, failure) -> failure == null
        ? AdmissionAnswers.patched(call.uid(), original.patchTo(result), List.copyOf(context.warnings()))
        : AdmissionAnswers.failure(call, failure, timeout));
  }
}
