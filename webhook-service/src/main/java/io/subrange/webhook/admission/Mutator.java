package io.subrange.webhook.admission;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Admission logic for one kind. It receives its own decoded copy of the object and returns the
 * object to admit (changed or not); {@link MutatingAdmission} turns the difference into a JSON
 * Patch. To refuse, complete exceptionally with {@link AdmissionDenied}.
 */
public interface Mutator<T extends HasMetadata> {

  ObjectKind kind();

  Class<T> type();

  Set<Operation> operations();

  CompletableFuture<T> mutate(AdmissionContext<T> context);

  /** What a mutator sees of one request. */
  record AdmissionContext<T extends HasMetadata>(AdmissionCall call, T object, T oldObject) {

    public boolean dryRun() {
      return call.dryRun();
    }

    /** The request's namespace, falling back to the object's own. */
    public String namespace() {
      if (!call.namespace().isEmpty() || object.getMetadata() == null) {
        return call.namespace();
      }
      String own = object.getMetadata().getNamespace();
      return own == null ? "" : own;
    }

    /** The object's name, falling back to the request's; empty while generateName is pending. */
    public String name() {
      String own = object.getMetadata() == null ? null : object.getMetadata().getName();
      return own == null || own.isEmpty() ? call.name() : own;
    }
  }
}
