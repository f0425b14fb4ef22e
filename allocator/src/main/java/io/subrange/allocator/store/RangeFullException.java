package io.subrange.allocator.store;

/** No free value is left in the range. */
public final class RangeFullException extends AllocationException {

  private final String range;

  public RangeFullException(String range, long size) {
    super("no free address is left in " + range + ": all " + size + " are allocated");
    this.range = range;
  }

  public String range() {
    return range;
  }
}
