package io.subrange.webhook.admission;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.concurrent.CompletableFuture;

/**
 * Mutating admission logic for one kind. It receives its own decoded copy of the object and
 * returns the object to admit (changed or not); {@link MutatingAdmission} turns the difference
 * into a JSON Patch. To refuse, complete exceptionally with {@link AdmissionDenied}.
 */
public interface Mutator<T extends HasMetadata> {

  /** The kind, type and operations this handles. */
  AdmissionTarget<T> target();

  CompletableFuture<T> mutate(AdmissionContext<T> context);

  /** What {@link #mutate} may change, and so what the patch is taken over: the whole object unless narrowed. */
  default PatchScope<T> patchScope() {
    return PatchScope.whole();
  }
}
