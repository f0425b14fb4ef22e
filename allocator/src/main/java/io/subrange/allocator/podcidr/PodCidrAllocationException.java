package io.subrange.allocator.podcidr;

/**
 * Why a node got no pod CIDRs, or why its existing ones could not be recorded. The message
 * names the node and the reason in a sentence a person can act on.
 */
public final class PodCidrAllocationException extends RuntimeException {

  /** The kinds of refusal, for metrics and for choosing a response. */
  public enum Reason {
    /** No ClusterCIDR selects the node and there is no fallback. */
    NO_MATCHING_CLUSTER_CIDR,
    /** Every ClusterCIDR that selects the node (fallbacks included) is full. */
    ALL_MATCHING_FULL,
    /** Existing podCIDRs are not a node block of any ClusterCIDR. */
    NOT_IN_ANY_CLUSTER_CIDR,
    /** Existing podCIDRs collide with blocks held by another node or reserved. */
    COLLISION
  }

  private final Reason reason;
  private final String nodeName;
  private final int clusterCidrsTried;

  PodCidrAllocationException(Reason reason, String nodeName, int clusterCidrsTried, String message) {
    super(message, null, false, false);
    this.reason = reason;
    this.nodeName = nodeName;
    this.clusterCidrsTried = clusterCidrsTried;
  }

  public Reason reason() {
    return reason;
  }

  public String nodeName() {
    return nodeName;
  }

  /** How many ClusterCIDRs were looked at before giving up. */
  public int clusterCidrsTried() {
    return clusterCidrsTried;
  }
}
