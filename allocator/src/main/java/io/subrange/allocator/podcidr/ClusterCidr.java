package io.subrange.allocator.podcidr;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpFamily;
import java.util.EnumSet;
import java.util.Set;

/**
 * A KEP-2593 ClusterCIDR: which nodes it serves, how large each node's block is, and the IPv4
 * and/or IPv6 range the blocks come from. Every field is immutable, as in Kubernetes.
 *
 * <p>{@code perNodeHostBits} sizes the node block in both families: 8 gives a {@code /24} from
 * the IPv4 range and a {@code /120} from the IPv6 range. A null {@code nodeSelector} makes this
 * a fallback, used for nodes no selector serves.
 */
public record ClusterCidr(String name, NodeSelector nodeSelector, int perNodeHostBits, Cidr ipv4, Cidr ipv6) {

  /** The API's minimum: 16 addresses per node. */
  public static final int MIN_PER_NODE_HOST_BITS = 4;

  public ClusterCidr {
    if (name == null || name.isEmpty()) {
      throw new IllegalArgumentException("a ClusterCIDR needs a name");
    }
    if (ipv4 == null && ipv6 == null) {
      throw new IllegalArgumentException("ClusterCIDR " + name + " needs an ipv4 or ipv6 range (or both)");
    }
    if (ipv4 != null && ipv4.family() != IpFamily.IPV4) {
      throw new IllegalArgumentException("ClusterCIDR " + name + ": ipv4 is " + ipv4 + ", which is not IPv4");
    }
    if (ipv6 != null && ipv6.family() != IpFamily.IPV6) {
      throw new IllegalArgumentException("ClusterCIDR " + name + ": ipv6 is " + ipv6 + ", which is not IPv6");
    }
    if (perNodeHostBits < MIN_PER_NODE_HOST_BITS) {
      throw new IllegalArgumentException("ClusterCIDR " + name + ": perNodeHostBits is " + perNodeHostBits
          + "; it must be at least " + MIN_PER_NODE_HOST_BITS + " (16 addresses per node)");
    }
    for (Cidr range : new Cidr[] {ipv4, ipv6}) {
      if (range == null) {
        continue;
      }
      if (perNodeHostBits > range.hostBits()) {
        throw new IllegalArgumentException("ClusterCIDR " + name + ": perNodeHostBits " + perNodeHostBits
            + " does not fit " + range + ", which has " + range.hostBits() + " host bits");
      }
      try {
        CidrSet.checkSplit(range, range.family().bits() - perNodeHostBits);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("ClusterCIDR " + name + ": " + e.getMessage(), e);
      }
    }
  }

  public static ClusterCidr ipv4(String name, NodeSelector nodeSelector, int perNodeHostBits, String ipv4) {
    return new ClusterCidr(name, nodeSelector, perNodeHostBits, Cidr.parse(ipv4), null);
  }

  public static ClusterCidr ipv6(String name, NodeSelector nodeSelector, int perNodeHostBits, String ipv6) {
    return new ClusterCidr(name, nodeSelector, perNodeHostBits, null, Cidr.parse(ipv6));
  }

  public static ClusterCidr dualStack(String name, NodeSelector nodeSelector, int perNodeHostBits, String ipv4,
      String ipv6) {
    return new ClusterCidr(name, nodeSelector, perNodeHostBits, Cidr.parse(ipv4), Cidr.parse(ipv6));
  }

  /** True when this has no nodeSelector and so serves any node no selector serves. */
  public boolean isFallback() {
    return nodeSelector == null;
  }

  public Set<IpFamily> families() {
    Set<IpFamily> families = EnumSet.noneOf(IpFamily.class);
    if (ipv4 != null) {
      families.add(IpFamily.IPV4);
    }
    if (ipv6 != null) {
      families.add(IpFamily.IPV6);
    }
    return families;
  }

  /** The range of {@code family}, or null when this ClusterCIDR has none. */
  public Cidr range(IpFamily family) {
    return family == IpFamily.IPV4 ? ipv4 : ipv6;
  }

  /** The prefix length of a node block in {@code family}: 32 or 128 minus perNodeHostBits. */
  public int nodePrefixLength(IpFamily family) {
    return family.bits() - perNodeHostBits;
  }
}
