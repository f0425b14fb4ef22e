package io.subrange.allocator.band;

import java.util.random.RandomGenerator;

/** Picks the representation for a range: a bitmap while one bit per offset is cheap, sparse beyond. */
public final class BandedAllocators {

  private BandedAllocators() {
  }

  /**
   * @param size unsigned number of offsets (-1 means 2^64-1)
   */
  public static BandedAllocator create(long size, long staticBandSize, RandomGenerator random) {
    if (isBitmap(size)) {
      return new AllocationBitmap(size, staticBandSize, random);
    }
    return new SparseAllocationSet(size, staticBandSize, random);
  }

  /** True when {@link #create} holds a range of this size as a bitmap (its snapshot is RangeAllocation data). */
  public static boolean isBitmap(long size) {
    return size > 0 && size <= AllocationBitmap.MAX_SIZE;
  }
}
