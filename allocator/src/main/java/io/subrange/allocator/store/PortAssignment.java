package io.subrange.allocator.store;

/** A NodePort given to an object, the range it came from, and how it was asked for. */
public record PortAssignment(int port, String range, Scope scope) {
}
