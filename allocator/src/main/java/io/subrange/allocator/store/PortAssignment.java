package io.subrange.allocator.store;

/**
 * A NodePort given to an object, the range it came from, how it was asked for, whether the
 * object already held it rather than getting it now, and, for a kept port subrange could not
 * record, why ({@code unrecorded}, otherwise null).
 */
public record PortAssignment(int port, String range, Scope scope, boolean alreadyHeld, String unrecorded) {

  public PortAssignment(int port, String range, Scope scope, boolean alreadyHeld) {
    this(port, range, scope, alreadyHeld, null);
  }
}
