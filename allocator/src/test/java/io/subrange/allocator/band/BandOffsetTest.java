package io.subrange.allocator.band;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class BandOffsetTest {

  /** The KEP-3070 table: whole-block size to static band size. */
  @ParameterizedTest(name = "/{0} -> {1}")
  @CsvSource({
      "28, 0",    // 16 addresses: no band
      "27, 16",   // 32 / 16 = 2, raised to the minimum
      "24, 16",
      "23, 32",
      "22, 64",
      "21, 128",
      "20, 256",
      "16, 256",  // 65536 / 16 = 4096, capped at the maximum
      "12, 256",
      "0, 256",
  })
  void serviceIpv4Blocks(int prefix, long expected) {
    assertThat(BandOffset.forServiceIpBlock(32 - prefix)).isEqualTo(expected);
  }

  @ParameterizedTest(name = "IPv6 /{0} -> {1}")
  @CsvSource({"124, 0", "120, 16", "112, 256", "108, 256", "64, 256"})
  void serviceIpv6Blocks(int prefix, long expected) {
    assertThat(BandOffset.forServiceIpBlock(128 - prefix)).isEqualTo(expected);
  }

  /** KEP-3668: 30000-32767 holds 2768 ports and reserves 30000-30085 (86 ports). */
  @ParameterizedTest(name = "{0} ports -> {1}")
  @CsvSource({"2768, 86", "16, 0", "17, 16", "512, 16", "1024, 32", "4096, 128", "65535, 128"})
  void nodePortRanges(long ports, long expected) {
    assertThat(BandOffset.forNodePorts(ports)).isEqualTo(expected);
  }

  /** ipallocator Test_calculateRangeOffset, case names as upstream has them. */
  @ParameterizedTest(name = "Test_calculateRangeOffset/{0}: {1} -> {2}")
  @CsvSource({
      "full mask IPv4, 192.168.1.1/32, 0",
      "full mask IPv6, fd00::1/128, 0",
      "very small mask IPv4, 192.168.1.1/30, 0",
      "very small mask IPv6, fd00::1/126, 0",
      "small mask IPv4, 192.168.1.1/28, 0",
      "small mask IPv4, 192.168.1.1/27, 16",
      "small mask IPv6, fd00::1/124, 0",
      "small mask IPv6, fd00::1/122, 16",
      "medium mask IPv4, 192.168.1.1/22, 64",
      "medium mask IPv6, fd00::1/118, 64",
      "large mask IPv4, 192.168.1.1/8, 256",
      "large mask IPv6, fd00::1/12, 256",
  })
  void upstreamIpallocatorCalculateRangeOffset(String name, String cidr, long expected) {
    int prefix = Integer.parseInt(cidr.substring(cidr.indexOf('/') + 1));
    int bits = cidr.contains(":") ? 128 : 32;
    assertThat(BandOffset.forServiceIpBlock(bits - prefix)).as(name).isEqualTo(expected);
  }

  /** portallocator Test_calculateRangeOffset: range size (from 30000) to static band size. */
  @ParameterizedTest(name = "Test_calculateRangeOffset/{0}: {1} ports -> {2}")
  @CsvSource({
      "default node port range, 2768, 86",
      "very small node port range, 10, 0",
      "small node port range (lower boundary), 16, 0",
      "small node port range, 128, 16",
      "medium node port range, 2048, 64",
      "large node port range (upper boundary), 4096, 128",
      "large node port range, 8192, 128",
  })
  void upstreamPortallocatorCalculateRangeOffset(String name, long size, long expected) {
    assertThat(BandOffset.forNodePorts(size)).as(name).isEqualTo(expected);
  }
}
