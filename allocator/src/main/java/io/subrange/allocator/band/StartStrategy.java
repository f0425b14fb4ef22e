package io.subrange.allocator.band;

/**
 * Where dynamic allocation starts looking in a band. A {@link BandedAllocator} asks for a start
 * offset, then takes the first free offset at or after it, wrapping inside the band: the
 * strategy decides only where the scan begins, never what is free, so any strategy keeps the
 * bands and finds a free offset whenever there is one.
 *
 * <ul>
 *   <li>{@link UniformStart}: anywhere in the band, uniformly. One process alone, and tests (over
 *       a seeded generator, so they repeat).
 *   <li>{@link AnchoredStart}: near this replica's anchor, for shard locality. What one replica
 *       allocates in a while lands in one part of the band, so in one stored shard, and replicas writing at
 *       the same time mostly write different shards instead of losing compare-and-swaps to each
 *       other; the anchor moves after a write lost to another replica, and by itself every few
 *       dozen starts, so no shard fills with one replica's run.
 * </ul>
 *
 * <p>Choices between ranges are not starts: they stay uniform whatever the strategy (see
 * {@code ServiceIpPool}).
 *
 * <p>One strategy serves every allocator of a store, from any thread. It runs on every dynamic
 * allocation: implementations allocate nothing per call.
 */
public interface StartStrategy {

  /**
   * A start offset in {@code [0, bandSize)}.
   *
   * @param bandSize positive
   */
  int startIn(int bandSize);

  /**
   * A start offset in {@code [0, bandSize)}, both unsigned: bands of sparse ranges reach 2^64-1
   * offsets (a /64), which read as negative longs.
   *
   * @param bandSize unsigned, not 0
   */
  long startInUnsigned(long bandSize);
}
