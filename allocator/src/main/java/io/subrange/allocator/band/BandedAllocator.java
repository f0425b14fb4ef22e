package io.subrange.allocator.band;

import java.util.BitSet;
import java.util.function.LongConsumer;

/**
 * Allocates offsets {@code 0 .. size-1} of one range, split into a static band
 * {@code [0, staticBandSize)} and a dynamic band {@code [staticBandSize, size)}.
 *
 * <p>{@link #allocateNext()} prefers the dynamic band: it starts at the offset its
 * {@link StartStrategy} picks inside it and scans forward, wrapping inside that band; only when
 * the dynamic band is full does it do the same inside the static band. {@link #allocate(long)}
 * takes any free offset in either band.
 *
 * <p>Implementations are not thread-safe, like {@link java.util.BitSet}; the domain allocators
 * that own them serialize access.
 */
public interface BandedAllocator {

  /** Number of offsets in the range. */
  long size();

  /** Number of offsets in the static band, which starts at offset 0. */
  long staticBandSize();

  /**
   * Takes {@code offset}. Returns false when it was already taken.
   *
   * @throws IndexOutOfBoundsException when {@code offset} is outside {@code [0, size)}
   */
  boolean allocate(long offset);

  /** Takes a free offset, dynamic band first; returns -1 when the range is full. */
  long allocateNext();

  /**
   * The offset {@link #allocateNext()} would take now, without taking it (for dry runs);
   * -1 when the range is full.
   */
  long peekNext();

  /** Frees {@code offset}. Returns false when it was not taken. */
  boolean release(long offset);

  boolean isAllocated(long offset);

  /** Taken offsets in the whole range. */
  long used();

  /** Taken offsets inside the static band. */
  long usedInStaticBand();

  /** Free offsets in the whole range (unsigned). */
  default long free() {
    return size() - used();
  }

  /** Calls {@code action} with every taken offset (in no particular order for sparse ranges). */
  void forEachAllocated(LongConsumer action);

  /**
   * Calls {@code action} with every taken offset in {@code [from, to)}, in order ({@code to} is
   * cut to the size): one stored shard's part of the range.
   */
  default void forEachAllocatedIn(long from, long to, LongConsumer action) {
    for (long offset = from, end = Math.min(to, size()); offset < end; offset++) {
      if (isAllocated(offset)) {
        action.accept(offset);
      }
    }
  }

  /**
   * Makes {@code [from, to)} hold exactly {@code taken} (bit i is offset {@code from + i}; bits past
   * the size are ignored), leaving the rest of the range alone: one stored shard loaded again.
   */
  default void replaceIn(long from, long to, BitSet taken) {
    for (long offset = from, end = Math.min(to, size()); offset < end; offset++) {
      if (taken.get((int) (offset - from))) {
        allocate(offset);
      } else {
        release(offset);
      }
    }
  }

  /**
   * The state in Kubernetes' RangeAllocation {@code data} form: a bit array where bit i is
   * offset i, as the minimal big-endian bytes of that number (Go's {@code big.Int.Bytes()}).
   */
  byte[] snapshot();

  /** Frees every offset. */
  void clear();

  /**
   * Replaces the state with a {@link #snapshot()}.
   *
   * @throws IllegalArgumentException when the data names offsets outside the range
   */
  void restore(byte[] data);
}
