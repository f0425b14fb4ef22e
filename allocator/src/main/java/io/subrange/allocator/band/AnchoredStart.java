package io.subrange.allocator.band;

import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;

/**
 * Random start offsets near one anchor: dynamic allocation still starts at a random offset in its
 * band and scans forward, but this process's starts stay in one part of the band, so what one
 * replica allocates lands in one shard of the stored state and replicas writing at the same time
 * mostly write different shards. {@link #reanchor} moves the anchor to a new random place (after
 * a write lost to another replica). Choices between ranges ({@link #nextDouble}) stay uniform.
 *
 * <p>Any thread may use it, like {@link ThreadLocalRandomGenerator}.
 */
public final class AnchoredStart implements RandomGenerator {

  /** How far past the anchor a start may fall: starts stay within a word or two of the bitmap. */
  static final int SPREAD = 64;

  private volatile double anchor;
  private volatile long anchorBits;

  public AnchoredStart() {
    reanchor();
  }

  /** Moves the anchor to a new random place. */
  public void reanchor() {
    anchor = ThreadLocalRandom.current().nextDouble();
    // Below 2^63, so draws stay below any unsigned bound of at least 2^63 (huge sparse ranges).
    anchorBits = ThreadLocalRandom.current().nextLong() >>> 1;
  }

  @Override
  public int nextInt(int bound) {
    if (bound <= 0) {
      throw new IllegalArgumentException("bound must be positive");
    }
    long base = (long) (anchor * bound);
    return (int) ((base + ThreadLocalRandom.current().nextInt(Math.min(bound, SPREAD))) % bound);
  }

  @Override
  public long nextLong(long bound) {
    if (bound <= 0) {
      throw new IllegalArgumentException("bound must be positive");
    }
    long base = (long) (anchor * bound);
    long jitter = ThreadLocalRandom.current().nextLong(Math.min(bound, SPREAD));
    return Math.floorMod(base + jitter, bound);
  }

  @Override
  public long nextLong() {
    return anchorBits + ThreadLocalRandom.current().nextLong(SPREAD);
  }

  @Override
  public double nextDouble() {
    return ThreadLocalRandom.current().nextDouble();
  }
}
