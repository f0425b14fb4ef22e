package io.subrange.webhook.ranges;

import io.subrange.allocator.ip.ServiceIpRange;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.podcidr.CidrSet;
import io.subrange.allocator.podcidr.ClusterCidr;
import io.subrange.allocator.podcidr.NodeSelector;
import io.subrange.webhook.ranges.model.ClusterCIDR;
import io.subrange.webhook.ranges.model.ClusterCIDRSpec;
import io.subrange.webhook.ranges.model.ServiceCIDR;
import io.subrange.webhook.ranges.model.ServiceCIDRSpec;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Range objects as the allocator's types: a {@link ServiceCIDR} as its CIDRs, a
 * {@link ClusterCIDR} as a {@link ClusterCidr}. Each checks the whole object and throws
 * {@link InvalidRangeObjectException} naming the first field that is wrong, so the validating
 * webhook and the code that loads existing objects apply the same rules.
 */
public final class RangeObjects {

  private RangeObjects() {
  }

  /** The CIDRs of a ServiceCIDR in spec order: each canonical, a usable Service range, one per family. */
  public static List<Cidr> serviceCidrs(ServiceCIDR object) {
    return serviceCidrs(object.getSpec());
  }

  public static List<Cidr> serviceCidrs(ServiceCIDRSpec spec) {
    List<String> texts = spec == null ? null : spec.cidrs();
    if (texts == null || texts.isEmpty()) {
      throw new InvalidRangeObjectException("spec.cidrs", "required: give one CIDR, such as \"10.96.0.0/12\", or"
          + " one IPv4 and one IPv6 CIDR for dual-stack");
    }
    if (texts.size() > 2) {
      throw new InvalidRangeObjectException("spec.cidrs", texts.size() + " CIDRs given; a ServiceCIDR holds at most"
          + " 2, one per IP family: put further ranges in ServiceCIDRs of their own");
    }
    Map<IpFamily, Integer> indexByFamily = new EnumMap<>(IpFamily.class);
    List<Cidr> cidrs = new ArrayList<>();
    for (int i = 0; i < texts.size(); i++) {
      String field = "spec.cidrs[" + i + "]";
      Cidr cidr = CanonicalCidrs.parse(field, texts.get(i));
      try {
        ServiceIpRange.of(cidr);
      } catch (IllegalArgumentException e) {
        throw new InvalidRangeObjectException(field, e.getMessage());
      }
      Integer other = indexByFamily.putIfAbsent(cidr.family(), i);
      if (other != null) {
        throw new InvalidRangeObjectException(field, cidr + " is " + cidr.family() + ", like spec.cidrs[" + other
            + "] (" + cidrs.get(other) + "); a ServiceCIDR holds at most one CIDR per IP family: put " + cidr
            + " in a ServiceCIDR of its own");
      }
      cidrs.add(cidr);
    }
    return List.copyOf(cidrs);
  }

  /** The ClusterCIDR as the allocator sees it; its name must be set. */
  public static ClusterCidr clusterCidr(ClusterCIDR object) {
    String name = object.getMetadata() == null ? null : object.getMetadata().getName();
    if (name == null || name.isEmpty()) {
      throw new InvalidRangeObjectException("metadata.name", "required");
    }
    return clusterCidr(name, object.getSpec());
  }

  /**
   * The ClusterCIDR named {@code name} with this spec. Empty {@code ipv4} or {@code ipv6} means
   * the family is absent, as node-ipam-controller reads it.
   */
  public static ClusterCidr clusterCidr(String name, ClusterCIDRSpec spec) {
    if (spec == null) {
      throw new InvalidRangeObjectException("spec", "required: give spec.perNodeHostBits and spec.ipv4, spec.ipv6"
          + " or both");
    }
    Cidr ipv4 = optionalCidr("spec.ipv4", spec.ipv4(), IpFamily.IPV4);
    Cidr ipv6 = optionalCidr("spec.ipv6", spec.ipv6(), IpFamily.IPV6);
    if (ipv4 == null && ipv6 == null) {
      throw new InvalidRangeObjectException("spec", "give spec.ipv4, spec.ipv6 or both: without a range this"
          + " ClusterCIDR has no pod CIDRs to hand out");
    }
    int bits = perNodeHostBits(spec.perNodeHostBits(), "spec.ipv4", ipv4, "spec.ipv6", ipv6);
    NodeSelector selector = NodeSelectorConversion.convert("spec.nodeSelector", spec.nodeSelector());
    try {
      return new ClusterCidr(name, selector, bits, ipv4, ipv6);
    } catch (IllegalArgumentException e) {
      throw new InvalidRangeObjectException("spec", e.getMessage());  // checked above; kept as a safety net
    }
  }

  private static Cidr optionalCidr(String field, String text, IpFamily family) {
    if (text == null || text.isEmpty()) {
      return null;
    }
    Cidr cidr = CanonicalCidrs.parse(field, text);
    if (cidr.family() != family) {
      String otherField = family == IpFamily.IPV4 ? "spec.ipv6" : "spec.ipv4";
      throw new InvalidRangeObjectException(field, cidr + " is an " + cidr.family() + " CIDR; " + field + " takes "
          + family + " only: put it in " + otherField);
    }
    return cidr;
  }

  private static int perNodeHostBits(Integer bits, String ipv4Field, Cidr ipv4, String ipv6Field, Cidr ipv6) {
    String field = "spec.perNodeHostBits";
    if (bits == null) {
      throw new InvalidRangeObjectException(field, "required: the host bits of each Node's block, at least "
          + ClusterCidr.MIN_PER_NODE_HOST_BITS + " (8 gives a /24 from IPv4 and a /120 from IPv6)");
    }
    if (bits < ClusterCidr.MIN_PER_NODE_HOST_BITS) {
      throw new InvalidRangeObjectException(field, bits + " is below the minimum of "
          + ClusterCidr.MIN_PER_NODE_HOST_BITS + " (16 addresses per Node)");
    }
    checkFits(bits, ipv4Field, ipv4);
    checkFits(bits, ipv6Field, ipv6);
    return bits;
  }

  /** Node prefix = family bits - host bits; it must lie inside the range, within CidrSet's split limit. */
  private static void checkFits(int bits, String rangeField, Cidr range) {
    if (range == null) {
      return;
    }
    String field = "spec.perNodeHostBits";
    if (bits > range.hostBits()) {
      throw new InvalidRangeObjectException(field, bits + " does not fit " + rangeField + " " + range + ": a Node"
          + " block would be larger than the range, which has " + range.hostBits() + " host bits; use at most "
          + range.hostBits() + ", or a larger range");
    }
    int split = range.hostBits() - bits;
    if (split > CidrSet.MAX_SPLIT_BITS) {
      throw new InvalidRangeObjectException(field, bits + " splits " + rangeField + " " + range + " into 2^" + split
          + " Node blocks (/" + (range.family().bits() - bits) + "); at most 2^" + CidrSet.MAX_SPLIT_BITS
          + " are supported: use at least " + (range.hostBits() - CidrSet.MAX_SPLIT_BITS) + ", or a smaller range");
    }
  }
}
