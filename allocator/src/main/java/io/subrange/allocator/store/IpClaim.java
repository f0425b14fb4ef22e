package io.subrange.allocator.store;

import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import java.util.Objects;

/** One address an object needs: a specific one it asked for, or any from a family's range. */
public record IpClaim(IpFamily family, IpAddress requested) {

  public IpClaim {
    Objects.requireNonNull(family, "family");
    if (requested != null && requested.family() != family) {
      throw new IllegalArgumentException(requested + " is not " + family);
    }
  }

  public static IpClaim dynamic(IpFamily family) {
    return new IpClaim(family, null);
  }

  public static IpClaim specific(IpAddress address) {
    return new IpClaim(address.family(), address);
  }

  public Scope scope() {
    return requested == null ? Scope.DYNAMIC : Scope.STATIC;
  }
}
