package io.subrange.allocator.ip;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ServiceIpPoolTest {

  private final ServiceIpPool pool = new ServiceIpPool(IpFamily.IPV4, new SplittableRandom(11));

  @Test
  void anAddressIsTakenInEveryRangeThatCoversIt() {
    pool.add("wide", Cidr.parse("10.0.0.0/16"));
    pool.add("narrow", Cidr.parse("10.0.1.0/24"));
    assertThat(pool.allocate(IpAddress.parse("10.0.1.20"))).isEqualTo(ServiceIpPool.Take.TAKEN);
    assertThat(usedIn("10.0.0.0/16")).isEqualTo(1);
    assertThat(usedIn("10.0.1.0/24")).isEqualTo(1);
    assertThat(pool.allocate(IpAddress.parse("10.0.1.20"))).isEqualTo(ServiceIpPool.Take.ALREADY_ALLOCATED);
    // 10.0.1.255 is the /24's broadcast address but an ordinary address of the /16.
    assertThat(pool.allocate(IpAddress.parse("10.0.1.255"))).isEqualTo(ServiceIpPool.Take.TAKEN);
    assertThat(usedIn("10.0.1.0/24")).isEqualTo(1);
    assertThat(pool.release(IpAddress.parse("10.0.1.20"))).isTrue();
    assertThat(usedIn("10.0.1.0/24")).isZero();
    assertThat(pool.release(IpAddress.parse("10.0.1.20"))).isFalse();
  }

  @Test
  void aRangeAddedLaterSeesWhatIsAlreadyTaken() {
    pool.add("wide", Cidr.parse("10.0.0.0/16"));
    pool.allocate(IpAddress.parse("10.0.1.20"));
    pool.allocate(IpAddress.parse("10.0.9.9"));
    pool.add("narrow", Cidr.parse("10.0.1.0/24"));
    assertThat(usedIn("10.0.1.0/24")).isEqualTo(1);
    assertThat(pool.isAllocated(IpAddress.parse("10.0.1.20"))).isTrue();
  }

  @Test
  void aTerminatingRangeHandsOutNothingAndHoldsItsDeletionWhileItAloneCoversAddresses() {
    pool.add("old", Cidr.parse("10.0.0.0/28"));
    pool.add("new", Cidr.parse("10.1.0.0/24"));
    pool.allocate(IpAddress.parse("10.0.0.5"));
    pool.markTerminating("old");
    assertThat(pool.inUseOnlyBy("old")).isEqualTo(1);
    assertThatThrownBy(() -> pool.allocate(IpAddress.parse("10.0.0.6")))
        .hasMessageContaining("Service range 10.0.0.0/28 is being deleted");
    for (int i = 0; i < 200; i++) {
      assertThat(Cidr.parse("10.1.0.0/24").contains(pool.allocateNext().address())).isTrue();
    }
    assertThatThrownBy(() -> pool.remove("old")).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("still holds 1 addresses no other range covers");

    pool.add("cover", Cidr.parse("10.0.0.0/24"));  // a live range now covers 10.0.0.5 too
    assertThat(pool.inUseOnlyBy("old")).isZero();
    pool.remove("old");
    assertThat(pool.isAllocated(IpAddress.parse("10.0.0.5"))).isTrue();
    assertThat(pool.ranges()).containsOnlyKeys("new", "cover");
  }

  @Test
  void dynamicBandsOfEveryRangeComeBeforeAnyStaticBand() {
    pool.add("a", Cidr.parse("10.0.0.0/27"));   // 30 addresses, static band 16
    pool.add("b", Cidr.parse("10.0.1.0/27"));
    ServiceIpRange a = ServiceIpRange.of(Cidr.parse("10.0.0.0/27"));
    ServiceIpRange b = ServiceIpRange.of(Cidr.parse("10.0.1.0/27"));
    for (int i = 0; i < 28; i++) {
      IpAddress address = pool.allocateNext().address();
      ServiceIpRange home = a.canAssign(address) ? a : b;
      assertThat(home.offsetOf(address)).as(address + " in a dynamic band").isGreaterThanOrEqualTo(16);
    }
    IpAddress firstStatic = pool.allocateNext().address();
    assertThat((a.canAssign(firstStatic) ? a : b).offsetOf(firstStatic)).isLessThan(16);
  }

  @Test
  void spreadsDynamicAllocationsByFreeSpace() {
    pool.add("small", Cidr.parse("10.0.0.0/24"));
    pool.add("large", Cidr.parse("10.1.0.0/20"));
    int inLarge = 0;
    for (int i = 0; i < 1000; i++) {
      if (Cidr.parse("10.1.0.0/20").contains(pool.allocateNext().address())) {
        inLarge++;
      }
    }
    // Free dynamic space is 238 : 3838, so about 94% should land in the large range.
    assertThat(inLarge).isBetween(880, 990);
  }

  @Test
  void refusesAnotherFamilyAndRenamedCidrs() {
    pool.add("a", Cidr.parse("10.0.0.0/24"));
    assertThatThrownBy(() -> pool.add("v6", Cidr.parse("fd00::/64"))).hasMessageContaining("is not IPv4");
    assertThatThrownBy(() -> pool.add("a", Cidr.parse("10.0.1.0/24"))).hasMessageContaining("cannot become");
    assertThatThrownBy(() -> pool.allocate(IpAddress.parse("10.9.0.1")))
        .hasMessage("10.9.0.1 is not in any Service range (10.0.0.0/24)");
  }

  private long usedIn(String cidr) {
    return pool.usage().stream().filter(u -> u.range().equals(cidr)).findFirst().orElseThrow().used();
  }
}
