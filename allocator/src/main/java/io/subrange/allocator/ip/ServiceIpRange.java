package io.subrange.allocator.ip;

import io.subrange.allocator.band.AllocationBitmap;
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
 * from the whole block.
 */
public final class ServiceIpRange {

  /** Most host bits a range may have while it is held as one bitmap. */
  public static final int MAX_HOST_BITS = Long.numberOfTrailingZeros(AllocationBitmap.MAX_SIZE);

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
    if (hostBits > MAX_HOST_BITS) {
      throw new IllegalArgumentException(cidr + " is too large: a Service range may have at most "
          + MAX_HOST_BITS + " host bits (/" + (cidr.family().bits() - MAX_HOST_BITS) + ")");
    }
    long blockSize = 1L << hostBits;
    long unassignable = cidr.family() == IpFamily.IPV4 ? 2 : 1;  // network (+ IPv4 broadcast)
    long size = blockSize - unassignable;
    return new ServiceIpRange(cidr, size, Math.min(BandOffset.forServiceIpBlock(hostBits), size));
  }

  public Cidr cidr() {
    return cidr;
  }

  public IpFamily family() {
    return cidr.family();
  }

  /** Number of assignable addresses. */
  public long size() {
    return size;
  }

  /** Number of addresses in the static band, which starts at network+1. */
  public long staticBandSize() {
    return staticBandSize;
  }

  /** The offset of an assignable address, or -1 when the address is not assignable here. */
  public long offsetOf(IpAddress address) {
    if (!cidr.contains(address)) {
      return -1;
    }
    long offset = cidr.indexOf(address) - 1;
    return offset >= 0 && offset < size ? offset : -1;
  }

  public IpAddress addressAt(long offset) {
    if (offset < 0 || offset >= size) {
      throw new IndexOutOfBoundsException("offset " + offset + " is outside " + cidr);
    }
    return cidr.addressAt(offset + 1);
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
