package io.subrange.webhook.admission;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Validating admission logic for one kind: completes with warnings for the client (usually
 * none) to allow, or exceptionally with {@link AdmissionDenied} to refuse. Validators change
 * nothing.
 */
public interface Validator<T extends HasMetadata> {

  /** The kind, type and operations this handles. */
  AdmissionTarget<T> target();

  CompletableFuture<List<String>> validate(AdmissionContext<T> context);
}
