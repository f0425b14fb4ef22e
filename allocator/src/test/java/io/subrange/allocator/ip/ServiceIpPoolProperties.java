package io.subrange.allocator.ip;

import static org.assertj.core.api.Assertions.assertThat;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * The pool against a plain set of taken addresses, with overlapping ranges inside 10.0.0.0/22
 * being added, marked terminating and removed between allocations.
 */
class ServiceIpPoolProperties {

  private static final List<String> CANDIDATES = List.of("10.0.0.0/22", "10.0.0.0/24", "10.0.1.0/24",
      "10.0.0.0/26", "10.0.2.0/23", "10.0.3.240/28", "10.0.0.64/27");

  enum Kind { NEXT, SPECIFIC, RELEASE, ADD, TERMINATE, REMOVE }

  record Op(Kind kind, int value) {
  }

  @Provide
  Arbitrary<List<Op>> operations() {
    Arbitrary<Kind> kind = Arbitraries.frequency(Tuple.of(8, Kind.NEXT), Tuple.of(3, Kind.SPECIFIC),
        Tuple.of(4, Kind.RELEASE), Tuple.of(1, Kind.ADD), Tuple.of(1, Kind.TERMINATE), Tuple.of(1, Kind.REMOVE));
    return Combinators.combine(kind, Arbitraries.integers().between(0, 1 << 20)).as(Op::new).list().ofMaxSize(400);
  }

  @Property(tries = 250)
  void mergedRangesNeverShareOrStrandAnAddress(@ForAll long seed, @ForAll("operations") List<Op> ops) {
    ServiceIpPool pool = new ServiceIpPool(IpFamily.IPV4, new SplittableRandom(seed));
    Map<String, ServiceIpRange> live = new HashMap<>();
    Map<String, ServiceIpRange> terminating = new HashMap<>();
    Set<IpAddress> taken = new HashSet<>();
    pool.add("r0", Cidr.parse(CANDIDATES.get(0)));
    live.put("r0", ServiceIpRange.of(Cidr.parse(CANDIDATES.get(0))));

    for (Op op : ops) {
      String name = "r" + (op.value() % CANDIDATES.size());
      ServiceIpRange candidate = ServiceIpRange.of(Cidr.parse(CANDIDATES.get(op.value() % CANDIDATES.size())));
      IpAddress address = IpAddress.ipv4(0x0A00_0000L + op.value() % 1024);
      switch (op.kind()) {
        case NEXT -> {
          boolean dynamicRoom = live.values().stream().anyMatch(r -> dynamicTaken(r, taken) < r.size() - r.staticBandSize());
          boolean anyRoom = live.values().stream().anyMatch(r -> takenIn(r, taken) < r.size());
          ServiceIpPool.Allocated got = pool.allocateNext();
          if (!anyRoom) {
            assertThat(got).isNull();
            break;
          }
          assertThat(got).isNotNull();
          assertThat(taken.add(got.address())).as("never twice: " + got.address()).isTrue();
          ServiceIpRange chosen = ServiceIpRange.of(got.range());
          assertThat(live.values()).as("chosen from a live range").contains(live.values().stream()
              .filter(r -> r.cidr().equals(got.range())).findFirst().orElse(null));
          assertThat(chosen.canAssign(got.address())).isTrue();
          if (dynamicRoom) {
            assertThat(chosen.offsetOf(got.address())).as("dynamic band first").isGreaterThanOrEqualTo(chosen.staticBandSize());
          }
        }
        case SPECIFIC -> {
          boolean assignable = live.values().stream().anyMatch(r -> r.canAssign(address));
          if (!assignable) {
            assertThat(pool.whyNotAssignable(address)).isNotNull();
            break;
          }
          ServiceIpPool.Take take = pool.allocate(address);
          assertThat(take == ServiceIpPool.Take.TAKEN).isEqualTo(taken.add(address));
        }
        case RELEASE -> {
          boolean removed = taken.remove(address);
          assertThat(pool.release(address)).isEqualTo(removed);
          assertThat(pool.release(address)).isFalse();
        }
        case ADD -> {
          if (!live.containsKey(name) && !terminating.containsKey(name)) {
            pool.add(name, candidate.cidr());
            live.put(name, candidate);
          } else if (terminating.containsKey(name)) {
            pool.add(name, candidate.cidr());  // revives it
            live.put(name, terminating.remove(name));
          }
        }
        case TERMINATE -> {
          if (live.containsKey(name)) {
            pool.markTerminating(name);
            terminating.put(name, live.remove(name));
          }
        }
        case REMOVE -> {
          if (terminating.containsKey(name)) {
            ServiceIpRange going = terminating.get(name);
            long stranded = taken.stream().filter(going::canAssign)
                .filter(a -> live.values().stream().noneMatch(r -> r.canAssign(a))).count();
            assertThat(pool.inUseOnlyBy(name)).isEqualTo(stranded);
            if (stranded == 0) {
              pool.remove(name);
              terminating.remove(name);
              // addresses it covered are still held where other (terminating) ranges cover them
              taken.removeIf(a -> live.values().stream().noneMatch(r -> r.canAssign(a))
                  && terminating.values().stream().noneMatch(r -> r.canAssign(a)));
            }
          }
        }
      }
      Map<String, ServiceIpRange> all = new HashMap<>(live);
      all.putAll(terminating);
      for (var usage : pool.usage()) {
        ServiceIpRange range = all.values().stream().filter(r -> r.cidr().toString().equals(usage.range()))
            .findFirst().orElseThrow();
        assertThat(usage.used()).as("used in " + usage.range()).isEqualTo(takenIn(range, taken));
        assertThat(usage.free()).as("free, against the model").isEqualTo(range.size() - takenIn(range, taken));
      }
      for (IpAddress held : taken) {
        assertThat(pool.isAllocated(held)).isTrue();
      }
    }
  }

  private static long takenIn(ServiceIpRange range, Set<IpAddress> taken) {
    return taken.stream().filter(range::canAssign).count();
  }

  private static long dynamicTaken(ServiceIpRange range, Set<IpAddress> taken) {
    return taken.stream().filter(range::canAssign).filter(a -> range.offsetOf(a) >= range.staticBandSize()).count();
  }
}
