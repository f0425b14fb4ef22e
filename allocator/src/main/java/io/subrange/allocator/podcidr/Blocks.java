package io.subrange.allocator.podcidr;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;

/**
 * Address math for equal-sized blocks inside a CIDR, on the full 128 bits.
 *
 * <p>{@link Cidr#indexOf} and {@link Cidr#addressAt} count single addresses and stop at 64 host
 * bits; a /32 split into /64 blocks needs the block number in bits 32-63 and a /60 split into
 * /68 blocks has it straddling the two 64-bit halves, so the shifts here work on both halves.
 * Callers keep the number of split bits at most {@link CidrSet#MAX_SPLIT_BITS}, so an index is
 * always a non-negative long.
 */
final class Blocks {

  private Blocks() {
  }

  /** The network address of block {@code index} of size /{@code blockPrefix} inside {@code outer}. */
  static IpAddress blockAddress(Cidr outer, int blockPrefix, long index) {
    int hostBits = outer.family().bits() - blockPrefix;
    IpAddress network = outer.network();
    if (outer.family() == IpFamily.IPV4) {
      return IpAddress.ipv4(network.low() | (index << hostBits));
    }
    long high;
    long low;
    if (hostBits >= 64) {
      high = hostBits == 128 ? 0 : index << (hostBits - 64);
      low = 0;
    } else {
      high = hostBits == 0 ? 0 : index >>> (64 - hostBits);
      low = index << hostBits;
    }
    // The block number only sets bits below the outer prefix, which are zero in its network.
    return IpAddress.ipv6(network.high() | high, network.low() | low);
  }

  /**
   * The index of the /{@code blockPrefix} block of {@code outer} that holds {@code address},
   * which the caller has checked is inside {@code outer}.
   */
  static long blockIndex(Cidr outer, int blockPrefix, IpAddress address) {
    int splitBits = blockPrefix - outer.prefixLength();
    if (splitBits == 0) {
      return 0;
    }
    int hostBits = outer.family().bits() - blockPrefix;
    long shifted;
    if (hostBits >= 64) {
      shifted = address.high() >>> (hostBits - 64);  // hostBits < 128 here: splitBits > 0
    } else if (hostBits == 0) {
      shifted = address.low();
    } else {
      shifted = (address.low() >>> hostBits) | (address.high() << (64 - hostBits));
    }
    return shifted & ((1L << splitBits) - 1);
  }

  /** The last address of {@code cidr}. */
  static IpAddress lastAddress(Cidr cidr) {
    int hostBits = cidr.hostBits();
    IpAddress network = cidr.network();
    if (cidr.family() == IpFamily.IPV4) {
      return IpAddress.ipv4(network.low() | ((1L << hostBits) - 1));
    }
    if (hostBits >= 64) {
      long highMask = hostBits == 128 ? -1L : (1L << (hostBits - 64)) - 1;
      return IpAddress.ipv6(network.high() | highMask, -1L);
    }
    return IpAddress.ipv6(network.high(), network.low() | ((1L << hostBits) - 1));
  }
}
