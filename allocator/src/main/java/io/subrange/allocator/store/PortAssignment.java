package io.subrange.allocator.store;

/**
 * A NodePort given to an object, the range it came from, how it was asked for, and whether the
 * object already held it rather than getting it now.
 */
public record PortAssignment(int port, String range, Scope scope, boolean alreadyHeld) {
}
