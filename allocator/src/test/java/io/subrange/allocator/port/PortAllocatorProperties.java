package io.subrange.allocator.port;

import static org.assertj.core.api.Assertions.assertThat;

import io.subrange.allocator.band.UniformStart;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

class PortAllocatorProperties {

  @Property(tries = 200)
  void portsStayInRangeAreNeverSharedAndPreferTheDynamicBand(@ForAll @IntRange(min = 1, max = 65000) int first,
      @ForAll @IntRange(min = 1, max = 600) int length, @ForAll long seed,
      @ForAll List<@IntRange(min = -1, max = 700) Integer> ops) {
    int last = Math.min(65535, first + length - 1);
    PortRange range = new PortRange(first, last);
    PortAllocator ports = new PortAllocator(range, new UniformStart(new SplittableRandom(seed)));
    TreeSet<Integer> model = new TreeSet<>();
    int band = range.staticBandSize();
    for (int op : ops) {
      if (op < 0) {
        boolean dynamicHadRoom = model.subSet(first + band, last + 1).size() < range.size() - band;
        int port = ports.allocateNext();
        if (model.size() == range.size()) {
          assertThat(port).isEqualTo(-1);
          continue;
        }
        assertThat(range.contains(port)).isTrue();
        assertThat(model.add(port)).isTrue();
        if (dynamicHadRoom) {
          assertThat(port).isGreaterThanOrEqualTo(first + band);
        }
      } else if (op % 2 == 0) {
        int port = first + op % range.size();
        assertThat(ports.allocate(port)).isEqualTo(model.add(port));
      } else {
        int port = first + op % range.size();
        assertThat(ports.release(port)).isEqualTo(model.remove(port));
        assertThat(ports.release(port)).isFalse();
      }
      assertThat(ports.usage().used()).isEqualTo(model.size());
      assertThat(ports.usage().free()).as("free, against the model").isEqualTo(range.size() - model.size());
    }
    PortAllocator copy = new PortAllocator(range, new UniformStart(new SplittableRandom(seed)));
    copy.restore(ports.snapshot());
    for (int port = first; port <= last; port++) {
      assertThat(copy.isAllocated(port)).isEqualTo(model.contains(port));
    }
  }
}
