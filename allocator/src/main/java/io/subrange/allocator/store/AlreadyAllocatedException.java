package io.subrange.allocator.store;

import java.util.Optional;

/** The value asked for is held by another object. */
public final class AlreadyAllocatedException extends AllocationException {

  private final String value;
  private final String range;
  private final Holder holder;

  public AlreadyAllocatedException(String value, String range, Holder holder) {
    super(value + " is already allocated" + heldBy(holder) + " in " + range);
    this.value = value;
    this.range = range;
    this.holder = holder;
  }

  private static String heldBy(Holder holder) {
    if (holder == null) {
      return "";
    }
    if (holder.isReservedAhead()) {
      return " (reserved for dynamic allocation by subrange replica " + holder.name() + ")";
    }
    return " to " + holder.kind() + " " + holder;
  }

  public String value() {
    return value;
  }

  public String range() {
    return range;
  }

  public Optional<Holder> holder() {
    return Optional.ofNullable(holder);
  }
}
