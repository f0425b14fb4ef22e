package io.subrange.allocator.band;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class AnchoredStartTest {

  @Test
  void startsStayNearTheAnchorUntilItMoves() {
    AnchoredStart starts = new AnchoredStart();
    Set<Integer> windows = new HashSet<>();
    for (int i = 0; i < 1000; i++) {
      int start = starts.startIn(1_000_000);
      assertThat(start).isBetween(0, 999_999);
      windows.add(start / 1024);
    }
    assertThat(windows).as("1000 starts fall in one or two 1024-wide windows").hasSizeLessThanOrEqualTo(2);
    Set<Integer> anchors = new HashSet<>();
    for (int i = 0; i < 50; i++) {
      starts.reanchor();
      anchors.add(starts.startIn(1_000_000) / 1024);
    }
    assertThat(anchors).as("reanchoring moves it").hasSizeGreaterThan(40);
  }

  @Test
  void anAnchoredBitmapFillsOneRegionFirstAndStillKeepsTheBands() {
    AllocationBitmap bitmap = new AllocationBitmap(65_536, 256, new AnchoredStart());
    long band = 65_536 - 256;
    long first = bitmap.allocateNext();
    for (int i = 0; i < 400; i++) {
      long next = bitmap.allocateNext();
      assertThat(next).as("dynamic band first").isGreaterThanOrEqualTo(256);
      // The scan wraps from the band's end to its start: distance is measured around the band.
      long apart = Math.abs(next - first);
      assertThat(Math.min(apart, band - apart)).as("near the first").isLessThan(1024);
    }
  }

  @Test
  void hugeBoundsNeverLoop() {
    SparseAllocationSet sparse = new SparseAllocationSet(-1L, 256, new AnchoredStart());
    for (int i = 0; i < 1000; i++) {
      assertThat(Long.compareUnsigned(sparse.allocateNext(), 256)).isGreaterThanOrEqualTo(0);
    }
    assertThat(new AnchoredStart().startInUnsigned(5)).isBetween(0L, 4L);
    long justPast = Long.MIN_VALUE + 5;  // 2^63+5: an anchor just below 2^63 may overshoot and draw again
    for (int i = 0; i < 1000; i++) {
      assertThat(Long.compareUnsigned(new AnchoredStart().startInUnsigned(justPast), justPast)).isNegative();
    }
  }
}
