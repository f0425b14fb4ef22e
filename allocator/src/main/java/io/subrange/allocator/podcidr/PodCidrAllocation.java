package io.subrange.allocator.podcidr;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpFamily;
import java.util.ArrayList;
import java.util.List;

/**
 * The pod CIDRs a node holds: one block per family of the ClusterCIDR they came from.
 *
 * @param clusterCidrsTried how many ClusterCIDRs the request looked at, the chosen one
 *     included (1 when the first choice had room); 0 when the node already held these blocks
 */
public record PodCidrAllocation(String nodeName, String clusterCidr, Cidr ipv4, Cidr ipv6, int clusterCidrsTried) {

  public PodCidrAllocation {
    if (ipv4 == null && ipv6 == null) {
      throw new IllegalArgumentException("an allocation holds at least one block");
    }
  }

  /** The blocks in {@code spec.podCIDRs} order: IPv4 first when there is one. */
  public List<Cidr> podCidrs() {
    List<Cidr> cidrs = new ArrayList<>(2);
    if (ipv4 != null) {
      cidrs.add(ipv4);
    }
    if (ipv6 != null) {
      cidrs.add(ipv6);
    }
    return List.copyOf(cidrs);
  }

  /** The block of {@code family}, or null. */
  public Cidr podCidr(IpFamily family) {
    return family == IpFamily.IPV4 ? ipv4 : ipv6;
  }
}
