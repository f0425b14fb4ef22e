package io.subrange.allocator.band;

/** Picks the representation for a range: a bitmap while one bit per offset is cheap, sparse beyond. */
public final class BandedAllocators {

  private BandedAllocators() {
  }

  /**
   * @param size unsigned number of offsets (-1 means 2^64-1)
   * @param starts where dynamic allocation starts looking in a band
   */
  public static BandedAllocator create(long size, long staticBandSize, StartStrategy starts) {
    if (isBitmap(size)) {
      return new AllocationBitmap(size, staticBandSize, starts);
    }
    return new SparseAllocationSet(size, staticBandSize, starts);
  }

  /** True when {@link #create} holds a range of this size as a bitmap (its snapshot is RangeAllocation data). */
  public static boolean isBitmap(long size) {
    return size > 0 && size <= AllocationBitmap.MAX_SIZE;
  }
}
