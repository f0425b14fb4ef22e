package io.subrange.allocator.store;

import java.util.Objects;

/**
 * The object an allocation belongs to. {@code uid} is empty while the object is being created
 * (the API server assigns it after admission), and {@code name} may be empty for objects
 * created with {@code generateName}.
 */
public record Holder(String kind, String namespace, String name, String uid) {

  public Holder {
    Objects.requireNonNull(kind, "kind");
    namespace = namespace == null ? "" : namespace;
    name = name == null ? "" : name;
    uid = uid == null ? "" : uid;
  }

  public static Holder service(String namespace, String name, String uid) {
    return new Holder("Service", namespace, name, uid);
  }

  public static Holder node(String name) {
    return new Holder("Node", "", name, "");
  }

  /** True when this names a specific object (it has a name). */
  public boolean isNamed() {
    return !name.isEmpty();
  }

  /**
   * True when both name the same object: same kind, namespace and name, and the same uid
   * where both know it.
   */
  public boolean isSameObject(Holder other) {
    return isNamed() && kind.equals(other.kind) && namespace.equals(other.namespace)
        && name.equals(other.name)
        && (uid.isEmpty() || other.uid.isEmpty() || uid.equals(other.uid));
  }

  /** "namespace/name", as kubectl prints it; "name" for cluster-scoped objects. */
  @Override
  public String toString() {
    String shownName = isNamed() ? name : "(name not yet generated)";
    return namespace.isEmpty() ? shownName : namespace + "/" + shownName;
  }
}
