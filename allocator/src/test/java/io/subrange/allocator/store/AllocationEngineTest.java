package io.subrange.allocator.store;

import io.subrange.allocator.band.RangeUsage;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.subrange.allocator.ip.ServiceIpRange;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.band.ThreadLocalRandomGenerator;
import io.subrange.allocator.podcidr.ClusterCidr;
import io.subrange.allocator.podcidr.NodeView;
import io.subrange.allocator.podcidr.PodCidrAllocation;
import io.subrange.allocator.port.PortRange;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class AllocationEngineTest {

  private final AllocationEngine engine = AllocationEngine.withRanges(
      Map.of("v4", Cidr.parse("10.0.0.0/24"), "v6", Cidr.parse("fd00::/120")), new SplittableRandom(42));
  private final Holder dns = Holder.service("kube-system", "kube-dns", "");
  private final Holder web = Holder.service("default", "web", "");

  @Test
  void remembersWhoHoldsAStaticAddressAndNamesThemOnConflict() {
    IpAddress tenth = IpAddress.parse("10.0.0.10");
    List<IpAssignment> got = reserve(dns, IpClaim.specific(tenth));
    assertThat(got).containsExactly(new IpAssignment(tenth, Cidr.parse("10.0.0.0/24"), Scope.STATIC, false));
    assertThat(reserve(dns, IpClaim.specific(tenth))).containsExactly(
        new IpAssignment(tenth, Cidr.parse("10.0.0.0/24"), Scope.STATIC, true));
    assertThat(engine.holderOf(tenth)).contains(dns);

    assertThatThrownBy(() -> reserve(web, IpClaim.specific(tenth)))
        .isInstanceOfSatisfying(AlreadyAllocatedException.class, e -> {
          assertThat(e.holder()).contains(dns);
          assertThat(e.getMessage()).isEqualTo(
              "10.0.0.10 is already allocated to Service kube-system/kube-dns in 10.0.0.0/24");
        });
  }

  @Test
  void theSameObjectAskingAgainGetsWhatItHolds() {
    IpAddress tenth = IpAddress.parse("10.0.0.10");
    reserve(dns, IpClaim.specific(tenth));
    assertThat(reserve(dns, IpClaim.specific(tenth))).extracting(IpAssignment::address).containsExactly(tenth);

    IpAddress dynamic = reserve(web, IpClaim.dynamic(IpFamily.IPV4)).get(0).address();
    assertThat(reserve(web, IpClaim.dynamic(IpFamily.IPV4)).get(0).address()).isEqualTo(dynamic);
    assertThat(usage(IpFamily.IPV4).used()).isEqualTo(2);
  }

  @Test
  void objectsWithoutANameYetNeverShareAnAddress() {
    Holder unnamed = Holder.service("default", "", "");
    IpAddress first = reserve(unnamed, IpClaim.dynamic(IpFamily.IPV4)).get(0).address();
    IpAddress second = reserve(unnamed, IpClaim.dynamic(IpFamily.IPV4)).get(0).address();
    assertThat(first).isNotEqualTo(second);
    assertThatThrownBy(() -> reserve(Holder.service("default", "", ""), IpClaim.specific(first)))
        .isInstanceOf(AlreadyAllocatedException.class);
  }

  @Test
  void dynamicAddressesComeFromTheDynamicBand() {
    ServiceIpRange range = ServiceIpRange.of(Cidr.parse("10.0.0.0/24"));
    for (int i = 0; i < 100; i++) {
      IpAddress address = reserve(Holder.service("default", "s" + i, ""), IpClaim.dynamic(IpFamily.IPV4))
          .get(0).address();
      assertThat(range.offsetOf(address)).isGreaterThanOrEqualTo(range.staticBandSize());
    }
    assertThat(usage(IpFamily.IPV4).usedInStaticBand()).isZero();
    assertThat(usage(IpFamily.IPV4).usedInDynamicBand()).isEqualTo(100);
  }

  @Test
  void dryRunAnswersLikeARealRequestAndKeepsNothing() {
    IpAddress tenth = IpAddress.parse("10.0.0.10");
    assertThat(engine.reserve(ReservationRequest.ips(dns, List.of(IpClaim.specific(tenth)), true)).ips())
        .extracting(IpAssignment::address).containsExactly(tenth);
    IpAddress shown = engine.reserve(ReservationRequest.ips(web, List.of(IpClaim.dynamic(IpFamily.IPV4)), true)).ips().get(0).address();
    assertThat(shown.family()).isEqualTo(IpFamily.IPV4);
    assertThat(usage(IpFamily.IPV4).used()).isZero();
    assertThat(engine.holderOf(tenth)).isEmpty();

    reserve(dns, IpClaim.specific(tenth));
    assertThatThrownBy(() -> engine.reserve(ReservationRequest.ips(web, List.of(IpClaim.specific(tenth)), true)).ips())
        .isInstanceOf(AlreadyAllocatedException.class);
  }

  @Test
  void aRequestIsAllOrNothing() {
    IpAddress taken = IpAddress.parse("fd00::10");
    reserve(dns, IpClaim.specific(taken));
    assertThatThrownBy(() -> reserve(web, IpClaim.dynamic(IpFamily.IPV4), IpClaim.specific(taken)))
        .isInstanceOf(AlreadyAllocatedException.class);
    assertThat(usage(IpFamily.IPV4).used()).isZero();
    assertThat(usage(IpFamily.IPV6).used()).isEqualTo(1);
  }

  @Test
  void saysWhyAnAddressIsOutOfRange() {
    assertThatThrownBy(() -> reserve(web, IpClaim.specific(IpAddress.parse("10.0.1.5"))))
        .isInstanceOf(NotInRangeException.class)
        .hasMessage("10.0.1.5 is not in any Service range (10.0.0.0/24)");
    assertThatThrownBy(() -> reserve(web, IpClaim.specific(IpAddress.parse("fd01::1"))))
        .hasMessage("fd01::1 is not in any Service range (fd00::/120)");
    assertThatThrownBy(() -> reserve(web, IpClaim.specific(IpAddress.parse("10.0.0.255"))))
        .hasMessageStartingWith("10.0.0.255 is the broadcast address of 10.0.0.0/24");
    assertThatThrownBy(() -> reserve(web, IpClaim.specific(IpAddress.parse("10.0.0.0"))))
        .hasMessageStartingWith("10.0.0.0 is the network address of 10.0.0.0/24");
  }

  @Test
  void saysWhenAFamilyHasNoRangeOrTheRangeIsFull() {
    AllocationEngine small = AllocationEngine.withRanges(
        Map.of("tiny", Cidr.parse("10.0.0.0/30")), new SplittableRandom(1));
    assertThatThrownBy(() -> small.reserve(ReservationRequest.ips(web, List.of(IpClaim.dynamic(IpFamily.IPV6)), false)).ips())
        .isInstanceOf(NoRangeForFamilyException.class)
        .hasMessageContaining("no IPv6 Service range is configured");
    small.reserve(ReservationRequest.ips(Holder.service("a", "a", ""), List.of(IpClaim.dynamic(IpFamily.IPV4)), false)).ips();
    small.reserve(ReservationRequest.ips(Holder.service("a", "b", ""), List.of(IpClaim.dynamic(IpFamily.IPV4)), false)).ips();
    assertThatThrownBy(() -> small.reserve(ReservationRequest.ips(web, List.of(IpClaim.dynamic(IpFamily.IPV4)), false)).ips())
        .isInstanceOf(RangeFullException.class)
        .hasMessageContaining("no free IPv4 address is left in 10.0.0.0/30");
  }

  @Test
  void servesIpv6RangesAsLargeAsASlash64() {
    AllocationEngine wide = AllocationEngine.withRanges(
        Map.of("wide", Cidr.parse("fd00:1::/64")), new SplittableRandom(7));
    ServiceIpRange range = ServiceIpRange.of(Cidr.parse("fd00:1::/64"));
    for (int i = 0; i < 1000; i++) {
      IpAddress address = wide.reserve(ReservationRequest.ips(Holder.service("v6", "s" + i, ""),
          List.of(IpClaim.dynamic(IpFamily.IPV6)), false)).ips().get(0).address();
      assertThat(range.offsetOf(address)).isNotEqualTo(-1L);
      assertThat(Long.compareUnsigned(range.offsetOf(address), 256)).isGreaterThanOrEqualTo(0);
    }
    IpAddress last = IpAddress.parse("fd00:1::ffff:ffff:ffff:ffff");
    assertThat(wide.reserve(ReservationRequest.ips(web, List.of(IpClaim.specific(last)), false)).ips().get(0).address()).isEqualTo(last);
    assertThat(wide.usage().get(0).used()).isEqualTo(1001);
    assertThat(wide.usage().get(0).size()).as("2^64-1, unsigned").isEqualTo(-1L);
  }

  @Test
  void rangesComeAndGoAtRunTime() {
    AllocationEngine growing = AllocationEngine.withRanges(
        Map.of("first", Cidr.parse("10.0.0.0/30")), new SplittableRandom(3));
    growing.reserve(ReservationRequest.ips(Holder.service("a", "a", ""), List.of(IpClaim.dynamic(IpFamily.IPV4)), false)).ips();
    growing.reserve(ReservationRequest.ips(Holder.service("a", "b", ""), List.of(IpClaim.dynamic(IpFamily.IPV4)), false)).ips();
    growing.addServiceRange("second", Cidr.parse("10.1.0.0/24"));
    IpAddress third = growing.reserve(ReservationRequest.ips(Holder.service("a", "c", ""),
        List.of(IpClaim.dynamic(IpFamily.IPV4)), false)).ips().get(0).address();
    assertThat(Cidr.parse("10.1.0.0/24").contains(third)).isTrue();

    growing.markServiceRangeTerminating("first");
    assertThat(growing.serviceRangeInUseOnlyBy("first")).isEqualTo(2);
    assertThatThrownBy(() -> growing.removeServiceRange("first")).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> growing.reserve(ReservationRequest.ips(web, List.of(IpClaim.specific(IpAddress.parse("10.0.0.1"))), false)).ips())
        .isInstanceOf(NotInRangeException.class)
        .hasMessageContaining("Service range 10.0.0.0/30 is being deleted");
  }

  @Test
  void nodePortsAreHeldByTheirServiceAndNamedOnConflict() {
    Reservation got = engine.reserve(new ReservationRequest(dns, List.of(IpClaim.dynamic(IpFamily.IPV4)),
        List.of(PortClaim.specific(30053), PortClaim.dynamic()), false));
    assertThat(got.ports()).hasSize(2);
    assertThat(got.ports().get(0)).isEqualTo(new PortAssignment(30053, "30000-32767", Scope.STATIC, false));
    assertThat(got.ports().get(1).port()).as("dynamic band of 30000-32767").isBetween(30086, 32767);
    assertThat(engine.holderOfNodePort(30053)).contains(dns);

    assertThatThrownBy(() -> engine.reserve(new ReservationRequest(web, List.of(), List.of(PortClaim.specific(30053)),
        false)))
        .isInstanceOf(AlreadyAllocatedException.class)
        .hasMessageContaining("port 30053 is already allocated to Service kube-system/kube-dns in 30000-32767");
    assertThatThrownBy(() -> engine.reserve(new ReservationRequest(web, List.of(), List.of(PortClaim.specific(8080)),
        false)))
        .isInstanceOf(NotInRangeException.class)
        .hasMessageContaining("port 8080 is not in the NodePort range 30000-32767");
    // The same Service asking again (an update) keeps what it holds.
    assertThat(engine.reserve(new ReservationRequest(dns, List.of(), List.of(PortClaim.specific(30053)), false))
        .ports()).extracting(PortAssignment::port).containsExactly(30053);
  }

  @Test
  void aServiceGetsItsAddressesAndPortsTogetherOrNothing() {
    engine.reserve(new ReservationRequest(dns, List.of(), List.of(PortClaim.specific(30100)), false));
    assertThatThrownBy(() -> engine.reserve(new ReservationRequest(web,
        List.of(IpClaim.dynamic(IpFamily.IPV4), IpClaim.dynamic(IpFamily.IPV6)),
        List.of(PortClaim.dynamic(), PortClaim.specific(30100)), false)))
        .isInstanceOf(AlreadyAllocatedException.class);
    assertThat(usage(IpFamily.IPV4).used()).isZero();
    assertThat(usage(IpFamily.IPV6).used()).isZero();
    assertThat(engine.nodePortUsage().used()).as("only dns's port").isEqualTo(1);
  }

  @Test
  void nodesGetPodCidrsAndPresetOnesAreRecordedOrRefused() {
    engine.addClusterCidr(ClusterCidr.ipv4("default", null, 8, "10.244.0.0/16"));
    PodCidrAllocation first = engine.reservePodCidrs(NodeView.named("n1"), List.of(), false);
    assertThat(first.podCidrs()).containsExactly(Cidr.parse("10.244.0.0/24"));
    PodCidrAllocation preview = engine.reservePodCidrs(NodeView.named("n2"), List.of(), true);
    assertThat(preview.podCidrs()).containsExactly(Cidr.parse("10.244.1.0/24"));
    assertThat(engine.reservePodCidrs(NodeView.named("n2"), List.of(), false).podCidrs())
        .as("the dry run kept nothing").containsExactly(Cidr.parse("10.244.1.0/24"));

    assertThat(engine.reservePodCidrs(NodeView.named("old"), List.of(Cidr.parse("10.244.7.0/24")), true)
        .podCidrs()).containsExactly(Cidr.parse("10.244.7.0/24"));
    assertThat(engine.podCidrUsage().get(0).ipv4().allocated()).as("dry-run preset kept nothing").isEqualTo(2);
    engine.reservePodCidrs(NodeView.named("old"), List.of(Cidr.parse("10.244.7.0/24")), false);
    assertThatThrownBy(() -> engine.reservePodCidrs(NodeView.named("clash"), List.of(Cidr.parse("10.244.7.0/24")), false))
        .isInstanceOf(PodCidrUnavailableException.class)
        .hasMessageContaining("is already allocated to node old");
    assertThatThrownBy(() -> engine.reservePodCidrs(NodeView.named("far"), List.of(Cidr.parse("192.168.0.0/24")), false))
        .hasMessageContaining("fit no ClusterCIDR");
    assertThat(engine.clusterCidrInUse("default")).isTrue();
  }

  @Test
  void aServiceRangeInsideAPodRangeIsNeverHandedToANode() {
    AllocationEngine cluster = new AllocationEngine(PortRange.parse("30000-32767"),
        new SplittableRandom(7));
    // Pods in 10.96.0.0/19 in /20 blocks: the first block is exactly the Service range.
    cluster.addClusterCidr(ClusterCidr.ipv4("pods", null, 12, "10.96.0.0/19"));
    cluster.addServiceRange("kubernetes", Cidr.parse("10.96.0.0/20"));
    assertThat(cluster.reservePodCidrs(NodeView.named("n1"), List.of(), false).podCidrs())
        .as("the first candidate is skipped: it is the Service range")
        .containsExactly(Cidr.parse("10.96.16.0/20"));
    assertThatThrownBy(() -> cluster.reservePodCidrs(NodeView.named("n2"), List.of(), false))
        .as("nothing is left but the Service range").isInstanceOf(PodCidrUnavailableException.class);
    assertThatThrownBy(() -> cluster.reservePodCidrs(NodeView.named("n3"), List.of(Cidr.parse("10.96.0.0/20")), false))
        .as("nor may a node ask for it").hasMessageContaining("overlaps the reserved range 10.96.0.0/20");

    // Stored state may hold a node's block there (the Service range came later): it stays the node's.
    RangeState before = cluster.export(RangeKey.podCidrs("pods"));
    RangeState withOld = new RangeState(before.key(), before.range(), before.encoding(), before.staticBandSize(),
        before.allocation(), List.of(before.entries().get(0),
            new RangeState.Entry("10.96.0.0/20", Holder.node("old"), 1)));
    assertThat(cluster.restore(RangeKey.Kind.POD_CIDRS, null, List.of(withOld))).isEmpty();
    assertThat(cluster.allocations()).extracting(Allocation::value).contains("10.96.0.0/20", "10.96.16.0/20");

    assertThat(cluster.recordPodCidrs(NodeView.named("old"), List.of(Cidr.parse("10.96.0.0/20"))).podCidrs())
        .as("the reconciler recording what the node carries: unchanged").containsExactly(Cidr.parse("10.96.0.0/20"));
    cluster.releasePodCidrs("old");
    assertThat(cluster.recordPodCidrs(NodeView.named("older"), List.of(Cidr.parse("10.96.0.0/20"))).podCidrs())
        .as("a node the engine never saw, carrying a block in the Service range").containsExactly(
            Cidr.parse("10.96.0.0/20"));
    cluster.releasePodCidrs("older");
    assertThatThrownBy(() -> cluster.reservePodCidrs(NodeView.named("n2"), List.of(), false))
        .as("freed by its node, the block is still the Service range's").isInstanceOf(
            PodCidrUnavailableException.class);
    cluster.removeServiceRange("kubernetes");
    assertThat(cluster.reservePodCidrs(NodeView.named("n2"), List.of(), false).podCidrs())
        .as("the Service range is gone, so its block serves nodes again").containsExactly(Cidr.parse("10.96.0.0/20"));
  }

  @Test
  void concurrentRequestsNeverShareAnAddressOrPort() throws Exception {
    AllocationEngine shared = AllocationEngine.withRanges(
        Map.of("v4", Cidr.parse("10.0.0.0/20")), ThreadLocalRandomGenerator.INSTANCE);
    int threads = 8;
    int perThread = 250;
    Set<IpAddress> addresses = ConcurrentHashMap.newKeySet();
    Set<Integer> ports = ConcurrentHashMap.newKeySet();
    AtomicInteger conflicts = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<?>> done = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int thread = t;
      done.add(pool.submit(() -> {
        for (int i = 0; i < perThread; i++) {
          Holder holder = Holder.service("t" + thread, "s" + i, "");
          // Everyone also asks for one of a few contested static ports and addresses.
          int contestedPort = 30000 + i % 20;
          IpAddress contestedIp = IpAddress.parse("10.0.0." + (1 + i % 20));
          try {
            Reservation got = shared.reserve(new ReservationRequest(holder,
                List.of(i % 2 == 0 ? IpClaim.dynamic(IpFamily.IPV4) : IpClaim.specific(contestedIp)),
                List.of(PortClaim.dynamic(), PortClaim.specific(contestedPort)), false));
            assertThat(addresses.add(got.ips().get(0).address())).isTrue();
            got.ports().forEach(p -> assertThat(ports.add(p.port())).as("port " + p.port()).isTrue());
          } catch (AllocationException e) {
            assertThat(e).isInstanceOf(AlreadyAllocatedException.class);
            conflicts.incrementAndGet();
          }
        }
      }));
    }
    for (Future<?> f : done) {
      f.get();
    }
    pool.shutdown();
    assertThat(conflicts.get()).as("contested values were refused, not shared").isPositive();
    assertThat(shared.usage().get(0).used()).isEqualTo(addresses.size());
    assertThat(shared.nodePortUsage().used()).isEqualTo(ports.size());
  }

  @Test
  void describesEachRangeWithItsBandsAndStaticBandHolders() {
    reserve(dns, IpClaim.specific(IpAddress.parse("10.0.0.10")));
    reserve(web, IpClaim.dynamic(IpFamily.IPV4));
    engine.reserve(new ReservationRequest(dns, List.of(), List.of(PortClaim.specific(30053)), false));
    List<RangeView> views = engine.describeRanges();
    RangeView v4 = views.stream().filter(v -> v.range().equals("10.0.0.0/24")).findFirst().orElseThrow();
    assertThat(v4.kind()).isEqualTo(RangeView.Kind.SERVICE_IPS);
    assertThat(v4.name()).isEqualTo("v4");
    assertThat(v4.family()).isEqualTo("IPv4");
    assertThat(v4.staticBand()).isEqualTo("10.0.0.1-10.0.0.16");
    assertThat(v4.dynamicBand()).isEqualTo("10.0.0.17-10.0.0.254");
    assertThat(v4.usage().used()).isEqualTo(2);
    assertThat(v4.staticHolders()).containsExactly(new RangeView.HeldValue("10.0.0.10", "Service kube-system/kube-dns"));
    RangeView ports = views.stream().filter(v -> v.kind() == RangeView.Kind.NODE_PORTS).findFirst().orElseThrow();
    assertThat(ports.staticBand()).isEqualTo("30000-30085");
    assertThat(ports.dynamicBand()).isEqualTo("30086-32767");
    assertThat(ports.staticHolders()).containsExactly(new RangeView.HeldValue("30053", "Service kube-system/kube-dns"));
  }

  @Test
  void aValueReservedAheadCountsAsHeldOnlyForTheValidatingCheckAndIsHandedOverOnce() {
    Holder reservation = Holder.reservedAhead("replica-a", 1);
    IpAddress reserved = reserve(reservation, IpClaim.dynamic(IpFamily.IPV4)).get(0).address();
    int port = engine.reserve(new ReservationRequest(reservation, List.of(), List.of(PortClaim.dynamic()), false))
        .ports().get(0).port();

    // A Service naming the value itself (the mutating webhook) is refused: someone holds it.
    assertThatThrownBy(() -> reserve(web, IpClaim.specific(reserved))).isInstanceOf(AlreadyAllocatedException.class);
    // The validating check of a Service that was handed the value accepts it, and changes nothing.
    engine.drainChanged();
    ReservationRequest carried = new ReservationRequest(web, List.of(IpClaim.specific(reserved)),
        List.of(PortClaim.specific(port)), false).withReservedAheadAsHeld();
    Reservation accepted = engine.reserve(carried);
    assertThat(accepted.ips()).singleElement().satisfies(ip -> assertThat(ip.alreadyHeld()).isTrue());
    assertThat(accepted.ports()).singleElement().satisfies(p -> assertThat(p.alreadyHeld()).isTrue());
    assertThat(engine.answerIfAlreadyHeld(carried)).isNotNull();
    assertThat(engine.drainChanged()).isEmpty();
    assertThat(engine.holderOf(reserved)).contains(reservation);
    // ...but only for values reserved ahead: another Service's value is still refused.
    IpAddress dnsAddress = reserve(dns, IpClaim.dynamic(IpFamily.IPV4)).get(0).address();
    assertThatThrownBy(() -> engine.reserve(ReservationRequest.ips(web, List.of(IpClaim.specific(dnsAddress)), false)
        .withReservedAheadAsHeld())).isInstanceOf(AlreadyAllocatedException.class);

    // An update right after the create, before the holder is named: the values it carries are its own.
    engine.drainChanged();
    Reservation update = engine.reserve(new ReservationRequest(web, List.of(IpClaim.kept(reserved)),
        List.of(PortClaim.kept(port)), false));
    assertThat(update.ips()).singleElement().satisfies(ip -> {
      assertThat(ip.alreadyHeld()).isTrue();
      assertThat(ip.unrecorded()).isNull();
    });
    assertThat(update.ports()).singleElement().satisfies(p -> assertThat(p.unrecorded()).isNull());
    assertThat(engine.drainChanged()).isEmpty();

    assertThat(engine.handOver(RangeKey.Kind.SERVICE_IPS, reserved.toString(), reservation, web)).isTrue();
    assertThat(engine.handOver(RangeKey.Kind.NODE_PORTS, String.valueOf(port), reservation, web)).isTrue();
    assertThat(engine.drainChanged()).isNotEmpty();
    assertThat(engine.holderOf(reserved)).contains(web);
    assertThat(engine.holderOfNodePort(port)).contains(web);
    assertThat(engine.holdsAnythingFor(web)).isTrue();
    // Once handed over, it is no longer the reservation's to give.
    assertThat(engine.handOver(RangeKey.Kind.SERVICE_IPS, reserved.toString(), reservation, dns)).isFalse();
    assertThat(engine.holderOf(reserved)).contains(web);
  }

  private List<IpAssignment> reserve(Holder holder, IpClaim... claims) {
    return engine.reserve(ReservationRequest.ips(holder, List.of(claims), false)).ips();
  }

  private RangeUsage usage(IpFamily family) {
    return engine.usage().stream().filter(u -> Cidr.parse(u.range()).family() == family).findFirst().orElseThrow();
  }
}
