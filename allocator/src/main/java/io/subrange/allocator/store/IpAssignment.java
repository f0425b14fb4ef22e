package io.subrange.allocator.store;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;

/**
 * An address given to an object, the range it came from, how it was asked for, whether the
 * object already held it (an update or a retried admission) rather than getting it now, and,
 * for a kept address subrange could not record, why ({@code unrecorded}, otherwise null).
 */
public record IpAssignment(IpAddress address, Cidr range, Scope scope, boolean alreadyHeld, String unrecorded) {

  public IpAssignment(IpAddress address, Cidr range, Scope scope, boolean alreadyHeld) {
    this(address, range, scope, alreadyHeld, null);
  }
}
