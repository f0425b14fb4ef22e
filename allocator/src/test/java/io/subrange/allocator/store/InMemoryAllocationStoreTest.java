package io.subrange.allocator.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.subrange.allocator.ip.ServiceIpRange;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class InMemoryAllocationStoreTest {

  private final InMemoryAllocationStore store = InMemoryAllocationStore.withRanges(
      Map.of("v4", Cidr.parse("10.0.0.0/24"), "v6", Cidr.parse("fd00::/120")), new SplittableRandom(42));
  private final Holder dns = Holder.service("kube-system", "kube-dns", "");
  private final Holder web = Holder.service("default", "web", "");

  @Test
  void remembersWhoHoldsAStaticAddressAndNamesThemOnConflict() {
    IpAddress tenth = IpAddress.parse("10.0.0.10");
    List<IpAssignment> got = reserve(dns, IpClaim.specific(tenth));
    assertThat(got).containsExactly(new IpAssignment(tenth, Cidr.parse("10.0.0.0/24"), Scope.STATIC));
    assertThat(store.holderOf(tenth)).contains(dns);

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
    assertThat(store.reserve(dns, List.of(IpClaim.specific(tenth)), true).join())
        .extracting(IpAssignment::address).containsExactly(tenth);
    IpAddress shown = store.reserve(web, List.of(IpClaim.dynamic(IpFamily.IPV4)), true).join().get(0).address();
    assertThat(shown.family()).isEqualTo(IpFamily.IPV4);
    assertThat(usage(IpFamily.IPV4).used()).isZero();
    assertThat(store.holderOf(tenth)).isEmpty();

    reserve(dns, IpClaim.specific(tenth));
    assertThatThrownBy(() -> store.reserve(web, List.of(IpClaim.specific(tenth)), true).join())
        .hasCauseInstanceOf(AlreadyAllocatedException.class);
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
    InMemoryAllocationStore small = InMemoryAllocationStore.withRanges(
        Map.of("tiny", Cidr.parse("10.0.0.0/30")), new SplittableRandom(1));
    assertThatThrownBy(() -> small.reserve(web, List.of(IpClaim.dynamic(IpFamily.IPV6)), false).join())
        .hasCauseInstanceOf(NoRangeForFamilyException.class)
        .hasMessageContaining("no IPv6 Service range is configured");
    small.reserve(Holder.service("a", "a", ""), List.of(IpClaim.dynamic(IpFamily.IPV4)), false).join();
    small.reserve(Holder.service("a", "b", ""), List.of(IpClaim.dynamic(IpFamily.IPV4)), false).join();
    assertThatThrownBy(() -> small.reserve(web, List.of(IpClaim.dynamic(IpFamily.IPV4)), false).join())
        .hasCauseInstanceOf(RangeFullException.class)
        .hasMessageContaining("no free IPv4 address is left in 10.0.0.0/30");
  }

  @Test
  void servesIpv6RangesAsLargeAsASlash64() {
    InMemoryAllocationStore wide = InMemoryAllocationStore.withRanges(
        Map.of("wide", Cidr.parse("fd00:1::/64")), new SplittableRandom(7));
    ServiceIpRange range = ServiceIpRange.of(Cidr.parse("fd00:1::/64"));
    for (int i = 0; i < 1000; i++) {
      IpAddress address = wide.reserve(Holder.service("v6", "s" + i, ""), List.of(IpClaim.dynamic(IpFamily.IPV6)), false)
          .join().get(0).address();
      assertThat(range.offsetOf(address)).isNotEqualTo(-1L);
      assertThat(Long.compareUnsigned(range.offsetOf(address), 256)).isGreaterThanOrEqualTo(0);
    }
    IpAddress last = IpAddress.parse("fd00:1::ffff:ffff:ffff:ffff");
    assertThat(wide.reserve(web, List.of(IpClaim.specific(last)), false).join().get(0).address()).isEqualTo(last);
    assertThat(wide.usage().get(0).used()).isEqualTo(1001);
    assertThat(wide.usage().get(0).size()).as("2^64-1, unsigned").isEqualTo(-1L);
  }

  @Test
  void rangesComeAndGoAtRunTime() {
    InMemoryAllocationStore growing = InMemoryAllocationStore.withRanges(
        Map.of("first", Cidr.parse("10.0.0.0/30")), new SplittableRandom(3));
    growing.reserve(Holder.service("a", "a", ""), List.of(IpClaim.dynamic(IpFamily.IPV4)), false).join();
    growing.reserve(Holder.service("a", "b", ""), List.of(IpClaim.dynamic(IpFamily.IPV4)), false).join();
    growing.addServiceRange("second", Cidr.parse("10.1.0.0/24"));
    IpAddress third = growing.reserve(Holder.service("a", "c", ""), List.of(IpClaim.dynamic(IpFamily.IPV4)), false)
        .join().get(0).address();
    assertThat(Cidr.parse("10.1.0.0/24").contains(third)).isTrue();

    growing.markServiceRangeTerminating("first");
    assertThat(growing.serviceRangeInUseOnlyBy("first")).isEqualTo(2);
    assertThatThrownBy(() -> growing.removeServiceRange("first")).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> growing.reserve(web, List.of(IpClaim.specific(IpAddress.parse("10.0.0.1"))), false).join())
        .hasCauseInstanceOf(NotInRangeException.class)
        .hasMessageContaining("Service range 10.0.0.0/30 is being deleted");
  }

  private List<IpAssignment> reserve(Holder holder, IpClaim... claims) {
    try {
      return store.reserve(holder, List.of(claims), false).join();
    } catch (CompletionException e) {
      throw (RuntimeException) e.getCause();
    }
  }

  private RangeUsage usage(IpFamily family) {
    return store.usage().stream().filter(u -> Cidr.parse(u.range()).family() == family).findFirst().orElseThrow();
  }
}
