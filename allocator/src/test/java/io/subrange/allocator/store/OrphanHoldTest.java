package io.subrange.allocator.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.port.PortRange;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Holds of creates that never land (a quota or a later webhook refuses the object after subrange
 * reserved for it): a retry re-arms them, but only for a while, and the reconciler's release of
 * such a leak never frees a hold a retry has just re-armed.
 */
class OrphanHoldTest {

  private final SteppedClock clock = new SteppedClock(1_000_000);
  private final AllocationEngine engine = newEngine();
  /** A create retried under the same name, never stored: no uid ever. */
  private final Holder retried = Holder.service("tenant", "flood", "");

  private AllocationEngine newEngine() {
    AllocationEngine engine = new AllocationEngine(PortRange.parse("30000-30127"), new SplittableRandom(3),
        clock);
    engine.addServiceRange("v4", Cidr.parse("10.0.0.0/24"));
    return engine;
  }

  @Test
  void retriesReArmAHoldOnlyForABoundedTime() {
    List<PortClaim> ports = dynamicPorts(40);
    Reservation first = engine.reserve(new ReservationRequest(retried, List.of(IpClaim.dynamic(IpFamily.IPV4)), ports,
        false));
    long takenAt = clock.now();
    long since = takenAt;
    // Retried every 50 s (under a 60 s grace): each retry gets the same values and re-arms them ...
    while (clock.now() - takenAt < AllocationEngine.MAX_REARMED_HOLD_SECONDS - 50) {
      clock.advance(50);
      Reservation again = engine.reserve(new ReservationRequest(retried, List.of(IpClaim.dynamic(IpFamily.IPV4)),
          ports, false));
      assertThat(again.ports()).extracting(PortAssignment::port)
          .containsExactlyInAnyOrderElementsOf(first.ports().stream().map(PortAssignment::port).toList());
      since = sinceOf(first.ips().get(0).address().toString());
      assertThat(since).as("re-armed").isEqualTo(clock.now());
    }
    // ... until the bound: then the hold's clock stops, and the grace period runs out for it.
    clock.advance(100);
    engine.reserve(new ReservationRequest(retried, List.of(IpClaim.dynamic(IpFamily.IPV4)), ports, false));
    assertThat(sinceOf(first.ips().get(0).address().toString())).as("no longer re-armed").isEqualTo(since);
    assertThat(engine.nodePortUsage().used()).as("the storm took nothing more").isEqualTo(40);
  }

  @Test
  void aLeakReleaseLosesToARetryThatReArmedTheHold() {
    Reservation held = engine.reserve(new ReservationRequest(retried, List.of(IpClaim.dynamic(IpFamily.IPV4)),
        List.of(PortClaim.dynamic()), false));
    IpAddress address = held.ips().get(0).address();
    int port = held.ports().get(0).port();
    long judged = sinceOf(address.toString());  // what the reconciler read when it found the leak
    clock.advance(70);
    engine.reserve(new ReservationRequest(retried, List.of(IpClaim.dynamic(IpFamily.IPV4)),
        List.of(PortClaim.dynamic()), false));  // the retry lands first

    assertThat(engine.releaseLeakedIp(address, retried, judged)).isFalse();
    assertThat(engine.releaseLeakedNodePort(port, retried, judged)).isFalse();
    assertThat(engine.holderOf(address)).contains(retried);

    // Judged on the hold as it is now, the release goes through.
    long now = sinceOf(address.toString());
    assertThat(engine.releaseLeakedIp(address, retried, now)).isTrue();
    assertThat(engine.releaseLeakedNodePort(port, retried, now)).isTrue();
  }

  @Test
  void theBoundSurvivesAnExportAndRestore() {
    engine.reserve(new ReservationRequest(retried, List.of(IpClaim.dynamic(IpFamily.IPV4)), List.of(), false));
    long takenAt = clock.now();
    clock.advance(30);
    engine.reserve(new ReservationRequest(retried, List.of(IpClaim.dynamic(IpFamily.IPV4)), List.of(), false));
    RangeKey key = RangeKey.serviceIps("v4", IpFamily.IPV4);
    RangeState state = engine.export(key);
    assertThat(state.entries()).singleElement().satisfies(entry -> {
      assertThat(entry.sinceEpochSeconds()).isEqualTo(takenAt + 30);
      assertThat(entry.firstEpochSeconds()).isEqualTo(takenAt);
    });
    AllocationEngine other = newEngine();
    other.restore(RangeKey.Kind.SERVICE_IPS, IpFamily.IPV4, List.of(state));
    assertThat(other.export(key).entries()).isEqualTo(state.entries());
  }

  private long sinceOf(String value) {
    return engine.allocations().stream().filter(a -> a.value().equals(value)).findFirst().orElseThrow()
        .sinceEpochSeconds();
  }

  private static List<PortClaim> dynamicPorts(int count) {
    List<PortClaim> claims = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      claims.add(PortClaim.dynamic());
    }
    return claims;
  }
}
