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
}
