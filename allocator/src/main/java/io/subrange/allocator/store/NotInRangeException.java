package io.subrange.allocator.store;

/** The value asked for is not assignable from any range this store serves. */
public final class NotInRangeException extends AllocationException {

  private final String value;

  public NotInRangeException(String value, String reason) {
    super(reason);
    this.value = value;
  }

  public String value() {
    return value;
  }
}
