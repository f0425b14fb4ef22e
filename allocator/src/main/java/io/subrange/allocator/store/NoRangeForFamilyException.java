package io.subrange.allocator.store;

import io.subrange.allocator.net.IpFamily;

/** The object needs an address of a family no configured range provides. */
public final class NoRangeForFamilyException extends AllocationException {

  private final IpFamily family;

  public NoRangeForFamilyException(IpFamily family) {
    super("no " + family + " Service range is configured");
    this.family = family;
  }

  public IpFamily family() {
    return family;
  }
}
