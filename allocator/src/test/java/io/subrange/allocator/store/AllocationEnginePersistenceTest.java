package io.subrange.allocator.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.podcidr.ClusterCidr;
import io.subrange.allocator.podcidr.NodeView;
import io.subrange.allocator.podcidr.NodeSelector;
import io.subrange.allocator.port.PortRange;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** What the persisting store relies on: changed ranges, export, restore, releases. */
class AllocationEnginePersistenceTest {

  private static final Clock AT_1000 = Clock.fixed(Instant.ofEpochSecond(1000), ZoneOffset.UTC);

  private final Holder web = Holder.service("default", "web", "");
  private final Holder api = Holder.service("default", "api", "");

  private static AllocationEngine engine() {
    AllocationEngine engine = new AllocationEngine(PortRange.parse("30000-32767"), new SplittableRandom(1),
        AT_1000);
    engine.addServiceRange("wide", Cidr.parse("10.0.0.0/16"));
    engine.addServiceRange("narrow", Cidr.parse("10.0.1.0/24"));
    engine.addServiceRange("v6", Cidr.parse("fd00::/64"));
    engine.addClusterCidr(ClusterCidr.ipv4("pods", null, 8, "10.244.0.0/16"));
    return engine;
  }

  @Test
  void everyRangeAChangeTouchesIsReportedOnce() {
    AllocationEngine engine = engine();
    engine.reserve(new ReservationRequest(web, List.of(IpClaim.specific(IpAddress.parse("10.0.1.7"))),
        List.of(PortClaim.dynamic()), false));
    assertThat(engine.drainChanged()).containsExactlyInAnyOrder(RangeKey.serviceIps("wide", IpFamily.IPV4),
        RangeKey.serviceIps("narrow", IpFamily.IPV4), RangeKey.nodePorts());
    assertThat(engine.drainChanged()).isEmpty();

    engine.reserve(ReservationRequest.ips(api, List.of(IpClaim.dynamic(IpFamily.IPV6)), true));
    assertThat(engine.drainChanged()).as("dry runs change nothing").isEmpty();
    engine.reservePodCidrs(NodeView.named("n1"), List.of(), false);
    assertThat(engine.drainChanged()).containsExactly(RangeKey.podCidrs("pods"));
  }

  @Test
  void podCidrsRestoreIntoTheClusterCidrWhoseStateNamesThemEvenWhereAnotherOverlaps() {
    AllocationEngine one = engine();
    one.addClusterCidr(ClusterCidr.ipv4("gpu", NodeSelector.requiringLabels(Map.of("gpu", "yes")), 8,
        "10.244.0.0/16"));
    one.reservePodCidrs(new NodeView("g1", Map.of("gpu", "yes")), List.of(), false);
    assertThat(one.clusterCidrInUse("gpu")).isTrue();

    AllocationEngine two = engine();
    two.addClusterCidr(ClusterCidr.ipv4("gpu", NodeSelector.requiringLabels(Map.of("gpu", "yes")), 8,
        "10.244.0.0/16"));
    two.restore(RangeKey.Kind.POD_CIDRS, null, List.of(one.export(RangeKey.podCidrs("pods")),
        one.export(RangeKey.podCidrs("gpu"))));
    assertThat(two.clusterCidrInUse("gpu")).as("the ledger of gpu names g1; the labels are not stored").isTrue();
    assertThat(two.clusterCidrInUse("pods")).isFalse();
  }

