package io.subrange.allocator.store;

/** One NodePort an object needs: a specific port it asked for, or any (0). */
public record PortClaim(int requested) {

  public PortClaim {
    if (requested < 0) {
      throw new IllegalArgumentException("port " + requested + " is negative");
    }
  }

  public static PortClaim dynamic() {
    return new PortClaim(0);
  }

  public static PortClaim specific(int port) {
    if (port == 0) {
      throw new IllegalArgumentException("port 0 means any port; use dynamic()");
    }
    return new PortClaim(port);
  }

  public Scope scope() {
    return requested == 0 ? Scope.DYNAMIC : Scope.STATIC;
  }
}
