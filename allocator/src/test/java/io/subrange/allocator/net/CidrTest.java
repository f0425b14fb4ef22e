package io.subrange.allocator.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class CidrTest {

  @ParameterizedTest
  @CsvSource({
      "10.96.0.0/12, 10.96.0.0/12, 20",
      "FD00::/108, fd00::/108, 20",
      "fd00:0:0:0::/64, fd00::/64, 64",
      "0.0.0.0/0, 0.0.0.0/0, 32",
      "10.0.0.1/32, 10.0.0.1/32, 0",
  })
  void parsesAndPrintsCanonically(String text, String canonical, int hostBits) {
    Cidr cidr = Cidr.parse(text);
    assertThat(cidr).hasToString(canonical);
    assertThat(cidr.hostBits()).isEqualTo(hostBits);
  }

  @Test
  void refusesHostBitsAndNamesTheNetworkMeant() {
    assertThatThrownBy(() -> Cidr.parse("10.96.0.1/12"))
        .isInstanceOf(AddressFormatException.class)
        .hasMessage("\"10.96.0.1/12\" is not a CIDR: host bits are set (the network is 10.96.0.0/12)");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "10.96.0.0", "10.96.0.0/33", "10.96.0.0/-1", "10.96.0.0/012", "fd00::/129",
      "10.96.0.0/12/1", "010.96.0.0/12", "garbage", "10.96.0.0/255.240.0.0"})
  void refusesMalformedText(String text) {
    assertThatThrownBy(() -> Cidr.parse(text)).isInstanceOf(AddressFormatException.class);
  }

  @Test
  void mapsAddressesToIndexesAndBack() {
    Cidr cidr = Cidr.parse("10.96.0.0/12");
    assertThat(cidr.indexOf(IpAddress.parse("10.96.0.10"))).isEqualTo(10);
    assertThat(cidr.addressAt(10)).hasToString("10.96.0.10");
    assertThat(cidr.indexOf(IpAddress.parse("10.112.0.0"))).isEqualTo(-1);
    assertThat(cidr.contains(IpAddress.parse("10.111.255.255"))).isTrue();
    assertThat(cidr.contains(IpAddress.parse("fd00::1"))).isFalse();
    assertThatThrownBy(() -> cidr.addressAt(1 << 20)).isInstanceOf(IndexOutOfBoundsException.class);

    Cidr v6 = Cidr.parse("fd00:1::/64");
    assertThat(v6.addressAt(-2L)).hasToString("fd00:1::ffff:ffff:ffff:fffe");
    assertThat(v6.indexOf(IpAddress.parse("fd00:1::ffff:ffff:ffff:fffe"))).isEqualTo(-2L);
  }

  @Test
  void knowsContainmentBetweenBlocks() {
    Cidr wide = Cidr.parse("10.96.0.0/12");
    assertThat(wide.contains(Cidr.parse("10.100.0.0/16"))).isTrue();
    assertThat(wide.overlaps(Cidr.parse("10.0.0.0/8"))).isTrue();
    assertThat(wide.overlaps(Cidr.parse("10.112.0.0/16"))).isFalse();
  }
}