  @Test
  void exportedStateRestoresIntoAnotherReplicaWithHoldersAndTimes() {
    AllocationEngine one = engine();
    one.reserve(new ReservationRequest(web, List.of(IpClaim.specific(IpAddress.parse("10.0.1.7")),
        IpClaim.dynamic(IpFamily.IPV6)), List.of(PortClaim.specific(30080)), false));
    one.reservePodCidrs(NodeView.named("n1"), List.of(), false);

    AllocationEngine two = engine();
    two.restore(RangeKey.Kind.SERVICE_IPS, IpFamily.IPV4, List.of(one.export(RangeKey.serviceIps("wide", IpFamily.IPV4)),
        one.export(RangeKey.serviceIps("narrow", IpFamily.IPV4))));
    two.restore(RangeKey.Kind.SERVICE_IPS, IpFamily.IPV6, List.of(one.export(RangeKey.serviceIps("v6", IpFamily.IPV6))));
    two.restore(RangeKey.Kind.NODE_PORTS, null, List.of(one.export(RangeKey.nodePorts())));
    two.restore(RangeKey.Kind.POD_CIDRS, null, List.of(one.export(RangeKey.podCidrs("pods"))));

    assertThat(two.allocations()).containsExactlyInAnyOrderElementsOf(one.allocations());
    assertThat(two.holderOf(IpAddress.parse("10.0.1.7"))).contains(web);
    assertThat(two.allocations()).allSatisfy(a -> assertThat(a.sinceEpochSeconds()).isEqualTo(1000));
    assertThat(two.drainChanged()).as("loading is not a change").isEmpty();
    // The same object asking again on the other replica keeps what it holds.
    assertThat(two.reserve(ReservationRequest.ips(web, List.of(IpClaim.specific(IpAddress.parse("10.0.1.7"))), false))
        .ips().get(0).alreadyHeld()).isTrue();
    assertThatThrownBy(() -> two.reserve(new ReservationRequest(api, List.of(), List.of(PortClaim.specific(30080)),
        false))).hasMessageContaining("already allocated to Service default/web");
    assertThatThrownBy(() -> two.reservePodCidrs(NodeView.named("n2"), List.of(Cidr.parse("10.244.0.0/24")), false))
        .hasMessageContaining("already allocated to node n1");
  }

  @Test
  void restoreReplacesWhatWasThere() {
    AllocationEngine engine = engine();
    engine.reserve(ReservationRequest.ips(web, List.of(IpClaim.specific(IpAddress.parse("10.0.2.2"))), false));
    RangeState empty = engine().export(RangeKey.serviceIps("wide", IpFamily.IPV4));
    engine.restore(RangeKey.Kind.SERVICE_IPS, IpFamily.IPV4, List.of(empty));
    assertThat(engine.holderOf(IpAddress.parse("10.0.2.2"))).isEmpty();
    assertThat(engine.reserve(ReservationRequest.ips(api, List.of(IpClaim.specific(IpAddress.parse("10.0.2.2"))), false))
        .ips()).hasSize(1);
  }

  @Test
  void releasesFreeOnlyWhatTheNamedHolderHolds() {
    AllocationEngine engine = engine();
    IpAddress address = IpAddress.parse("10.0.3.3");
    engine.reserve(new ReservationRequest(web, List.of(IpClaim.specific(address)), List.of(PortClaim.specific(30001)),
        false));
    engine.drainChanged();
    assertThat(engine.releaseIp(address, api)).as("not api's").isFalse();
    assertThat(engine.releaseNodePort(30001, api)).isFalse();
    assertThat(engine.releaseIp(address, web)).isTrue();
    assertThat(engine.releaseIp(address, web)).as("once").isFalse();
    assertThat(engine.releaseNodePort(30001, null)).as("null: whoever holds it").isTrue();
    assertThat(engine.drainChanged()).contains(RangeKey.serviceIps("wide", IpFamily.IPV4), RangeKey.nodePorts());
    engine.reservePodCidrs(NodeView.named("gone"), List.of(), false);
    assertThat(engine.releasePodCidrs("gone")).isTrue();
    assertThat(engine.releasePodCidrs("gone")).isFalse();
    assertThat(engine.allocations()).isEmpty();
  }

