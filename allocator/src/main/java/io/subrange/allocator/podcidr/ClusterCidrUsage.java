package io.subrange.allocator.podcidr;

import io.subrange.allocator.net.Cidr;

/**
 * How one ClusterCIDR is used: how many nodes hold blocks from it and, per family, how many
 * blocks are occupied.
 *
 * <p>{@code allocated} counts the blocks handed to nodes plus those marked as reserved (a
 * Service range inside the pod range). Blocks that overlap another ClusterCIDR's range and are
 * held through that one are not counted here, though they are never handed out twice.
 *
 * @param ipv4 null when the ClusterCIDR has no IPv4 range
 * @param ipv6 null when the ClusterCIDR has no IPv6 range
 */
public record ClusterCidrUsage(String name, boolean terminating, int nodes, FamilyUsage ipv4, FamilyUsage ipv6) {

  /** Block counts of one family. */
  public record FamilyUsage(Cidr range, int nodePrefixLength, long total, long allocated) {
    public long free() {
      return total - allocated;
    }
  }

  /** True while some node holds blocks from this ClusterCIDR (its deletion must wait). */
  public boolean inUse() {
    return nodes > 0;
  }
}
