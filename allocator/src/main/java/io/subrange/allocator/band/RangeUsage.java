package io.subrange.allocator.band;

/**
 * How full one range is, overall and per band. {@code range} is the range as text ("10.96.0.0/12",
 * "30000-32767"). Counts are unsigned 64-bit values: a /64 holds 2^64-1 addresses.
 */
public record RangeUsage(String range, long size, long staticBandSize, long used, long usedInStaticBand) {

  public long free() {
    return size - used;
  }

  public long usedInDynamicBand() {
    return used - usedInStaticBand;
  }

  /** An unsigned count as a double, for gauges. */
  public static double asDouble(long unsignedCount) {
    return unsignedCount >= 0 ? unsignedCount : (double) (unsignedCount >>> 1) * 2.0 + (unsignedCount & 1);
  }
}
