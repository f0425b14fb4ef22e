package io.subrange.webhook.admission;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Mutating admission logic for one kind. It receives its own decoded copy of the object and
 * returns the object to admit (changed or not); {@link MutatingAdmission} turns the difference
 * into a JSON Patch. To refuse, complete exceptionally with {@link AdmissionDenied}.
 */
public interface Mutator<T extends HasMetadata> {

  ObjectKind kind();

  Class<T> type();

  Set<Operation> operations();

  CompletableFuture<T> mutate(AdmissionContext<T> context);
}
