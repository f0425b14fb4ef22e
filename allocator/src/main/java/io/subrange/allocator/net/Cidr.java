package io.subrange.allocator.net;

import inet.ipaddr.AddressStringException;
import inet.ipaddr.IPAddress;
import inet.ipaddr.IPAddressString;
import inet.ipaddr.IPAddressStringParameters;
import java.util.Objects;

/**
 * An immutable CIDR block: a network address and a prefix length.
 *
 * <p>Parsing is strict: the text must be {@code address/prefix} with every host bit zero, so
 * {@code 10.96.0.1/12} is rejected (with the network it probably meant) rather than silently
 * masked. {@link #toString()} is canonical.
 */
public final class Cidr implements Comparable<Cidr> {

  private static final IPAddressStringParameters STRICT_WITH_PREFIX = IpAddress.strictParameters(true);

  private final IpAddress network;
  private final int prefixLength;

  private Cidr(IpAddress network, int prefixLength) {
    this.network = network;
    this.prefixLength = prefixLength;
  }

  /** Parses {@code address/prefix}; throws {@link AddressFormatException} naming the reason. */
  public static Cidr parse(String text) {
    if (text == null || text.isEmpty()) {
      throw new AddressFormatException("\"\" is not a CIDR");
    }
    IpAddress.requireNoWhitespace(text, "a CIDR");
    int slash = text.indexOf('/');
    if (slash < 0) {
      throw new AddressFormatException("\"" + text + "\" is not a CIDR: the prefix length (/n) is missing");
    }
    if (!text.substring(slash + 1).matches("0|[1-9][0-9]{0,2}")) {
      throw new AddressFormatException("\"" + text + "\" is not a CIDR: the prefix length must be a"
          + " decimal number without leading zeros");
    }
    IPAddress parsed;
    try {
      parsed = new IPAddressString(text, STRICT_WITH_PREFIX).toAddress();
    } catch (AddressStringException e) {
      throw new AddressFormatException("\"" + text + "\" is not a CIDR: " + IpAddress.reason(e));
    }
    Integer prefix = parsed.getNetworkPrefixLength();
    if (prefix == null) {
      throw new AddressFormatException("\"" + text + "\" is not a CIDR: the prefix length (/n) is missing");
    }
    IpAddress address = IpAddress.fromLibrary(parsed.withoutPrefixLength(), text);
    Cidr cidr = containing(address, prefix);
    if (!cidr.network.equals(address)) {
      throw new AddressFormatException("\"" + text + "\" is not a CIDR: host bits are set"
          + " (the network is " + cidr + ")");
    }
    return cidr;
  }

  /** The block of the given prefix length that contains {@code address}. */
  public static Cidr containing(IpAddress address, int prefixLength) {
    int bits = address.family().bits();
    if (prefixLength < 0 || prefixLength > bits) {
      throw new AddressFormatException("prefix length /" + prefixLength + " is outside 0-" + bits
          + " for " + address.family());
    }
    return new Cidr(maskToPrefix(address, prefixLength), prefixLength);
  }

  private static IpAddress maskToPrefix(IpAddress address, int prefixLength) {
    if (address.family() == IpFamily.IPV4) {
      long mask = prefixLength == 0 ? 0 : (0xFFFF_FFFFL << (32 - prefixLength)) & 0xFFFF_FFFFL;
      return IpAddress.ipv4(address.low() & mask);
    }
    long highMask = prefixLength >= 64 ? -1L : (prefixLength == 0 ? 0 : -1L << (64 - prefixLength));
    long lowMask = prefixLength <= 64 ? 0 : (prefixLength == 128 ? -1L : -1L << (128 - prefixLength));
    return IpAddress.ipv6(address.high() & highMask, address.low() & lowMask);
  }

  public IpAddress network() {
    return network;
  }

  public int prefixLength() {
    return prefixLength;
  }

  public IpFamily family() {
    return network.family();
  }

  /** Bits after the prefix: 32 - prefix for IPv4, 128 - prefix for IPv6. */
  public int hostBits() {
    return family().bits() - prefixLength;
  }

  public boolean contains(IpAddress address) {
    return address.family() == family() && maskToPrefix(address, prefixLength).equals(network);
  }

  /** True when every address of {@code other} is in this block. */
  public boolean contains(Cidr other) {
    return other.family() == family() && other.prefixLength >= prefixLength && contains(other.network);
  }

  public boolean overlaps(Cidr other) {
    return contains(other) || other.contains(this);
  }

  /**
   * The address {@code index} places after the network address, as an unsigned 64-bit index.
   * Only for blocks of at most 64 host bits.
   */
  public IpAddress addressAt(long index) {
    requireAtMost64HostBits();
    if (hostBits() < 64 && Long.compareUnsigned(index, (1L << hostBits()) - 1) > 0) {
      throw new IndexOutOfBoundsException("index " + Long.toUnsignedString(index) + " is outside " + this);
    }
    return network.plus(index);
  }

  /**
   * How many places {@code address} is after the network address, as an unsigned 64-bit
   * index; -1 when it is outside the block. Only for blocks of at most 64 host bits (for a
   * /64 the last index is 2^64-1, which also reads as -1: check {@link #contains} first there).
   */
  public long indexOf(IpAddress address) {
    requireAtMost64HostBits();
    if (!contains(address)) {
      return -1;
    }
    return address.low() - network.low();
  }

  private void requireAtMost64HostBits() {
    if (hostBits() > 64) {
      throw new UnsupportedOperationException(this + " has more than 64 host bits");
    }
  }

  @Override
  public int compareTo(Cidr other) {
    int byNetwork = network.compareTo(other.network);
    return byNetwork != 0 ? byNetwork : Integer.compare(prefixLength, other.prefixLength);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Cidr other && prefixLength == other.prefixLength && network.equals(other.network);
  }

  @Override
  public int hashCode() {
    return Objects.hash(network, prefixLength);
  }

  @Override
  public String toString() {
    return network + "/" + prefixLength;
  }
}
