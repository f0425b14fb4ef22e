package io.subrange.webhook.ranges.view;

import io.subrange.allocator.band.RangeUsage;

/**
 * A small fill bar, {@code [###.......]}. A band with anything used shows at least one mark and
 * one that is not full at most all but one, so neither 1 of 2^64 nor 2^64-2 of 2^64 rounds away.
 */
final class FillBar {

  static final int WIDTH = 10;

  private FillBar() {
  }

  static String of(long used, long size) {
    int marks = marks(used, size);
    return "[" + "#".repeat(marks) + ".".repeat(WIDTH - marks) + "]";
  }

  /** How many of the {@link #WIDTH} cells are marked, for unsigned counts. */
  static int marks(long used, long size) {
    if (used == 0 || size == 0) {
      return 0;
    }
    if (used == size) {
      return WIDTH;
    }
    long rounded = Math.round(RangeUsage.asDouble(used) / RangeUsage.asDouble(size) * WIDTH);
    return (int) Math.max(1, Math.min(WIDTH - 1, rounded));
  }
}