  @Test
  void exportNamesTheEncodingByRangeSize() {
    AllocationEngine engine = engine();
    assertThat(engine.export(RangeKey.serviceIps("wide", IpFamily.IPV4)).encoding()).isEqualTo(RangeState.RANGE_ALLOCATION);
    assertThat(engine.export(RangeKey.serviceIps("v6", IpFamily.IPV6)).encoding()).isEqualTo(RangeState.SPARSE);
    assertThat(engine.export(RangeKey.podCidrs("pods")).encoding()).isEqualTo(RangeState.NODE_LEDGER);
    assertThat(engine.rangeKeys()).hasSize(5);
  }

  @Test
  void rangesWhoseStateIsNotLoadedHandOutNothingUntilRestored() {
    AllocationEngine engine = engine();
    AllocationEngine source = engine();
    source.reserve(new ReservationRequest(web, List.of(IpClaim.specific(IpAddress.parse("10.0.1.7"))),
        List.of(PortClaim.specific(30080)), false));
    engine.requireLoadedState();
    assertThat(engine.unknownRanges()).hasSize(5);

    assertThatThrownBy(() -> engine.reserve(ReservationRequest.ips(api, List.of(IpClaim.dynamic(IpFamily.IPV4)), false)))
        .isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("allocation state of Service range narrow (10.0.1.0/24) is not loaded yet");
    assertThatThrownBy(() -> engine.reserve(ReservationRequest.ips(api, List.of(IpClaim.dynamic(IpFamily.IPV4)), true)))
        .as("dry runs answer as real requests").isInstanceOf(StoreUnavailableException.class);
    assertThatThrownBy(() -> engine.reservePodCidrs(NodeView.named("n1"), List.of(), false))
        .hasMessageContaining("ClusterCIDR pods is not loaded yet");
    assertThatThrownBy(() -> engine.releaseNodePort(30080, null)).hasMessageContaining("NodePort range");
    Reservation kept = engine.reserve(ReservationRequest.ips(web, List.of(IpClaim.kept(IpAddress.parse("10.0.1.7"))),
        false));
    assertThat(kept.ips().get(0).unrecorded()).as("an object's own values are reported, not refused")
        .contains("not loaded yet");

    Map<RangeKey, String> rejected = engine.restore(RangeKey.Kind.SERVICE_IPS, IpFamily.IPV4,
        List.of(source.export(RangeKey.serviceIps("wide", IpFamily.IPV4)),
            source.export(RangeKey.serviceIps("narrow", IpFamily.IPV4))));
    assertThat(rejected).isEmpty();
    engine.restore(RangeKey.Kind.NODE_PORTS, null, List.of(source.export(RangeKey.nodePorts())));
    assertThat(engine.unknownRanges()).containsExactlyInAnyOrder(RangeKey.serviceIps("v6", IpFamily.IPV6),
        RangeKey.podCidrs("pods"));
    assertThat(engine.reserve(ReservationRequest.ips(api, List.of(IpClaim.dynamic(IpFamily.IPV4)), false))
        .ips().get(0).address()).isNotEqualTo(IpAddress.parse("10.0.1.7"));
    assertThatThrownBy(() -> engine.reserve(new ReservationRequest(api, List.of(), List.of(PortClaim.specific(30080)),
        false))).hasMessageContaining("already allocated to Service default/web");

    engine.addServiceRange("later", Cidr.parse("10.1.0.0/24"));
    assertThat(engine.unknownRanges()).as("ranges added later start unknown too")
        .contains(RangeKey.serviceIps("later", IpFamily.IPV4));
    engine.removeServiceRange("later");
    assertThat(engine.unknownRanges()).doesNotContain(RangeKey.serviceIps("later", IpFamily.IPV4));
  }

