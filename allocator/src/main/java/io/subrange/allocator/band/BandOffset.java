package io.subrange.allocator.band;

/**
 * Where the static band ends: the KEP-3070 / KEP-3668 formula
 * {@code min(max(min, size / step), max)}, or 0 (no band) when {@code size <= min}.
 *
 * <p>The offset counts usable values from the start of the range. Values below it form the
 * static band (preferred for requests that name a value); values at and above it form the
 * dynamic band, which automatic allocation uses first.
 */
public final class BandOffset {

  /** ClusterIP ranges (KEP-3070): min 16, max 256, step 16. */
  public static final Formula SERVICE_IPS = new Formula(16, 256, 16);
  /** NodePort ranges (KEP-3668): min 16, max 128, step 32. */
  public static final Formula NODE_PORTS = new Formula(16, 128, 32);

  private BandOffset() {
  }

  /** One band formula; {@code size} is the range's whole size (for IPs, 2^host bits). */
  public record Formula(long min, long max, long step) {
    public long offsetFor(long size) {
      if (size <= min) {
        return 0;
      }
      return Math.min(Math.max(min, size / step), max);
    }
  }

  /**
   * The static band size of a ClusterIP block with {@code hostBits} host bits. KEP-3070 sizes
   * it from the whole block (a /16 counts 65536), saturating like Kubernetes does for huge
   * IPv6 blocks.
   */
  public static long forServiceIpBlock(int hostBits) {
    long blockSize = hostBits >= 63 ? Long.MAX_VALUE : 1L << hostBits;
    return SERVICE_IPS.offsetFor(blockSize);
  }

  /** The static band size of an inclusive port range holding {@code portCount} ports. */
  public static long forNodePorts(long portCount) {
    return NODE_PORTS.offsetFor(portCount);
  }
}
