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

  private static AllocationEngine store() {
    AllocationEngine store = new AllocationEngine(PortRange.parse("30000-32767"), new SplittableRandom(1),
        AT_1000);
    store.addServiceRange("wide", Cidr.parse("10.0.0.0/16"));
    store.addServiceRange("narrow", Cidr.parse("10.0.1.0/24"));
    store.addServiceRange("v6", Cidr.parse("fd00::/64"));
    store.addClusterCidr(ClusterCidr.ipv4("pods", null, 8, "10.244.0.0/16"));
    return store;
  }

  @Test
  void everyRangeAChangeTouchesIsReportedOnce() {
    AllocationEngine store = store();
    store.reserve(new ReservationRequest(web, List.of(IpClaim.specific(IpAddress.parse("10.0.1.7"))),
        List.of(PortClaim.dynamic()), false)).join();
    assertThat(store.drainChanged()).containsExactlyInAnyOrder(RangeKey.serviceIps("wide", IpFamily.IPV4),
        RangeKey.serviceIps("narrow", IpFamily.IPV4), RangeKey.nodePorts());
    assertThat(store.drainChanged()).isEmpty();

    store.reserve(ReservationRequest.ips(api, List.of(IpClaim.dynamic(IpFamily.IPV6)), true)).join();
    assertThat(store.drainChanged()).as("dry runs change nothing").isEmpty();
    store.reservePodCidrs(NodeView.named("n1"), List.of(), false).join();
    assertThat(store.drainChanged()).containsExactly(RangeKey.podCidrs("pods"));
  }

  @Test
  void podCidrsRestoreIntoTheClusterCidrWhoseStateNamesThemEvenWhereAnotherOverlaps() {
    AllocationEngine one = store();
    one.addClusterCidr(ClusterCidr.ipv4("gpu", NodeSelector.requiringLabels(Map.of("gpu", "yes")), 8,
        "10.244.0.0/16"));
    one.reservePodCidrs(new NodeView("g1", Map.of("gpu", "yes")), List.of(), false).join();
    assertThat(one.clusterCidrInUse("gpu")).isTrue();

    AllocationEngine two = store();
    two.addClusterCidr(ClusterCidr.ipv4("gpu", NodeSelector.requiringLabels(Map.of("gpu", "yes")), 8,
        "10.244.0.0/16"));
    two.restore(RangeKey.Kind.POD_CIDRS, null, List.of(one.export(RangeKey.podCidrs("pods")),
        one.export(RangeKey.podCidrs("gpu"))));
    assertThat(two.clusterCidrInUse("gpu")).as("the ledger of gpu names g1; the labels are not stored").isTrue();
    assertThat(two.clusterCidrInUse("pods")).isFalse();
  }

  @Test
  void exportedStateRestoresIntoAnotherReplicaWithHoldersAndTimes() {
    AllocationEngine one = store();
    one.reserve(new ReservationRequest(web, List.of(IpClaim.specific(IpAddress.parse("10.0.1.7")),
        IpClaim.dynamic(IpFamily.IPV6)), List.of(PortClaim.specific(30080)), false)).join();
    one.reservePodCidrs(NodeView.named("n1"), List.of(), false).join();

    AllocationEngine two = store();
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
        .join().ips().get(0).alreadyHeld()).isTrue();
    assertThatThrownBy(() -> two.reserve(new ReservationRequest(api, List.of(), List.of(PortClaim.specific(30080)),
        false)).join()).hasMessageContaining("already allocated to Service default/web");
    assertThatThrownBy(() -> two.reservePodCidrs(NodeView.named("n2"), List.of(Cidr.parse("10.244.0.0/24")), false)
        .join())
        .hasMessageContaining("already allocated to node n1");
  }

  @Test
  void restoreReplacesWhatWasThere() {
    AllocationEngine store = store();
    store.reserve(ReservationRequest.ips(web, List.of(IpClaim.specific(IpAddress.parse("10.0.2.2"))), false)).join();
    RangeState empty = store().export(RangeKey.serviceIps("wide", IpFamily.IPV4));
    store.restore(RangeKey.Kind.SERVICE_IPS, IpFamily.IPV4, List.of(empty));
    assertThat(store.holderOf(IpAddress.parse("10.0.2.2"))).isEmpty();
    assertThat(store.reserve(ReservationRequest.ips(api, List.of(IpClaim.specific(IpAddress.parse("10.0.2.2"))), false))
        .join().ips()).hasSize(1);
  }

  @Test
  void releasesFreeOnlyWhatTheNamedHolderHolds() {
    AllocationEngine store = store();
    IpAddress address = IpAddress.parse("10.0.3.3");
    store.reserve(new ReservationRequest(web, List.of(IpClaim.specific(address)), List.of(PortClaim.specific(30001)),
        false)).join();
    store.drainChanged();
    assertThat(store.releaseIp(address, api).join()).as("not api's").isFalse();
    assertThat(store.releaseNodePort(30001, api).join()).isFalse();
    assertThat(store.releaseIp(address, web).join()).isTrue();
    assertThat(store.releaseIp(address, web).join()).as("once").isFalse();
    assertThat(store.releaseNodePort(30001, null).join()).as("null: whoever holds it").isTrue();
    assertThat(store.drainChanged()).contains(RangeKey.serviceIps("wide", IpFamily.IPV4), RangeKey.nodePorts());
    store.reservePodCidrs(NodeView.named("gone"), List.of(), false).join();
    assertThat(store.releasePodCidrs("gone").join()).isTrue();
    assertThat(store.releasePodCidrs("gone").join()).isFalse();
    assertThat(store.allocations()).isEmpty();
  }

  @Test
  void exportNamesTheEncodingByRangeSize() {
    AllocationEngine store = store();
    assertThat(store.export(RangeKey.serviceIps("wide", IpFamily.IPV4)).encoding()).isEqualTo(RangeState.RANGE_ALLOCATION);
    assertThat(store.export(RangeKey.serviceIps("v6", IpFamily.IPV6)).encoding()).isEqualTo(RangeState.SPARSE);
    assertThat(store.export(RangeKey.podCidrs("pods")).encoding()).isEqualTo(RangeState.NODE_LEDGER);
    assertThat(store.rangeKeys()).hasSize(5);
  }

  @Test
  void rangesWhoseStateIsNotLoadedHandOutNothingUntilRestored() {
    AllocationEngine store = store();
    AllocationEngine source = store();
    source.reserve(new ReservationRequest(web, List.of(IpClaim.specific(IpAddress.parse("10.0.1.7"))),
        List.of(PortClaim.specific(30080)), false)).join();
    store.requireLoadedState();
    assertThat(store.unknownRanges()).hasSize(5);

    assertThatThrownBy(() -> store.reserve(ReservationRequest.ips(api, List.of(IpClaim.dynamic(IpFamily.IPV4)), false))
        .join()).hasCauseInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("allocation state of Service range narrow (10.0.1.0/24) is not loaded yet");
    assertThatThrownBy(() -> store.reserve(ReservationRequest.ips(api, List.of(IpClaim.dynamic(IpFamily.IPV4)), true))
        .join()).as("dry runs answer as real requests").hasCauseInstanceOf(StoreUnavailableException.class);
    assertThatThrownBy(() -> store.reservePodCidrs(NodeView.named("n1"), List.of(), false).join())
        .hasMessageContaining("ClusterCIDR pods is not loaded yet");
    assertThatThrownBy(() -> store.releaseNodePort(30080, null).join()).hasMessageContaining("NodePort range");
    Reservation kept = store.reserve(ReservationRequest.ips(web, List.of(IpClaim.kept(IpAddress.parse("10.0.1.7"))),
        false)).join();
    assertThat(kept.ips().get(0).unrecorded()).as("an object's own values are reported, not refused")
        .contains("not loaded yet");

    Map<RangeKey, String> rejected = store.restore(RangeKey.Kind.SERVICE_IPS, IpFamily.IPV4,
        List.of(source.export(RangeKey.serviceIps("wide", IpFamily.IPV4)),
            source.export(RangeKey.serviceIps("narrow", IpFamily.IPV4))));
    assertThat(rejected).isEmpty();
    store.restore(RangeKey.Kind.NODE_PORTS, null, List.of(source.export(RangeKey.nodePorts())));
    assertThat(store.unknownRanges()).containsExactlyInAnyOrder(RangeKey.serviceIps("v6", IpFamily.IPV6),
        RangeKey.podCidrs("pods"));
    assertThat(store.reserve(ReservationRequest.ips(api, List.of(IpClaim.dynamic(IpFamily.IPV4)), false)).join()
        .ips().get(0).address()).isNotEqualTo(IpAddress.parse("10.0.1.7"));
    assertThatThrownBy(() -> store.reserve(new ReservationRequest(api, List.of(), List.of(PortClaim.specific(30080)),
        false)).join()).hasMessageContaining("already allocated to Service default/web");

    store.addServiceRange("later", Cidr.parse("10.1.0.0/24"));
    assertThat(store.unknownRanges()).as("ranges added later start unknown too")
        .contains(RangeKey.serviceIps("later", IpFamily.IPV4));
    store.removeServiceRange("later");
    assertThat(store.unknownRanges()).doesNotContain(RangeKey.serviceIps("later", IpFamily.IPV4));
  }

  @Test
  void aStateMadeForAnotherRangeIsRejectedAndAStrayHolderLineIsLeftOut() {
    AllocationEngine store = store();
    store.requireLoadedState();
    RangeState foreign = new RangeState(RangeKey.serviceIps("narrow", IpFamily.IPV4), "10.9.0.0/24",
        RangeState.RANGE_ALLOCATION, 16, new byte[] {1}, List.of());
    RangeState outside = new RangeState(RangeKey.serviceIps("wide", IpFamily.IPV4), "10.0.0.0/16",
        RangeState.RANGE_ALLOCATION, 256, new byte[] {1}, List.of(new RangeState.Entry("10.1.0.1", web, 1)));
    Map<RangeKey, String> rejected = store.restore(RangeKey.Kind.SERVICE_IPS, IpFamily.IPV4, List.of(foreign, outside));
    assertThat(rejected).containsOnlyKeys(foreign.key());
    assertThat(rejected.get(foreign.key())).contains("made for 10.9.0.0/24, not 10.0.1.0/24");
    assertThat(store.unknownRanges()).contains(foreign.key());
    // A holder line naming a value outside its range is left out; it does not take the range down.
    assertThat(store.unknownRanges()).doesNotContain(outside.key());
    assertThat(store.holderOf(IpAddress.parse("10.0.0.1"))).isEmpty();
    assertThat(store.usage().stream().filter(u -> u.range().equals("10.0.0.0/16")).findFirst().orElseThrow().used())
        .as("its allocation bits still load").isEqualTo(1);

    RangeState tooBig = new RangeState(RangeKey.nodePorts(), "30000-32767", RangeState.RANGE_ALLOCATION, 86,
        new byte[400], List.of());
    tooBig.allocation()[0] = 1;
    assertThat(store.restore(RangeKey.Kind.NODE_PORTS, null, List.of(tooBig))).containsKey(RangeKey.nodePorts());
  }

  @Test
  void aHolderLineOfAValueTheBitsLeaveFreeIsLeftOut() {
    AllocationEngine store = store();
    RangeKey wide = RangeKey.serviceIps("wide", IpFamily.IPV4);
    RangeState empty = store().export(wide);
    IpAddress address = IpAddress.parse("10.0.2.2");
    // Named on a holder line, but not taken by the bits (a damaged or hand-edited shard).
    store.restore(RangeKey.Kind.SERVICE_IPS, IpFamily.IPV4, List.of(new RangeState(wide, empty.range(),
        empty.encoding(), empty.staticBandSize(), empty.allocation(), List.of(new RangeState.Entry(address.toString(),
        web, 1)))));
    RangeState emptyPorts = store().export(RangeKey.nodePorts());
    store.restore(RangeKey.Kind.NODE_PORTS, null, List.of(new RangeState(RangeKey.nodePorts(), emptyPorts.range(),
        emptyPorts.encoding(), emptyPorts.staticBandSize(), emptyPorts.allocation(),
        List.of(new RangeState.Entry("30005", web, 1)))));
    assertThat(store.holdsAnythingFor(web)).as("the bits are the authority").isFalse();
    assertThat(store.holderOf(address)).isEmpty();
    assertThat(store.holderOfNodePort(30005)).isEmpty();

    // So web's retry cannot claim them back while another object takes them.
    store.reserve(new ReservationRequest(api, List.of(IpClaim.specific(address)), List.of(PortClaim.specific(30005)),
        false)).join();
    assertThat(store.holderOf(address)).contains(api);
    Reservation again = store.reserve(new ReservationRequest(web, List.of(IpClaim.dynamic(IpFamily.IPV4)),
        List.of(PortClaim.dynamic()), false)).join();
    assertThat(again.ips().get(0).alreadyHeld()).as("nothing of web's to take back").isFalse();
    assertThat(again.ips().get(0).address()).isNotEqualTo(address);
    assertThat(again.ports().get(0).alreadyHeld()).isFalse();
    assertThat(again.ports().get(0).port()).isNotEqualTo(30005);
  }

  @Test
  void adoptNamesTheObjectThatCarriesAValue() {
    AllocationEngine store = store();
    IpAddress address = IpAddress.parse("10.0.4.4");
    Holder unnamed = Holder.service("default", "", "");
    store.reserve(new ReservationRequest(unnamed, List.of(IpClaim.specific(address)), List.of(PortClaim.specific(30002)),
        false)).join();
    store.drainChanged();
    Holder created = Holder.service("default", "web-x7k2p", "uid-1");
    assertThat(store.adopt(RangeKey.Kind.SERVICE_IPS, address.toString(), web, created).join())
        .as("only from the holder on record").isFalse();
    assertThat(store.adopt(RangeKey.Kind.SERVICE_IPS, address.toString(), unnamed, created).join()).isTrue();
    assertThat(store.adopt(RangeKey.Kind.NODE_PORTS, "30002", unnamed, created).join()).isTrue();
    assertThat(store.holderOf(address)).contains(created);
    assertThat(store.holderOfNodePort(30002)).contains(created);
    assertThat(store.drainChanged()).contains(RangeKey.serviceIps("wide", IpFamily.IPV4), RangeKey.nodePorts());
    assertThat(store.allocations()).allSatisfy(a -> assertThat(a.sinceEpochSeconds()).as("keeps its time")
        .isEqualTo(1000));
    assertThat(store.adopt(RangeKey.Kind.SERVICE_IPS, "10.0.9.9", null, created).join()).as("not held").isFalse();
  }

  @Test
  void aRecordWithAUidIsNotHandedToANewObjectOfTheSameName() {
    AllocationEngine store = store();
    Holder first = Holder.service("default", "web", "uid-1");
    IpAddress address = store.reserve(ReservationRequest.ips(web, List.of(IpClaim.dynamic(IpFamily.IPV4)), false))
        .join().ips().get(0).address();
    assertThat(store.reserve(ReservationRequest.ips(web, List.of(IpClaim.dynamic(IpFamily.IPV4)), false)).join()
        .ips().get(0).address()).as("CREATE retried before the object exists: the same address").isEqualTo(address);
    store.adopt(RangeKey.Kind.SERVICE_IPS, address.toString(), web, first).join();
    assertThat(store.reserve(ReservationRequest.ips(first, List.of(IpClaim.kept(address)), false)).join()
        .ips().get(0).alreadyHeld()).as("an UPDATE of that object").isTrue();
    IpAddress next = store.reserve(ReservationRequest.ips(web, List.of(IpClaim.dynamic(IpFamily.IPV4)), false))
        .join().ips().get(0).address();
    assertThat(next).as("a CREATE under the same name is a new object").isNotEqualTo(address);
    assertThat(store.releaseIp(address, Holder.service("default", "web", "uid-2")).join()).isFalse();
    assertThat(store.releaseIp(address, first).join()).isTrue();
  }

  @Test
  void aRetriedRequestGetsBackThePortsItsObjectHolds() {
    AllocationEngine store = store();
    ReservationRequest create = new ReservationRequest(web, List.of(), List.of(PortClaim.dynamic(), PortClaim.dynamic()),
        false);
    Reservation first = store.reserve(create).join();
    Reservation again = store.reserve(create).join();
    assertThat(again.ports()).extracting(PortAssignment::port)
        .containsExactlyElementsOf(first.ports().stream().map(PortAssignment::port).toList());
    assertThat(again.ports()).allSatisfy(p -> assertThat(p.alreadyHeld()).isTrue());

    int kept = first.ports().get(1).port();
    Reservation update = store.reserve(new ReservationRequest(web, List.of(),
        List.of(PortClaim.dynamic(), PortClaim.kept(kept)), false)).join();
    assertThat(update.ports().get(0).port()).as("never the port another claim names")
        .isEqualTo(first.ports().get(0).port());
    assertThat(store.reserve(new ReservationRequest(api, List.of(), List.of(PortClaim.dynamic()), false)).join()
        .ports().get(0).port()).as("another object gets a new port")
        .isNotIn(first.ports().get(0).port(), kept);
    assertThat(store.allocations()).hasSize(3);
  }
}
