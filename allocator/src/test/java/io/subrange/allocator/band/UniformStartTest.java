package io.subrange.allocator.band;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class UniformStartTest {

  @Test
  void drawsExactlyWhatItsGeneratorDraws() {
    // Tests seed allocators through it: the same seed must give the same starts as the generator.
    UniformStart starts = new UniformStart(new SplittableRandom(42));
    SplittableRandom same = new SplittableRandom(42);
    for (int i = 0; i < 100; i++) {
      assertThat(starts.startIn(1000)).isEqualTo(same.nextInt(1000));
      assertThat(starts.startInUnsigned(1L << 40)).isEqualTo(same.nextLong(1L << 40));
    }
  }

  @Test
  void startsSpreadOverTheWholeBand() {
    Set<Integer> windows = new HashSet<>();
    for (int i = 0; i < 1000; i++) {
      int start = UniformStart.THREAD_LOCAL.startIn(1_000_000);
      assertThat(start).isBetween(0, 999_999);
      windows.add(start / 1024);
    }
    assertThat(windows).as("1000 starts fall in many 1024-wide windows").hasSizeGreaterThan(500);
  }

  @Test
  void unsignedBoundsOfTwoToTheSixtyThreeAndMoreHold() {
    long slash64 = -1L;  // 2^64-1
    long justPast = Long.MIN_VALUE + 5;  // 2^63+5
    for (int i = 0; i < 1000; i++) {
      assertThat(Long.compareUnsigned(UniformStart.THREAD_LOCAL.startInUnsigned(slash64), slash64)).isNegative();
      assertThat(Long.compareUnsigned(UniformStart.THREAD_LOCAL.startInUnsigned(justPast), justPast)).isNegative();
    }
    assertThatThrownBy(() -> UniformStart.THREAD_LOCAL.startInUnsigned(0)).isInstanceOf(IllegalArgumentException.class);
  }
}
