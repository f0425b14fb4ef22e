package io.subrange.allocator.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.podcidr.ClusterCidr;
import io.subrange.allocator.podcidr.Node;
import io.subrange.allocator.port.PortRange;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** What the persisting store relies on: changed ranges, export, restore, releases. */
class InMemoryAllocationStorePersistenceTest {

  private static final Clock AT_1000 = Clock.fixed(Instant.ofEpochSecond(1000), ZoneOffset.UTC);

  private final Holder web = Holder.service("default", "web", "");
  private final Holder api = Holder.service("default", "api", "");

  private static InMemoryAllocationStore store() {
    InMemoryAllocationStore store = new InMemoryAllocationStore(PortRange.parse("30000-32767"), new SplittableRandom(1),
        AT_1000);
    store.addServiceRange("wide", Cidr.parse("10.0.0.0/16"));
    store.addServiceRange("narrow", Cidr.parse("10.0.1.0/24"));
    store.addServiceRange("v6", Cidr.parse("fd00::/64"));
    store.addClusterCidr(ClusterCidr.ipv4("pods", null, 8, "10.244.0.0/16"));
    return store;
  }

  @Test
  void everyRangeAChangeTouchesIsReportedOnce() {
    InMemoryAllocationStore store = store();
    store.reserve(new ReservationRequest(web, List.of(IpClaim.specific(IpAddress.parse("10.0.1.7"))),
        List.of(PortClaim.dynamic()), false)).join();
    assertThat(store.drainChanged()).containsExactlyInAnyOrder(RangeKey.serviceIps("wide", IpFamily.IPV4),
        RangeKey.serviceIps("narrow", IpFamily.IPV4), RangeKey.nodePorts());
    assertThat(store.drainChanged()).isEmpty();

    store.reserve(ReservationRequest.ips(api, List.of(IpClaim.dynamic(IpFamily.IPV6)), true)).join();
    assertThat(store.drainChanged()).as("dry runs change nothing").isEmpty();
    store.reservePodCidrs(Node.named("n1"), List.of(), false).join();
    assertThat(store.drainChanged()).containsExactly(RangeKey.podCidrs("pods"));
  }

  @Test
  void exportedStateRestoresIntoAnotherReplicaWithHoldersAndTimes() {
    InMemoryAllocationStore one = store();
    one.reserve(new ReservationRequest(web, List.of(IpClaim.specific(IpAddress.parse("10.0.1.7")),
        IpClaim.dynamic(IpFamily.IPV6)), List.of(PortClaim.specific(30080)), false)).join();
    one.reservePodCidrs(Node.named("n1"), List.of(), false).join();

    InMemoryAllocationStore two = store();
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
    assertThatThrownBy(() -> two.reservePodCidrs(Node.named("n2"), List.of(Cidr.parse("10.244.0.0/24")), false).join())
        .hasMessageContaining("already allocated to node n1");
  }

  @Test
  void restoreReplacesWhatWasThere() {
    InMemoryAllocationStore store = store();
    store.reserve(ReservationRequest.ips(web, List.of(IpClaim.specific(IpAddress.parse("10.0.2.2"))), false)).join();
    RangeState empty = store().export(RangeKey.serviceIps("wide", IpFamily.IPV4));
    store.restore(RangeKey.Kind.SERVICE_IPS, IpFamily.IPV4, List.of(empty));
    assertThat(store.holderOf(IpAddress.parse("10.0.2.2"))).isEmpty();
    assertThat(store.reserve(ReservationRequest.ips(api, List.of(IpClaim.specific(IpAddress.parse("10.0.2.2"))), false))
        .join().ips()).hasSize(1);
  }

  @Test
  void releasesFreeOnlyWhatTheNamedHolderHolds() {
    InMemoryAllocationStore store = store();
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
    store.reservePodCidrs(Node.named("gone"), List.of(), false).join();
    assertThat(store.releasePodCidrs("gone").join()).isTrue();
    assertThat(store.releasePodCidrs("gone").join()).isFalse();
    assertThat(store.allocations()).isEmpty();
  }

  @Test
  void exportNamesTheEncodingByRangeSize() {
    InMemoryAllocationStore store = store();
    assertThat(store.export(RangeKey.serviceIps("wide", IpFamily.IPV4)).encoding()).isEqualTo(RangeState.RANGE_ALLOCATION);
    assertThat(store.export(RangeKey.serviceIps("v6", IpFamily.IPV6)).encoding()).isEqualTo(RangeState.SPARSE);
    assertThat(store.export(RangeKey.podCidrs("pods")).encoding()).isEqualTo(RangeState.NODE_LEDGER);
    assertThat(store.rangeKeys()).hasSize(5);
  }
}
