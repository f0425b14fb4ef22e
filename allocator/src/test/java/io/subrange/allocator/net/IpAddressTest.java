package io.subrange.allocator.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import inet.ipaddr.IPAddressString;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class IpAddressTest {

  @ParameterizedTest
  @CsvSource({
      "10.96.0.10, 10.96.0.10",
      "0.0.0.0, 0.0.0.0",
      "255.255.255.255, 255.255.255.255",
      "FD00::1, fd00::1",
      "fd00:0:0:0:0:0:0:1, fd00::1",
      "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",
      "2001:0db8:0000:0000:0000:0000:0000:0001, 2001:db8::1",
      "2001:db8:0:1:1:1:1:1, 2001:db8:0:1:1:1:1:1",
      "::, ::",
      "::1, ::1",
  })
  void printsTheCanonicalForm(String text, String canonical) {
    assertThat(IpAddress.parse(text)).hasToString(canonical);
    assertThat(IpAddress.parse(canonical)).isEqualTo(IpAddress.parse(text));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "10.96.0", "10.96.0.256", "010.96.0.1", "10.96.0.01", "167772160",
      "0xa.0.0.1", "10.96.0.1/12", "10.96.*.1", "10.96.0.1-5", "fe80::1%eth0", "::ffff:10.0.0.1",
      "::ffff:a00:1", "fd00::1/64", "fd00::g", "fd00:::1", " 10.0.0.1", "10.0.0.1 ", "10.0.0.1\n", "None"})
  void rejectsAnythingButOneStrictSpelling(String text) {
    assertThatThrownBy(() -> IpAddress.parse(text))
        .isInstanceOf(AddressFormatException.class)
        .hasMessageContaining("\"" + text + "\"");
  }

  @Test
  void sayWhyAnIpv4MappedAddressIsRefused() {
    assertThatThrownBy(() -> IpAddress.parse("::ffff:a00:1"))
        .hasMessageContaining("IPv4-mapped");
  }

  @Test
  void addsAcrossTheLow64BitsOfAnIpv6Address() {
    IpAddress beforeCarry = IpAddress.parse("fd00:0:0:1:ffff:ffff:ffff:ffff");
    assertThat(beforeCarry.plus(1)).isEqualTo(IpAddress.parse("fd00:0:0:2::"));
    assertThat(IpAddress.parse("fd00::").plus(-1L)).isEqualTo(IpAddress.parse("fd00::ffff:ffff:ffff:ffff"));
  }

  @Test
  void refusesToOverflowIpv4() {
    assertThatThrownBy(() -> IpAddress.parse("255.255.255.255").plus(1)).isInstanceOf(ArithmeticException.class);
    assertThat(IpAddress.parse("10.0.0.255").plus(1)).hasToString("10.0.1.0");
  }

  @Test
  void ordersByFamilyThenValue() {
    assertThat(IpAddress.parse("10.0.0.2")).isGreaterThan(IpAddress.parse("10.0.0.1"));
    assertThat(IpAddress.parse("::1")).isGreaterThan(IpAddress.parse("255.255.255.255"));
    assertThat(IpAddress.parse("8000::")).isGreaterThan(IpAddress.parse("7fff::"));
  }

  @Test
  void theQuickPathForCanonicalIpv4AgreesWithTheLibraryParser() throws Exception {
    SplittableRandom random = new SplittableRandom(7);
    for (int n = 0; n < 20_000; n++) {
      long value = random.nextLong(1L << 32);
      String text = (value >>> 24) + "." + ((value >>> 16) & 255) + "." + ((value >>> 8) & 255) + "." + (value & 255);
      long byLibrary = new IPAddressString(text).toAddress().getValue().longValueExact();
      assertThat(IpAddress.parse(text).low()).as(text).isEqualTo(byLibrary).isEqualTo(value);
    }
    for (String bad : List.of("256.1.1.1", "1.2.3.04", "1.2.3.4.5", "1.2.3", "1..2.3", "1.2.3.4.", " 1.2.3.4",
        "1.2.3.4 ", "1.2.3.-4", "1.2.3.1000", "00.1.2.3")) {
      assertThatThrownBy(() -> IpAddress.parse(bad)).as(bad).isInstanceOf(AddressFormatException.class);
    }
    assertThat(IpAddress.parse("0.0.0.0")).isEqualTo(IpAddress.ipv4(0));
    assertThat(IpAddress.parse("255.255.255.255")).isEqualTo(IpAddress.ipv4(0xFFFFFFFFL));
  }
}
