package io.subrange.allocator.store;

import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import java.util.Objects;

/**
 * One address an object needs: a specific one it asked for, or any from a family's range.
 *
 * @param kept the object already carries this address (an update): it is recorded when it can
 *     be, but never refused; the assignment says why it could not be
 */
public record IpClaim(IpFamily family, IpAddress requested, boolean kept) {

  public IpClaim {
    Objects.requireNonNull(family, "family");
    if (requested != null && requested.family() != family) {
      throw new IllegalArgumentException(requested + " is not " + family);
    }
    if (kept && requested == null) {
      throw new IllegalArgumentException("only a specific address can be kept");
    }
  }

  public static IpClaim dynamic(IpFamily family) {
    return new IpClaim(family, null, false);
  }

  public static IpClaim specific(IpAddress address) {
    return new IpClaim(address.family(), address, false);
  }

  /** An address the object already carries (see {@link #kept}). */
  public static IpClaim kept(IpAddress address) {
    return new IpClaim(address.family(), address, true);
  }

  public Scope scope() {
    return requested == null ? Scope.DYNAMIC : Scope.STATIC;
  }
}
