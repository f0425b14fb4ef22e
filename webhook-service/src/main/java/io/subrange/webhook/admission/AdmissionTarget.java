package io.subrange.webhook.admission;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.Set;

/**
 * What a {@link Mutator} or {@link Validator} handles: one kind, decoded into {@code type}, for
 * the given operations.
 */
public record AdmissionTarget<T extends HasMetadata>(ObjectKind kind, Class<T> type, Set<Operation> operations) {

  public AdmissionTarget {
    operations = Set.copyOf(operations);
  }

  public static <T extends HasMetadata> AdmissionTarget<T> of(ObjectKind kind, Class<T> type, Operation... operations) {
    return new AdmissionTarget<>(kind, type, Set.of(operations));
  }

  /** True when a call of this kind and operation is this handler's. */
  public boolean matches(AdmissionCall call) {
    return kind.equals(call.kind()) && operations.contains(call.operation());
  }
}
