package io.subrange.allocator.store;

/**
 * One NodePort an object needs: a specific port it asked for, or any (0).
 *
 * @param kept the object already carries this port (an update): recorded when it can be, never
 *     refused; the assignment says why it could not be
 */
public record PortClaim(int requested, boolean kept) {

  public PortClaim {
    if (requested < 0) {
      throw new IllegalArgumentException("port " + requested + " is negative");
    }
    if (kept && requested == 0) {
      throw new IllegalArgumentException("only a specific port can be kept");
    }
  }

  public static PortClaim dynamic() {
    return new PortClaim(0, false);
  }

  public static PortClaim specific(int port) {
    if (port == 0) {
      throw new IllegalArgumentException("port 0 means any port; use dynamic()");
    }
    return new PortClaim(port, false);
  }

  /** A port the object already carries (see {@link #kept}). */
  public static PortClaim kept(int port) {
    return new PortClaim(port, true);
  }

  public Scope scope() {
    return requested == 0 ? Scope.DYNAMIC : Scope.STATIC;
  }
}
