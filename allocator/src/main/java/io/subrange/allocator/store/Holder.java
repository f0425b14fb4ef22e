package io.subrange.allocator.store;

import java.util.Objects;

/**
 * The object an allocation belongs to. {@code uid} is empty while the object is being created
 * (the API server assigns it after admission), and {@code name} may be empty for objects
 * created with {@code generateName}.
 */
public record Holder(String kind, String namespace, String name, String uid) {

  /**
   * The kind of a value a webhook replica reserved ahead of any request (see
   * {@link #reservedAhead}). It is part of the stored format: holder lines carry it.
   */
  public static final String RESERVED_AHEAD = "ReservedAhead";

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

  /**
   * A value reserved ahead by one webhook replica ({@code replica}, which names the process), to
   * hand to a Service later without a write of its own; {@code sequence} makes each value's
   * holder distinct, so each is held, handed over and freed on its own.
   */
  public static Holder reservedAhead(String replica, long sequence) {
    return new Holder(RESERVED_AHEAD, "", replica + "-" + sequence, "");
  }

  /** True when this is a replica's reservation ahead of any request, not an object. */
  public boolean isReservedAhead() {
    return RESERVED_AHEAD.equals(kind);
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
