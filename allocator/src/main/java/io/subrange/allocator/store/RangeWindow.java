package io.subrange.allocator.store;

import java.util.BitSet;
import java.util.List;

/**
 * Part of a range's state as one stored shard holds it: the offsets {@code [from, to)}, which of
 * them are taken, and who holds those. A replica that sees another's write to one shard loads
 * just that shard, and a commit writes just the shards it changed, so the cost of either does not
 * grow with how much the whole range holds.
 *
 * @param taken bit i is offset {@code from + i}
 * @param entries the taken values of the window with their holders, in offset order
 */
public record RangeWindow(long from, long to, BitSet taken, List<RangeState.Entry> entries) {

  public RangeWindow {
    if (from < 0 || to <= from) {
      throw new IllegalArgumentException("window [" + from + ", " + to + ") is empty or negative");
    }
    taken = (BitSet) taken.clone();
    entries = List.copyOf(entries);
  }

  @Override
  public BitSet taken() {
    return (BitSet) taken.clone();
  }

  /** Whether {@code offset} lies in the window. */
  public boolean covers(long offset) {
    return offset >= from && offset < to;
  }
}
