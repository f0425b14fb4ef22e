package io.subrange.allocator.port;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.subrange.allocator.band.UniformStart;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class PortAllocatorTest {

  /** KEP-3668's worked example: 30000-32767 reserves 30000-30085 for static requests. */
  @Test
  void theDefaultRangeReservesItsFirst86Ports() {
    PortRange range = PortRange.parse("30000-32767");
    assertThat(range.staticBandSize()).isEqualTo(86);
    assertThat(range.describeStaticBand()).isEqualTo("30000-30085");
    PortAllocator ports = new PortAllocator(range, new UniformStart(new SplittableRandom(1)));
    Set<Integer> seen = new HashSet<>();
    for (int i = 0; i < 2768 - 86; i++) {
      int port = ports.allocateNext();
      assertThat(port).isBetween(30086, 32767);
      assertThat(seen.add(port)).isTrue();
    }
    assertThat(ports.usage().usedInStaticBand()).isZero();
    assertThat(ports.allocateNext()).as("then the static band").isBetween(30000, 30085);
  }

  @Test
  void staticRequestsMayUseEitherBandOnce() {
    PortAllocator ports = new PortAllocator(PortRange.parse("30000-32767"), new UniformStart(new SplittableRandom(1)));
    assertThat(ports.allocate(30000)).isTrue();
    assertThat(ports.allocate(32767)).isTrue();
    assertThat(ports.allocate(30000)).isFalse();
    assertThat(ports.isAllocated(30000)).isTrue();
    assertThat(ports.release(30000)).isTrue();
    assertThat(ports.release(30000)).isFalse();
    assertThatThrownBy(() -> ports.allocate(29999)).hasMessage("port 29999 is not in the NodePort range 30000-32767");
    assertThatThrownBy(() -> ports.allocate(32768)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void smallRangesHaveNoBand() {
    PortRange range = PortRange.parse("30000-30015");
    assertThat(range.staticBandSize()).isZero();
    PortAllocator ports = new PortAllocator(range, new UniformStart(new SplittableRandom(1)));
    for (int i = 0; i < 16; i++) {
      assertThat(ports.allocateNext()).isBetween(30000, 30015);
    }
    assertThat(ports.allocateNext()).isEqualTo(-1);
  }

  @Test
  void snapshotsRoundTrip() {
    PortAllocator ports = new PortAllocator(PortRange.parse("30000-32767"), new UniformStart(new SplittableRandom(1)));
    ports.allocate(30000);
    ports.allocate(30009);
    assertThat(ports.snapshot()).containsExactly(0x02, 0x01);
    PortAllocator copy = new PortAllocator(PortRange.parse("30000-32767"), new UniformStart(new SplittableRandom(1)));
    copy.restore(ports.snapshot());
    assertThat(copy.isAllocated(30009)).isTrue();
    assertThat(copy.usage().used()).isEqualTo(2);
  }
}
