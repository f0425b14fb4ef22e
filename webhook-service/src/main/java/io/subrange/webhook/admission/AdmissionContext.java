package io.subrange.webhook.admission;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What a {@link Mutator} or {@link Validator} sees of one request: the call, and the object (and
 * for updates and deletes the stored object) decoded into the handler's type. A mutator can
 * {@link #warn} the client (kubectl prints warnings) while allowing the request.
 */
public record AdmissionContext<T extends HasMetadata>(AdmissionCall call, T object, T oldObject,
    List<String> warnings) {

  public AdmissionContext(AdmissionCall call, T object, T oldObject) {
    this(call, object, oldObject, new CopyOnWriteArrayList<>());
  }

  /** Adds a warning to the answer. */
  public void warn(String warning) {
    warnings.add(warning);
  }

  public boolean dryRun() {
    return call.dryRun();
  }

  public Operation operation() {
    return call.operation();
  }

  /** The object being admitted: {@code object}, or for DELETE the stored one. */
  private T subject() {
    return object != null ? object : oldObject;
  }

  /** The request's namespace, falling back to the object's own. */
  public String namespace() {
    T subject = subject();
    if (!call.namespace().isEmpty() || subject == null || subject.getMetadata() == null) {
      return call.namespace();
    }
    String own = subject.getMetadata().getNamespace();
    return own == null ? "" : own;
  }

  /** The object's name, falling back to the request's; empty while generateName is pending. */
  public String name() {
    T subject = subject();
    String own = subject == null || subject.getMetadata() == null ? null : subject.getMetadata().getName();
    return own == null || own.isEmpty() ? call.name() : own;
  }

  /** The object's uid; empty on CREATE, where the API server assigns it after admission. */
  public String uid() {
    T subject = subject();
    String uid = subject == null || subject.getMetadata() == null ? null : subject.getMetadata().getUid();
    return uid == null ? "" : uid;
  }
}
