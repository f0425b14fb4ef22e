package io.subrange.allocator.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.port.PortRange;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * A range stored a shard at a time: what changed is reported by offset, a window exports what a
 * shard holds, and loading the windows another replica changed gives the same picture as loading
 * its whole state.
 */
class AllocationEngineWindowTest {

  private static final Clock AT_1000 = Clock.fixed(Instant.ofEpochSecond(1000), ZoneOffset.UTC);
  private static final RangeKey V4 = RangeKey.serviceIps("kubernetes", IpFamily.IPV4);
  private static final long SPAN = 512;

  private static AllocationEngine replica(long seed) {
    AllocationEngine engine = new AllocationEngine(PortRange.parse("30000-32767"),
        new SplittableRandom(seed), AT_1000);
    engine.addServiceRange("kubernetes", Cidr.parse("10.96.0.0/20"));
    return engine;
  }

  @Test
  void changesAreReportedByOffsetInEveryRangeTheyTouch() {
    AllocationEngine engine = replica(1);
    engine.addServiceRange("narrow", Cidr.parse("10.96.1.0/24"));
    engine.drainChanged();
    engine.reserve(new ReservationRequest(Holder.service("default", "web", ""),
        List.of(IpClaim.specific(IpAddress.parse("10.96.1.7"))), List.of(PortClaim.specific(30100)), false));

    Map<RangeKey, Set<Long>> offsets = engine.drainChangedOffsets();
    // Offsets count from the first assignable address (the network address is not one).
    assertThat(offsets).containsEntry(V4, Set.of(262L)).containsEntry(RangeKey.serviceIps("narrow", IpFamily.IPV4),
        Set.of(6L)).containsEntry(RangeKey.nodePorts(), Set.of(100L));
    assertThat(engine.drainChangedOffsets()).isEmpty();
    assertThat(engine.drainChanged()).hasSize(3);
  }

  @Test
  void loadingTheChangedWindowsGivesWhatLoadingTheWholeStateGives() {
    AllocationEngine writer = replica(1);
    AllocationEngine byWindow = replica(2);
    AllocationEngine whole = replica(3);
    SplittableRandom random = new SplittableRandom(42);
    List<Holder> holding = new ArrayList<>();
    for (int round = 0; round < 30; round++) {
      writer.drainChanged();
      for (int i = 0; i < 20; i++) {
        if (!holding.isEmpty() && random.nextInt(3) == 0) {
          Holder gone = holding.remove(random.nextInt(holding.size()));
          writer.releaseIp(writer.allocations().stream().filter(a -> a.holder().equals(gone)
              && a.kind() == RangeKey.Kind.SERVICE_IPS).map(a -> IpAddress.parse(a.value())).findFirst().orElseThrow(),
              gone);
          writer.allocations().stream().filter(a -> a.holder().equals(gone) && a.kind() == RangeKey.Kind.NODE_PORTS)
              .forEach(a -> writer.releaseNodePort(Integer.parseInt(a.value()), gone));
        } else {
          Holder holder = Holder.service("load", "svc-" + round + "-" + i, "");
          writer.reserve(new ReservationRequest(holder, List.of(IpClaim.dynamic(IpFamily.IPV4)),
              random.nextBoolean() ? List.of(PortClaim.dynamic()) : List.of(), false));
          holding.add(holder);
        }
      }
      Map<RangeKey, Set<Long>> offsets = writer.drainChangedOffsets();
      for (Map.Entry<RangeKey, Set<Long>> changed : offsets.entrySet()) {
        RangeKey key = changed.getKey();
        String range = key.kind() == RangeKey.Kind.NODE_PORTS ? "30000-32767" : "10.96.0.0/20";
        for (long shard : new TreeSet<>(changed.getValue().stream().map(o -> o / SPAN).toList())) {
          RangeWindow window = writer.exportWindow(key, shard * SPAN, (shard + 1) * SPAN);
          assertThat(byWindow.restoreWindow(key, range, window)).isTrue();
        }
      }
      whole.restore(RangeKey.Kind.SERVICE_IPS, IpFamily.IPV4, List.of(writer.export(V4)));
      whole.restore(RangeKey.Kind.NODE_PORTS, null, List.of(writer.export(RangeKey.nodePorts())));

      assertThat(byWindow.allocations()).containsExactlyInAnyOrderElementsOf(whole.allocations())
          .containsExactlyInAnyOrderElementsOf(writer.allocations());
      assertThat(byWindow.export(V4).allocation()).isEqualTo(writer.export(V4).allocation());
      assertThat(byWindow.export(RangeKey.nodePorts()).allocation())
          .isEqualTo(writer.export(RangeKey.nodePorts()).allocation());
      assertThat(byWindow.usage()).isEqualTo(whole.usage());
    }
    assertThat(holding).isNotEmpty();
    // Holders are found by object as well as by value after window loads.
    Holder last = holding.get(holding.size() - 1);
    assertThat(byWindow.holdsAnythingFor(last)).isTrue();
  }

  @Test
  void aWindowLoadsNothingOutsideItAndNothingItDoesNotMarkTaken() {
    AllocationEngine writer = replica(1);
    AllocationEngine reader = replica(2);
    Holder web = Holder.service("default", "web", "");
    writer.reserve(ReservationRequest.ips(web, List.of(IpClaim.specific(IpAddress.parse("10.96.0.10"))), false));
    RangeWindow exported = writer.exportWindow(V4, 0, SPAN);
    // A ledger line for a value in another shard, and one for a value the bits say is free.
    List<RangeState.Entry> entries = new ArrayList<>(exported.entries());
    entries.add(new RangeState.Entry("10.96.3.1", Holder.service("default", "elsewhere", ""), 5));
    entries.add(new RangeState.Entry("10.96.0.11", Holder.service("default", "free", ""), 5));
    RangeWindow tampered = new RangeWindow(0, SPAN, exported.taken(), entries);

    assertThat(reader.restoreWindow(V4, "10.96.0.0/20", tampered)).isTrue();
    assertThat(reader.allocations()).extracting(Allocation::value).containsExactly("10.96.0.10");
    assertThat(reader.holderOf(IpAddress.parse("10.96.0.10"))).contains(web);
  }

  @Test
  void rangesThatCannotLoadAWindowSaySo() {
    AllocationEngine engine = replica(1);
    RangeWindow empty = new RangeWindow(0, SPAN, new java.util.BitSet(), List.of());
    assertThat(engine.restoreWindow(V4, "10.96.0.0/24", empty)).as("stored for another range").isFalse();
    engine.addServiceRange("inside", Cidr.parse("10.96.1.0/24"));
    assertThat(engine.restoreWindow(V4, "10.96.0.0/20", empty)).as("overlapping ranges load together").isFalse();
    engine.removeServiceRange("inside");
    engine.requireLoadedState();
    assertThat(engine.restoreWindow(V4, "10.96.0.0/20", empty)).as("not loaded yet").isFalse();
  }
}
