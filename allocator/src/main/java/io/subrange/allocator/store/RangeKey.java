package io.subrange.allocator.store;

import io.subrange.allocator.net.IpFamily;
import java.util.Locale;
import java.util.Objects;

/**
 * Names one unit of persisted state: a Service range (one family of a ServiceCIDR), the
 * NodePort range, or one ClusterCIDR.
 *
 * @param family the family of a Service range; null for the others
 */
public record RangeKey(Kind kind, String name, IpFamily family) {

  public enum Kind { SERVICE_IPS, NODE_PORTS, POD_CIDRS }

  public RangeKey {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(name, "name");
    if ((kind == Kind.SERVICE_IPS) != (family != null)) {
      throw new IllegalArgumentException("a family is given for Service ranges only");
    }
  }

  public static RangeKey serviceIps(String name, IpFamily family) {
    return new RangeKey(Kind.SERVICE_IPS, name, family);
  }

  public static RangeKey nodePorts() {
    return new RangeKey(Kind.NODE_PORTS, AllocationEngine.NODE_PORTS_NAME, null);
  }

  public static RangeKey podCidrs(String clusterCidr) {
    return new RangeKey(Kind.POD_CIDRS, clusterCidr, null);
  }

  @Override
  public String toString() {
    return kind.name().toLowerCase(Locale.ROOT) + "/" + name + (family == null ? "" : "/" + family);
  }
}
