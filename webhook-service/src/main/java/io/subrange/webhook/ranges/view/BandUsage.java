package io.subrange.webhook.ranges.view;

import io.subrange.allocator.band.RangeUsage;
import io.subrange.allocator.store.RangeView;

/**
 * One band of a range: its first-last as text ("none" for an absent static band) and unsigned
 * size and used counts. The only place the view splits a range's counts into its two bands.
 */
record BandUsage(String range, long size, long used) {

  static BandUsage staticBand(RangeView view) {
    RangeUsage usage = view.usage();
    return new BandUsage(view.staticBand(), usage.staticBandSize(), usage.usedInStaticBand());
  }

  static BandUsage dynamicBand(RangeView view) {
    RangeUsage usage = view.usage();
    return new BandUsage(view.dynamicBand(), usage.size() - usage.staticBandSize(), usage.usedInDynamicBand());
  }

  long free() {
    return size - used;
  }

  boolean isEmpty() {
    return size == 0;
  }
}
