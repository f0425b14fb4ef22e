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
   * True when {@code other} (an object asking now) is the object this holder on record names:
   * same kind, namespace and name, and, when this record knows a uid, the same uid. A record
   * made at CREATE has no uid yet and matches the object that later gets one; a record with a
   * uid does not match a CREATE of a new object under the same name (whose uid is still empty),
   * so a deleted object's values are never handed to its successor before they are released.
   */
  public boolean isSameObject(Holder other) {
    return isNamed() && kind.equals(other.kind) && namespace.equals(other.namespace)
        && name.equals(other.name)
        && (uid.isEmpty() || uid.equals(other.uid));
  }

  /** "namespace/name", as kubectl prints it; "name" for cluster-scoped objects. */
  @Override
  public String toString() {
    String shownName = isNamed() ? name : "(name not yet generated)";
    return namespace.isEmpty() ? shownName : namespace + "/" + shownName;
  }
}
