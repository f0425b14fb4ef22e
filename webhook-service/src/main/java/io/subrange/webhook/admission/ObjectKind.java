package io.subrange.webhook.admission;

/** {@code request.kind}: group, version and kind; the core group is "". */
public record ObjectKind(String group, String version, String kind) {

  public static final ObjectKind SERVICE = new ObjectKind("", "v1", "Service");
  public static final ObjectKind NODE = new ObjectKind("", "v1", "Node");

  /** The apiVersion an object of this kind carries: "v1" or "group/version". */
  public String apiVersion() {
    return group.isEmpty() ? version : group + "/" + version;
  }

  @Override
  public String toString() {
    return apiVersion() + " " + kind;
  }
}
