package io.subrange.allocator.ip;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import org.junit.jupiter.api.Test;

class ServiceIpRangeTest {

  @Test
  void ipv4SkipsNetworkAndBroadcast() {
    ServiceIpRange range = ServiceIpRange.of(Cidr.parse("10.96.0.0/12"));
    assertThat(range.size()).isEqualTo(1_048_574);
    assertThat(range.staticBandSize()).isEqualTo(256);
    assertThat(range.addressAt(0)).hasToString("10.96.0.1");
    assertThat(range.addressAt(range.size() - 1)).hasToString("10.111.255.254");
    assertThat(range.offsetOf(IpAddress.parse("10.96.0.10"))).isEqualTo(9);
    assertThat(range.offsetOf(IpAddress.parse("10.96.0.0"))).isEqualTo(-1);
    assertThat(range.offsetOf(IpAddress.parse("10.111.255.255"))).isEqualTo(-1);
    assertThat(range.offsetOf(IpAddress.parse("10.112.0.1"))).isEqualTo(-1);
    assertThat(range.describeStaticBand()).isEqualTo("10.96.0.1-10.96.1.0");
    assertThat(range.describeDynamicBand()).isEqualTo("10.96.1.1-10.111.255.254");
  }

  @Test
  void ipv6SkipsOnlyTheNetworkAddress() {
    ServiceIpRange range = ServiceIpRange.of(Cidr.parse("fd00::/108"));
    assertThat(range.size()).isEqualTo((1 << 20) - 1);
    assertThat(range.addressAt(range.size() - 1)).hasToString("fd00::f:ffff");
    assertThat(range.offsetOf(IpAddress.parse("fd00::f:ffff"))).isEqualTo(range.size() - 1);
  }

  @Test
  void smallBlocksHaveNoStaticBand() {
    ServiceIpRange range = ServiceIpRange.of(Cidr.parse("10.0.0.0/28"));
    assertThat(range.size()).isEqualTo(14);
    assertThat(range.staticBandSize()).isZero();
    assertThat(range.describeStaticBand()).isEqualTo("none");
  }

  @Test
  void explainsUnassignableAddresses() {
    ServiceIpRange range = ServiceIpRange.of(Cidr.parse("10.0.0.0/24"));
    assertThat(range.whyNotAssignable(IpAddress.parse("10.0.0.0"))).isEqualTo("10.0.0.0 is the network address of 10.0.0.0/24");
    assertThat(range.whyNotAssignable(IpAddress.parse("10.0.0.255"))).isEqualTo("10.0.0.255 is the broadcast address of 10.0.0.0/24");
    assertThat(range.whyNotAssignable(IpAddress.parse("10.0.1.1"))).isEqualTo("10.0.1.1 is not in 10.0.0.0/24");
  }

  @Test
  void refusesBlocksWithoutAddressesOrTooLarge() {
    assertThatThrownBy(() -> ServiceIpRange.of(Cidr.parse("10.0.0.0/31"))).hasMessageContaining("too small");
    assertThatThrownBy(() -> ServiceIpRange.of(Cidr.parse("10.0.0.0/7"))).hasMessageContaining("too large");
    assertThat(ServiceIpRange.of(Cidr.parse("10.0.0.0/30")).size()).isEqualTo(2);
    assertThat(ServiceIpRange.of(Cidr.parse("fd00::/127")).size()).isEqualTo(1);
  }
}
