package io.subrange.allocator.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.podcidr.NodeView;
import io.subrange.allocator.podcidr.PodCidrAllocation;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** The memory store: the engine's answers as futures, completed at once. */
class InMemoryAllocationStoreTest {

  private final AllocationEngine engine = AllocationEngine.withRanges(Map.of("v4", Cidr.parse("10.0.0.0/24")),
      new SplittableRandom(42));
  private final InMemoryAllocationStore store = new InMemoryAllocationStore(engine);
  private final Holder dns = Holder.service("kube-system", "kube-dns", "");
  private final Holder web = Holder.service("default", "web", "");
  private final IpAddress tenth = IpAddress.parse("10.0.0.10");

  @Test
  void aGrantIsAFutureCompletedWithTheEnginesAnswer() {
    CompletableFuture<Reservation> granted = store.reserve(ReservationRequest.ips(dns, List.of(IpClaim.specific(tenth)),
        false));
    assertThat(granted).isCompleted();
    assertThat(granted.join().ips()).extracting(IpAssignment::address).containsExactly(tenth);
    assertThat(engine.holderOf(tenth)).as("applied to the engine").contains(dns);
    assertThat(store.holderOf(tenth)).contains(dns);
    assertThat(store.releaseIp(tenth, dns)).isCompletedWithValue(true);
    assertThat(store.releaseIp(tenth, dns)).isCompletedWithValue(false);
  }

  @Test
  void aRefusalIsAFutureFailedWithTheEnginesException() {
    store.reserve(ReservationRequest.ips(dns, List.of(IpClaim.specific(tenth)), false)).join();
    CompletableFuture<Reservation> refused = store.reserve(ReservationRequest.ips(web, List.of(IpClaim.specific(tenth)),
        false));
    assertThat(refused).isCompletedExceptionally();
    assertThatThrownBy(refused::join).isInstanceOf(CompletionException.class)
        .cause().isInstanceOfSatisfying(AlreadyAllocatedException.class, e -> {
          assertThat(e.holder()).contains(dns);
          assertThat(e.failedClaim()).isEqualTo(IpClaim.specific(tenth));
        });
    assertThat(engine.holderOf(tenth)).contains(dns);

    CompletableFuture<PodCidrAllocation> noClusterCidr = store.reservePodCidrs(NodeView.named("n1"), List.of(), false);
    assertThatThrownBy(noClusterCidr::join).cause().isInstanceOf(PodCidrUnavailableException.class);

    engine.requireLoadedState();
    assertThatThrownBy(store.releaseIp(tenth, dns)::join).cause().isInstanceOf(StoreUnavailableException.class);
    assertThatThrownBy(store.adopt(RangeKey.Kind.NODE_PORTS, "30001", null, dns)::join).cause()
        .isInstanceOf(StoreUnavailableException.class);
  }

  @Test
  void aFailureThatIsNoRefusalIsThrown() {
    assertThatThrownBy(() -> store.adopt(RangeKey.Kind.SERVICE_IPS, "not an address", null, dns))
        .isNotInstanceOf(AllocationException.class).isInstanceOf(IllegalArgumentException.class);
    assertThat(store.servedFamilies()).containsExactly(IpFamily.IPV4);
  }
}
