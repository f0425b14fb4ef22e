package io.subrange.allocator.store;

/** No free value is left in the ranges that could serve the request. */
public final class RangeFullException extends AllocationException {

  private final String ranges;

  /**
   * @param what what was asked for, e.g. "IPv4 address" or "NodePort"
   * @param ranges the ranges searched, e.g. "10.96.0.0/12"
   */
  public RangeFullException(String what, String ranges) {
    super("no free " + what + " is left in " + ranges);
    this.ranges = ranges;
  }

  public String ranges() {
    return ranges;
  }
}
