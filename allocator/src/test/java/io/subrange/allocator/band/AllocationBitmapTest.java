package io.subrange.allocator.band;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class AllocationBitmapTest {

  @Test
  void fillsTheDynamicBandBeforeTouchingTheStaticBand() {
    AllocationBitmap bitmap = new AllocationBitmap(254, 16, new UniformStart(new SplittableRandom(1)));
    Set<Long> seen = new HashSet<>();
    for (int i = 0; i < 254 - 16; i++) {
      long offset = bitmap.allocateNext();
      assertThat(offset).isBetween(16L, 253L);
      assertThat(seen.add(offset)).isTrue();
    }
    assertThat(bitmap.usedInStaticBand()).isZero();
    for (int i = 0; i < 16; i++) {
      assertThat(bitmap.allocateNext()).isBetween(0L, 15L);
    }
    assertThat(bitmap.allocateNext()).isEqualTo(-1);
    assertThat(bitmap.peekNext()).isEqualTo(-1);
    assertThat(bitmap.used()).isEqualTo(254);
    assertThat(bitmap.free()).isZero();
  }

  @Test
  void peekDoesNotTake() {
    AllocationBitmap bitmap = new AllocationBitmap(100, 16, new UniformStart(new SplittableRandom(7)));
    long peeked = bitmap.peekNext();
    assertThat(peeked).isBetween(16L, 99L);
    assertThat(bitmap.isAllocated(peeked)).isFalse();
    assertThat(bitmap.used()).isZero();
  }

  @Test
  void staticAllocationTakesAnyFreeOffsetOnce() {
    AllocationBitmap bitmap = new AllocationBitmap(100, 16, new UniformStart(new SplittableRandom(7)));
    assertThat(bitmap.allocate(9)).isTrue();
    assertThat(bitmap.allocate(9)).isFalse();
    assertThat(bitmap.allocate(50)).isTrue();
    assertThat(bitmap.usedInStaticBand()).isEqualTo(1);
    assertThat(bitmap.used()).isEqualTo(2);
    assertThat(bitmap.release(9)).isTrue();
    assertThat(bitmap.release(9)).isFalse();
    assertThat(bitmap.usedInStaticBand()).isZero();
    assertThatThrownBy(() -> bitmap.allocate(100)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> bitmap.allocate(-1)).isInstanceOf(IndexOutOfBoundsException.class);
  }

  @Test
  void findsTheLastFreeOffsetOfANearlyFullLargeRange() {
    int size = 1_048_574;
    AllocationBitmap bitmap = new AllocationBitmap(size, 256, new UniformStart(new SplittableRandom(3)));
    for (int i = 0; i < size; i++) {
      bitmap.allocate(i);
    }
    bitmap.release(777_777);
    assertThat(bitmap.allocateNext()).isEqualTo(777_777);
    bitmap.release(3);
    assertThat(bitmap.allocateNext()).isEqualTo(3);
    assertThat(bitmap.allocateNext()).isEqualTo(-1);
  }

  /** The RangeAllocation data is Go's big.Int.Bytes() of the bit array: offsets 0 and 9 are 513. */
  @Test
  void snapshotsInTheRangeAllocationByteFormat() {
    AllocationBitmap bitmap = new AllocationBitmap(254, 16, new UniformStart(new SplittableRandom(1)));
    assertThat(bitmap.snapshot()).isEmpty();
    bitmap.allocate(0);
    bitmap.allocate(9);
    assertThat(bitmap.snapshot()).containsExactly(0x02, 0x01);
    bitmap.allocate(64);
    byte[] expected = new byte[9];
    expected[0] = 0x01;        // bit 64
    expected[7] = 0x02;        // bit 9
    expected[8] = 0x01;        // bit 0
    assertThat(bitmap.snapshot()).containsExactly(expected);

    AllocationBitmap restored = new AllocationBitmap(254, 16, new UniformStart(new SplittableRandom(1)));
    restored.restore(expected);
    assertThat(restored.used()).isEqualTo(3);
    assertThat(restored.usedInStaticBand()).isEqualTo(2);
    assertThat(restored.isAllocated(64)).isTrue();
  }

  @Test
  void refusesSnapshotsThatNameOffsetsBeyondTheRange() {
    AllocationBitmap bitmap = new AllocationBitmap(10, 0, new UniformStart(new SplittableRandom(1)));
    assertThatThrownBy(() -> bitmap.restore(new byte[] {0x04, 0x00})).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> bitmap.restore(new byte[] {0x01, 0x00, 0x00})).isInstanceOf(IllegalArgumentException.class);
    bitmap.restore(new byte[] {0x00, 0x02, 0x00});  // leading zero byte: not minimal, still valid
    assertThat(bitmap.isAllocated(9)).isTrue();
    assertThat(bitmap.used()).isEqualTo(1);
  }
}
