package io.subrange.allocator.store;

import io.subrange.allocator.net.Cidr;

/** How full one range is, overall and per band. */
public record RangeUsage(Cidr cidr, long size, long staticBandSize, long used, long usedInStaticBand) {

  public long free() {
    return size - used;
  }

  public long usedInDynamicBand() {
    return used - usedInStaticBand;
  }
}
