package io.subrange.allocator.ip;

import io.subrange.allocator.band.BandOffset;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;

/**
 * A Service CIDR seen as a list of assignable addresses, and the map between an address and
 * its offset in that list.
 *
 * <p>As in Kubernetes, the network address is never assigned and neither is the IPv4
 * broadcast address; offset 0 is network+1. The static band is the KEP-3070 offset computed
 * from the whole block. Blocks of up to 64 host bits are served (KEP-1880 allows IPv6 Service
 * CIDRs as large as a /64); sizes and offsets are unsigned 64-bit values, so a /64's size,
 * 2^64-1, reads as -1.
 */
public final class ServiceIpRange {

  /** Most host bits an IPv6 Service range may have: a /64 (KEP-1880). */
  public static final int MAX_IPV6_HOST_BITS = 64;
  /** Most host bits an IPv4 Service range may have: a /8, 2^24 addresses, still one bitmap. */
  public static final int MAX_IPV4_HOST_BITS = 24;

  private final Cidr cidr;
  private final long size;
  private final long staticBandSize;

  private ServiceIpRange(Cidr cidr, long size, long staticBandSize) {
    this.cidr = cidr;
    this.size = size;
    this.staticBandSize = staticBandSize;
  }

  /**
   * The range for a Service CIDR.
   *
   * @throws IllegalArgumentException when the block has no assignable address, or is larger
   *     than this allocator serves
   */
  public static ServiceIpRange of(Cidr cidr) {
    int hostBits = cidr.hostBits();
    int minHostBits = cidr.family() == IpFamily.IPV4 ? 2 : 1;
    if (hostBits < minHostBits) {
      throw new IllegalArgumentException(cidr + " is too small for Services: it has no assignable"
          + " address (use at most /" + (cidr.family().bits() - minHostBits) + ")");
    }
    int maxHostBits = cidr.family() == IpFamily.IPV4 ? MAX_IPV4_HOST_BITS : MAX_IPV6_HOST_BITS;
    if (hostBits > maxHostBits) {
      throw new IllegalArgumentException(cidr + " is too large: an " + cidr.family() + " Service range may be at"
          + " most a /" + (cidr.family().bits() - maxHostBits));
    }
    long blockSize = hostBits == 64 ? 0 : 1L << hostBits;  // 2^64 wraps to 0; the subtraction below is unsigned
    long unassignable = cidr.family() == IpFamily.IPV4 ? 2 : 1;  // network (+ IPv4 broadcast)
    long size = blockSize - unassignable;
    long band = BandOffset.forServiceIpBlock(hostBits);
    return new ServiceIpRange(cidr, size, Long.compareUnsigned(band, size) < 0 ? band : size);
  }

  public Cidr cidr() {
    return cidr;
  }

  public IpFamily family() {
    return cidr.family();
  }

  /** Number of assignable addresses, unsigned. */
  public long size() {
    return size;
  }

  /** Number of addresses in the static band, which starts at network+1. */
  public long staticBandSize() {
    return staticBandSize;
  }

  /**
   * {@link #offsetOf} for an address this range cannot assign. Offsets are unsigned, so a /64's
   * upper half reads negative; compare with this value, never with {@code < 0}. It is never a
   * real offset: the largest range's last offset is 2^64-2.
   */
  public static final long NOT_ASSIGNABLE = -1L;

  /** The offset of an assignable address, or {@link #NOT_ASSIGNABLE}. */
  public long offsetOf(IpAddress address) {
    if (!cidr.contains(address)) {
      return NOT_ASSIGNABLE;
    }
    long index = cidr.indexOf(address);  // contained, so any value is a real index (2^64-1 included)
    if (index == 0) {
      return NOT_ASSIGNABLE;  // the network address
    }
    long offset = index - 1;
    return Long.compareUnsigned(offset, size) < 0 ? offset : NOT_ASSIGNABLE;
  }

  /** True when this range can assign {@code address}. */
  public boolean canAssign(IpAddress address) {
    return offsetOf(address) != NOT_ASSIGNABLE;
  }

  public IpAddress addressAt(long offset) {
    if (Long.compareUnsigned(offset, size) >= 0) {
      throw new IndexOutOfBoundsException("offset " + Long.toUnsignedString(offset) + " is outside " + cidr);
    }
    return cidr.addressAt(offset + 1);
  }

  /** True when both ranges share at least one address. */
  public boolean overlaps(ServiceIpRange other) {
    return cidr.overlaps(other.cidr);
  }

  /** Why {@code address} cannot be assigned from this range, for messages. */
  public String whyNotAssignable(IpAddress address) {
    if (!cidr.contains(address)) {
      return address + " is not in " + cidr;
    }
    if (address.equals(cidr.network())) {
      return address + " is the network address of " + cidr;
    }
    return address + " is the broadcast address of " + cidr;
  }

  /** "10.96.0.1-10.96.0.16", or "none" when the range has no static band. */
  public String describeStaticBand() {
    return staticBandSize == 0 ? "none" : addressAt(0) + "-" + addressAt(staticBandSize - 1);
  }

  /** "10.96.0.17-10.96.255.254". */
  public String describeDynamicBand() {
    return addressAt(staticBandSize) + "-" + addressAt(size - 1);
  }

  @Override
  public String toString() {
    return cidr.toString();
  }
}
