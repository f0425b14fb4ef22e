package io.subrange.allocator.band;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Random starts near one anchor, for shard locality: dynamic allocation still starts at a random
 * offset in its band and scans forward, but this process's starts stay in one part of the band
 * for a while, so what one replica allocates meanwhile lands in one shard of the stored state and
 * replicas writing at the same time mostly write different shards. {@link #reanchor} moves the anchor to a new random
 * place (after a write lost to another replica: another replica allocates where this one does).
 *
 * <p>The anchor also moves by itself every {@link #STARTS_PER_ANCHOR} starts. Each write carries
 * its whole shard's holder lines, so a shard that one replica filled from its anchor onward makes
 * every later write to it, and every other replica's load of that write, cost in proportion to
 * all it holds: up to 5,888 lines at a /12 with 20,000 Services held (a shard spans 8,192
 * addresses there), where values spread at random would put about 160 in each shard. Moving on
 * after a few hundred values keeps a shard's lines near what the range holds per shard, plus at
 * most that many, whatever the range's size; replicas still meet in a shard rarely (a new anchor
 * is as random as the first).
 *
 * <p>A stay is long enough for a few batches of values reserved ahead (64 each, with the
 * NodePorts' about 40 between them): the holders of one batch's values are named with the next
 * batch's write, and a stay that outlasts both puts them in the same shard, one write instead of
 * two. With stays of 64 every batch moved the anchor, and the names went to another shard.
 *
 * <p>The anchor is a fraction of the band, so one anchor serves bands of every size; a start
 * falls at most {@link #SPREAD} offsets past it. Choices between ranges are not starts and stay
 * uniform (see {@link StartStrategy}).
 *
 * <p>Any thread may use it: the jitter comes from the calling thread's {@link ThreadLocalRandom}.
 */
public final class AnchoredStart implements StartStrategy {

  /** How far past the anchor a start may fall: starts stay within a word or two of the bitmap. */
  static final int SPREAD = 64;
  /** Starts near one anchor before it moves by itself: what one stay adds to a shard, at most. */
  static final int STARTS_PER_ANCHOR = 256;

  /** Where starts fall in a band below 2^63, as a fraction of its size. */
  private volatile double anchor;
  /** Where starts fall in a band of 2^63 or more offsets. */
  private volatile long anchorBits;
  /** Starts left before the anchor moves by itself; racing threads may move it a start early or late. */
  private final AtomicInteger startsLeft = new AtomicInteger();
  private final int startsPerAnchor;

  public AnchoredStart() {
    this(STARTS_PER_ANCHOR);
  }

  /** @param startsPerAnchor how many starts fall near one anchor before it moves by itself; positive */
  AnchoredStart(int startsPerAnchor) {
    if (startsPerAnchor <= 0) {
      throw new IllegalArgumentException("startsPerAnchor must be positive");
    }
    this.startsPerAnchor = startsPerAnchor;
    reanchor();
  }

  /** Moves the anchor to a new random place. */
  public void reanchor() {
    anchor = ThreadLocalRandom.current().nextDouble();
    // Below 2^63, so starts stay below any unsigned band size of at least 2^63 (huge sparse ranges).
    anchorBits = ThreadLocalRandom.current().nextLong() >>> 1;
    startsLeft.set(startsPerAnchor);
  }

  /**
   * Counts a start made from the current anchor; the anchor moves once it has had its
   * {@link #startsPerAnchor}. Dry runs count too (they start a scan like any allocation): a burst
   * of them moves the anchor sooner, which changes nothing stored.
   */
  private void counted() {
    if (startsLeft.decrementAndGet() <= 0) {
      reanchor();
    }
  }

  @Override
  public int startIn(int bandSize) {
    if (bandSize <= 0) {
      throw new IllegalArgumentException("band size must be positive");
    }
    long base = (long) (anchor * bandSize);
    int start = (int) ((base + ThreadLocalRandom.current().nextInt(Math.min(bandSize, SPREAD))) % bandSize);
    counted();
    return start;
  }

  @Override
  public long startInUnsigned(long bandSize) {
    long start = unsignedStart(bandSize);
    counted();
    return start;
  }

  private long unsignedStart(long bandSize) {
    if (bandSize > 0) {
      long base = (long) (anchor * bandSize);
      long jitter = ThreadLocalRandom.current().nextLong(Math.min(bandSize, SPREAD));
      return Math.floorMod(base + jitter, bandSize);
    }
    if (bandSize == 0) {
      throw new IllegalArgumentException("band size must not be 0");
    }
    long candidate;
    do {
      // Fits, unless the anchor lies within SPREAD below 2^63 and the band ends just past it: draw again.
      candidate = anchorBits + ThreadLocalRandom.current().nextLong(SPREAD);
    } while (Long.compareUnsigned(candidate, bandSize) >= 0);
    return candidate;
  }
}