  @Test
  void aStateMadeForAnotherRangeIsRejectedAndAStrayHolderLineIsLeftOut() {
    AllocationEngine engine = engine();
    engine.requireLoadedState();
    RangeState foreign = new RangeState(RangeKey.serviceIps("narrow", IpFamily.IPV4), "10.9.0.0/24",
        RangeState.RANGE_ALLOCATION, 16, new byte[] {1}, List.of());
    RangeState outside = new RangeState(RangeKey.serviceIps("wide", IpFamily.IPV4), "10.0.0.0/16",
        RangeState.RANGE_ALLOCATION, 256, new byte[] {1}, List.of(new RangeState.Entry("10.1.0.1", web, 1)));
    Map<RangeKey, String> rejected = engine.restore(RangeKey.Kind.SERVICE_IPS, IpFamily.IPV4, List.of(foreign, outside));
    assertThat(rejected).containsOnlyKeys(foreign.key());
    assertThat(rejected.get(foreign.key())).contains("made for 10.9.0.0/24, not 10.0.1.0/24");
    assertThat(engine.unknownRanges()).contains(foreign.key());
    // A holder line naming a value outside its range is left out; it does not take the range down.
    assertThat(engine.unknownRanges()).doesNotContain(outside.key());
    assertThat(engine.holderOf(IpAddress.parse("10.0.0.1"))).isEmpty();
    assertThat(engine.usage().stream().filter(u -> u.range().equals("10.0.0.0/16")).findFirst().orElseThrow().used())
        .as("its allocation bits still load").isEqualTo(1);

    RangeState tooBig = new RangeState(RangeKey.nodePorts(), "30000-32767", RangeState.RANGE_ALLOCATION, 86,
        new byte[400], List.of());
    tooBig.allocation()[0] = 1;
    assertThat(engine.restore(RangeKey.Kind.NODE_PORTS, null, List.of(tooBig))).containsKey(RangeKey.nodePorts());
  }

  @Test
  void aHolderLineOfAValueTheBitsLeaveFreeIsLeftOut() {
    AllocationEngine engine = engine();
    RangeKey wide = RangeKey.serviceIps("wide", IpFamily.IPV4);
    RangeState empty = engine().export(wide);
    IpAddress address = IpAddress.parse("10.0.2.2");
    // Named on a holder line, but not taken by the bits (a damaged or hand-edited shard).
    engine.restore(RangeKey.Kind.SERVICE_IPS, IpFamily.IPV4, List.of(new RangeState(wide, empty.range(),
        empty.encoding(), empty.staticBandSize(), empty.allocation(), List.of(new RangeState.Entry(address.toString(),
        web, 1)))));
    RangeState emptyPorts = engine().export(RangeKey.nodePorts());
    engine.restore(RangeKey.Kind.NODE_PORTS, null, List.of(new RangeState(RangeKey.nodePorts(), emptyPorts.range(),
        emptyPorts.encoding(), emptyPorts.staticBandSize(), emptyPorts.allocation(),
        List.of(new RangeState.Entry("30005", web, 1)))));
    assertThat(engine.holdsAnythingFor(web)).as("the bits are the authority").isFalse();
    assertThat(engine.holderOf(address)).isEmpty();
    assertThat(engine.holderOfNodePort(30005)).isEmpty();

    // So web's retry cannot claim them back while another object takes them.
    engine.reserve(new ReservationRequest(api, List.of(IpClaim.specific(address)), List.of(PortClaim.specific(30005)),
        false));
    assertThat(engine.holderOf(address)).contains(api);
    Reservation again = engine.reserve(new ReservationRequest(web, List.of(IpClaim.dynamic(IpFamily.IPV4)),
        List.of(PortClaim.dynamic()), false));
    assertThat(again.ips().get(0).alreadyHeld()).as("nothing of web's to take back").isFalse();
    assertThat(again.ips().get(0).address()).isNotEqualTo(address);
    assertThat(again.ports().get(0).alreadyHeld()).isFalse();
    assertThat(again.ports().get(0).port()).isNotEqualTo(30005);
  }

