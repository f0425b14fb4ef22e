package io.subrange.allocator.store;

import io.subrange.allocator.podcidr.PodCidrAllocationException;

/**
 * A node's pod CIDRs cannot be given or recorded; wraps the pod CIDR engine's reason (no
 * ClusterCIDR selects the node, all that do are full, pre-set blocks fit none or collide).
 */
public final class PodCidrUnavailableException extends AllocationException {

  private final PodCidrAllocationException.Reason reason;

  public PodCidrUnavailableException(PodCidrAllocationException cause) {
    super(cause.getMessage(), cause);
    this.reason = cause.reason();
  }

  public PodCidrAllocationException.Reason reason() {
    return reason;
  }
}
