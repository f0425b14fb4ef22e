package io.subrange.webhook.config;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.podcidr.ClusterCidr;
import java.util.Locale;
import java.util.Optional;

/**
 * The ClusterCIDR that {@code subrange.pod.*} describes, made the way the upstream multi-CIDR
 * allocator makes {@code default-cluster-cidr} from kube-controller-manager's flags: no node
 * selector (the fallback for every node), one {@code perNodeHostBits} from the node mask sizes.
 * A ClusterCIDR has a single {@code perNodeHostBits} for both families, so a dual-stack one
 * takes the smaller host-bit count (the IPv4 one with the defaults, /24 blocks, making IPv6
 * blocks /120), as upstream does.
 */
public final class DefaultClusterCidr {

  public static final String NAME = "default-cluster-cidr";

  private DefaultClusterCidr() {
  }

  /**
   * @return empty when no cluster CIDR is configured
   * @throws IllegalArgumentException when the result cannot work, saying why and what to change
   */
  public static Optional<ClusterCidr> from(SubrangeProperties.Pod pod) {
    Cidr ipv4 = pod.clusterCidrs().stream().filter(c -> c.family() == IpFamily.IPV4).findFirst().orElse(null);
    Cidr ipv6 = pod.clusterCidrs().stream().filter(c -> c.family() == IpFamily.IPV6).findFirst().orElse(null);
    if (ipv4 == null && ipv6 == null) {
      return Optional.empty();
    }
    int bits4 = 32 - pod.nodeMaskSizeIpv4();
    int bits6 = 128 - pod.nodeMaskSizeIpv6();
    int perNodeHostBits;
    if (ipv4 != null && ipv6 != null) {
      perNodeHostBits = Math.min(bits4, bits6);
    } else {
      perNodeHostBits = ipv4 != null ? bits4 : bits6;
    }
    perNodeHostBits = Math.max(perNodeHostBits, ClusterCidr.MIN_PER_NODE_HOST_BITS);
    try {
      return Optional.of(new ClusterCidr(NAME, null, perNodeHostBits, ipv4, ipv6));
    } catch (IllegalArgumentException e) {
      String dualStackNote = ipv4 != null && ipv6 != null
          ? " (a dual-stack ClusterCIDR has one perNodeHostBits for both families: " + perNodeHostBits
              + " gives /" + (32 - perNodeHostBits) + " IPv4 and /" + (128 - perNodeHostBits)
              + " IPv6 node blocks; use a longer IPv6 cluster CIDR or larger IPv4 node blocks)"
          : "";
      throw new IllegalArgumentException(e.getMessage() + dualStackNote, e);
    }
  }

  /** A note for the log when a configured node mask cannot be honoured exactly. */
  public static Optional<String> compromise(SubrangeProperties.Pod pod, ClusterCidr made) {
    for (IpFamily family : made.families()) {
      int wanted = pod.nodeMaskSize(family);
      int actual = made.nodePrefixLength(family);
      if (wanted != actual) {
        return Optional.of("subrange.pod.node-mask-size-" + family.kubernetesName().toLowerCase(Locale.ROOT) + "=" + wanted
            + " cannot be honoured: ClusterCIDR " + NAME + " has one perNodeHostBits (" + made.perNodeHostBits()
            + ") for both families, so " + family + " node blocks are /" + actual);
      }
    }
    return Optional.empty();
  }
}
