package io.subrange.allocator.store;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;

/** An address given to an object, the range it came from, and how it was asked for. */
public record IpAssignment(IpAddress address, Cidr range, Scope scope) {
}