  @Test
  void adoptNamesTheObjectThatCarriesAValue() {
    AllocationEngine engine = engine();
    IpAddress address = IpAddress.parse("10.0.4.4");
    Holder unnamed = Holder.service("default", "", "");
    engine.reserve(new ReservationRequest(unnamed, List.of(IpClaim.specific(address)), List.of(PortClaim.specific(30002)),
        false));
    engine.drainChanged();
    Holder created = Holder.service("default", "web-x7k2p", "uid-1");
    assertThat(engine.adopt(RangeKey.Kind.SERVICE_IPS, address.toString(), web, created))
        .as("only from the holder on record").isFalse();
    assertThat(engine.adopt(RangeKey.Kind.SERVICE_IPS, address.toString(), unnamed, created)).isTrue();
    assertThat(engine.adopt(RangeKey.Kind.NODE_PORTS, "30002", unnamed, created)).isTrue();
    assertThat(engine.holderOf(address)).contains(created);
    assertThat(engine.holderOfNodePort(30002)).contains(created);
    assertThat(engine.drainChanged()).contains(RangeKey.serviceIps("wide", IpFamily.IPV4), RangeKey.nodePorts());
    assertThat(engine.allocations()).allSatisfy(a -> assertThat(a.sinceEpochSeconds()).as("keeps its time")
        .isEqualTo(1000));
    assertThat(engine.adopt(RangeKey.Kind.SERVICE_IPS, "10.0.9.9", null, created)).as("not held").isFalse();
  }

  @Test
  void aRecordWithAUidIsNotHandedToANewObjectOfTheSameName() {
    AllocationEngine engine = engine();
    Holder first = Holder.service("default", "web", "uid-1");
    IpAddress address = engine.reserve(ReservationRequest.ips(web, List.of(IpClaim.dynamic(IpFamily.IPV4)), false))
        .ips().get(0).address();
    assertThat(engine.reserve(ReservationRequest.ips(web, List.of(IpClaim.dynamic(IpFamily.IPV4)), false))
        .ips().get(0).address()).as("CREATE retried before the object exists: the same address").isEqualTo(address);
    engine.adopt(RangeKey.Kind.SERVICE_IPS, address.toString(), web, first);
    assertThat(engine.reserve(ReservationRequest.ips(first, List.of(IpClaim.kept(address)), false))
        .ips().get(0).alreadyHeld()).as("an UPDATE of that object").isTrue();
    IpAddress next = engine.reserve(ReservationRequest.ips(web, List.of(IpClaim.dynamic(IpFamily.IPV4)), false))
        .ips().get(0).address();
    assertThat(next).as("a CREATE under the same name is a new object").isNotEqualTo(address);
    assertThat(engine.releaseIp(address, Holder.service("default", "web", "uid-2"))).isFalse();
    assertThat(engine.releaseIp(address, first)).isTrue();
  }

  @Test
  void aRetriedRequestGetsBackThePortsItsObjectHolds() {
    AllocationEngine engine = engine();
    ReservationRequest create = new ReservationRequest(web, List.of(), List.of(PortClaim.dynamic(), PortClaim.dynamic()),
        false);
    Reservation first = engine.reserve(create);
    Reservation again = engine.reserve(create);
    assertThat(again.ports()).extracting(PortAssignment::port)
        .containsExactlyElementsOf(first.ports().stream().map(PortAssignment::port).toList());
    assertThat(again.ports()).allSatisfy(p -> assertThat(p.alreadyHeld()).isTrue());

    int kept = first.ports().get(1).port();
    Reservation update = engine.reserve(new ReservationRequest(web, List.of(),
        List.of(PortClaim.dynamic(), PortClaim.kept(kept)), false));
    assertThat(update.ports().get(0).port()).as("never the port another claim names")
        .isEqualTo(first.ports().get(0).port());
    assertThat(engine.reserve(new ReservationRequest(api, List.of(), List.of(PortClaim.dynamic()), false))
        .ports().get(0).port()).as("another object gets a new port")
        .isNotIn(first.ports().get(0).port(), kept);
    assertThat(engine.allocations()).hasSize(3);
  }
}
