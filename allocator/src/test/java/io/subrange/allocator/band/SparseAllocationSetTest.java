package io.subrange.allocator.band;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class SparseAllocationSetTest {

  /** A /64: 2^64-1 assignable addresses, unsigned size -1. */
  private static final long SLASH_64 = -1L;

  @Test
  void servesTheWholeSlash64IncludingItsTopHalf() {
    SparseAllocationSet set = new SparseAllocationSet(SLASH_64, 256, new UniformStart(new SplittableRandom(9)));
    boolean sawTopHalf = false;
    Set<Long> seen = new HashSet<>();
    for (int i = 0; i < 10_000; i++) {
      long offset = set.allocateNext();
      assertThat(Long.compareUnsigned(offset, 256)).as("dynamic band").isGreaterThanOrEqualTo(0);
      assertThat(offset).as("never the unusable 2^64-1").isNotEqualTo(-1L);
      sawTopHalf |= offset < 0;  // unsigned >= 2^63
      assertThat(seen.add(offset)).isTrue();
    }
    assertThat(sawTopHalf).as("random starts reach the upper 2^63 offsets").isTrue();
    assertThat(set.used()).isEqualTo(10_000);
    assertThat(set.isAllocated(-2L)).isFalse();
    assertThat(set.allocate(-2L)).as("the last address of a /64").isTrue();
    assertThatThrownBy(() -> set.allocate(-1L)).isInstanceOf(IndexOutOfBoundsException.class);
  }

  @Test
  void fallsBackToTheStaticBandOnlyWhenTheDynamicBandIsFull() {
    SparseAllocationSet set = new SparseAllocationSet(40, 16, new UniformStart(new SplittableRandom(3)));
    for (int i = 0; i < 24; i++) {
      assertThat(set.allocateNext()).isBetween(16L, 39L);
    }
    for (int i = 0; i < 16; i++) {
      assertThat(set.allocateNext()).isBetween(0L, 15L);
    }
    assertThat(set.allocateNext()).isEqualTo(-1L);
    assertThat(set.usedInStaticBand()).isEqualTo(16);
  }

  @Test
  void snapshotsAreProportionalToWhatIsAllocatedAndRoundTrip() {
    SparseAllocationSet set = new SparseAllocationSet(SLASH_64, 256, new UniformStart(new SplittableRandom(5)));
    for (int i = 0; i < 1000; i++) {
      set.allocateNext();
    }
    set.allocate(0);
    set.allocate(-2L);
    byte[] snapshot = set.snapshot();
    assertThat(snapshot.length).isLessThan(1002 * 10);
    SparseAllocationSet copy = new SparseAllocationSet(SLASH_64, 256, new UniformStart(new SplittableRandom(5)));
    copy.restore(snapshot);
    assertThat(copy.used()).isEqualTo(1002);
    assertThat(copy.usedInStaticBand()).isEqualTo(1);
    assertThat(copy.isAllocated(-2L)).isTrue();
    assertThat(copy.snapshot()).isEqualTo(snapshot);
  }

  @Test
  void refusesCorruptSnapshots() {
    SparseAllocationSet set = new SparseAllocationSet(1000, 16, new UniformStart(new SplittableRandom(5)));
    assertThatThrownBy(() -> set.restore(new byte[] {1, (byte) 0xE8, 0x07})).hasMessageContaining("beyond the range");
    assertThatThrownBy(() -> set.restore(new byte[] {2, 5, 0})).hasMessageContaining("repeats");
    assertThatThrownBy(() -> set.restore(new byte[] {2, 5})).hasMessageContaining("ends inside");
    assertThatThrownBy(() -> set.restore(new byte[] {1, 5, 7})).hasMessageContaining("trailing");
    assertThatThrownBy(() -> set.restore(new byte[] {(byte) 0x80})).hasMessageContaining("ends inside");
    set.restore(new byte[] {2, 5, 1});
    assertThat(set.isAllocated(5)).isTrue();
    assertThat(set.isAllocated(6)).isTrue();
  }
}
