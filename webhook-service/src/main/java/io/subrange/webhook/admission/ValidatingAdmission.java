package io.subrange.webhook.admission;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.subrange.webhook.admission.AdmissionAnswers.Outcome;
import io.subrange.webhook.config.SubrangeProperties;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.springframework.stereotype.Component;

/**
 * Routes an {@link AdmissionCall} to every {@link Validator} for its kind and operation; the
 * first refusal wins. Kinds and operations nobody validates are allowed.
 */
@Component
public class ValidatingAdmission {

  private final List<Validator<?>> validators;
  private final Duration timeout;

  public ValidatingAdmission(List<Validator<?>> validators, SubrangeProperties properties) {
    this.validators = List.copyOf(validators);
    this.timeout = properties.admission().timeout();
  }

  CompletableFuture<Outcome> admit(AdmissionCall call) {
    List<Validator<?>> matching = validators.stream()
        .filter(v -> v.target().matches(call))
        .toList();
    CompletableFuture<List<String>> warnings = CompletableFuture.completedFuture(List.of());
    for (Validator<?> validator : matching) {
      CompletableFuture<List<String>> next = validateWith(validator, call);
      warnings = warnings.thenCombine(next, (a, b) -> {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
      });
    }
    return warnings.orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS).handle((all, failure) -> failure == null
        ? AdmissionAnswers.allowed(call.uid(), all)
        : AdmissionAnswers.failure(call, failure, timeout));
  }

  private <T extends HasMetadata> CompletableFuture<List<String>> validateWith(Validator<T> validator,
      AdmissionCall call) {
    T object = call.object() == null ? null
        : call.object().decode(validator.target().type(), "request.object", call.kind());
    T old = call.oldObject() == null ? null
        : call.oldObject().decode(validator.target().type(), "request.oldObject", call.kind());
    try {
      AdmissionContext<T> context = new AdmissionContext<>(call, object, old);
      ObjectIdentity.check(context, call.kind());
      return validator.validate(context);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }
}
