package io.subrange.allocator.band;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class BandedAllocatorClearTest {

  @Test
  void clearFreesEverythingInBothRepresentations() {
    for (BandedAllocator allocator : new BandedAllocator[] {
        BandedAllocators.create(1000, 16, new UniformStart(new SplittableRandom(1))),
        BandedAllocators.create(-1L, 256, new UniformStart(new SplittableRandom(1)))}) {
      allocator.allocate(3);
      for (int i = 0; i < 200; i++) {
        allocator.allocateNext();
      }
      allocator.clear();
      assertThat(allocator.used()).as(allocator.getClass().getSimpleName()).isZero();
      assertThat(allocator.usedInStaticBand()).isZero();
      assertThat(allocator.isAllocated(3)).isFalse();
      assertThat(allocator.allocate(3)).as("taken again after clear").isTrue();
      BandedAllocator fresh = BandedAllocators.create(allocator.size(), allocator.staticBandSize(),
          new UniformStart(new SplittableRandom(2)));
      fresh.allocate(3);
      assertThat(allocator.snapshot()).as("the same state as a fresh allocator's").isEqualTo(fresh.snapshot());
    }
  }
}
