package io.subrange.allocator.net;

import inet.ipaddr.AddressStringException;
import inet.ipaddr.IPAddress;
import inet.ipaddr.IPAddressString;
import inet.ipaddr.IPAddressStringParameters;
import inet.ipaddr.ipv6.IPv6Address;
import java.nio.ByteBuffer;

/**
 * An immutable IPv4 or IPv6 address.
 *
 * <p>Parsing is strict so that one address has one spelling: dotted decimal without leading
 * zeros for IPv4, hex groups for IPv6; no zones, prefixes, wildcards, single-segment or
 * {@code inet_aton} forms, and no IPv4-mapped IPv6 ({@code ::ffff:10.0.0.1}), which Kubernetes
 * would read as IPv4. {@link #toString()} is canonical: RFC 5952 for IPv6, as Go prints it.
 *
 * <p>The value is held as two longs (the high and low 64 bits; IPv4 uses only the low 32) so
 * that offset arithmetic inside a range needs no {@code BigInteger}.
 */
public final class IpAddress implements Comparable<IpAddress> {

  static final IPAddressStringParameters STRICT = strictParameters(false);

  private final IpFamily family;
  private final long high;
  private final long low;

  private IpAddress(IpFamily family, long high, long low) {
    this.family = family;
    this.high = high;
    this.low = low;
  }

  /** Parses an address; throws {@link AddressFormatException} naming the text and the reason. */
  public static IpAddress parse(String text) {
    if (text == null || text.isEmpty()) {
      throw new AddressFormatException("\"\" is not an IP address");
    }
    IpAddress quick = canonicalIpv4(text);
    if (quick != null) {
      return quick;
    }
    requireNoWhitespace(text, "an IP address");
    IPAddress parsed;
    try {
      parsed = new IPAddressString(text, STRICT).toAddress();
    } catch (AddressStringException e) {
      throw new AddressFormatException("\"" + text + "\" is not an IP address: " + reason(e));
    }
    return fromLibrary(parsed, text);
  }

  /**
   * The address when {@code text} is canonical dotted decimal (four numbers 0 to 255, no leading
   * zeros), as stored state and most requests spell it; null otherwise, for the full parser to
   * accept or explain. Loading stored state parses every held address, so this is worth having.
   */
  private static IpAddress canonicalIpv4(String text) {
    int length = text.length();
    if (length < 7 || length > 15) {
      return null;
    }
    long value = 0;
    int octets = 0;
    int i = 0;
    while (i <= length) {
      int start = i;
      int octet = 0;
      while (i < length && text.charAt(i) != '.') {
        char c = text.charAt(i);
        if (c < '0' || c > '9' || i - start >= 3) {
          return null;
        }
        octet = octet * 10 + (c - '0');
        i++;
      }
      int digits = i - start;
      if (digits == 0 || (digits > 1 && text.charAt(start) == '0') || octet > 255) {
        return null;
      }
      value = (value << 8) | octet;
      octets++;
      i++;  // past the dot (or the end)
    }
    return octets == 4 ? new IpAddress(IpFamily.IPV4, 0, value) : null;
  }

  /** An IPv4 address from its 32-bit value. */
  public static IpAddress ipv4(long value) {
    if (value < 0 || value > 0xFFFF_FFFFL) {
      throw new IllegalArgumentException("not a 32-bit value: " + value);
    }
    return new IpAddress(IpFamily.IPV4, 0, value);
  }

  /** An IPv6 address from its high and low 64 bits. */
  public static IpAddress ipv6(long high, long low) {
    return new IpAddress(IpFamily.IPV6, high, low);
  }

  static IpAddress fromLibrary(IPAddress parsed, String text) {
    if (parsed.isIPv6() && ((IPv6Address) parsed).isIPv4Mapped()) {
      throw new AddressFormatException("\"" + text + "\" is an IPv4-mapped IPv6 address, which"
          + " Kubernetes reads as IPv4; write the IPv4 address instead");
    }
    byte[] bytes = parsed.getBytes();
    ByteBuffer buffer = ByteBuffer.wrap(bytes);
    if (parsed.isIPv4()) {
      return new IpAddress(IpFamily.IPV4, 0, Integer.toUnsignedLong(buffer.getInt()));
    }
    return new IpAddress(IpFamily.IPV6, buffer.getLong(), buffer.getLong());
  }

  static IPAddressStringParameters strictParameters(boolean withPrefix) {
    IPAddressStringParameters.Builder builder = new IPAddressStringParameters.Builder()
        .allowEmpty(false)
        .allowAll(false)
        .allowSingleSegment(false)
        .allowMask(false)
        .allowPrefixOnly(false)
        .allowPrefix(withPrefix)
        .allowWildcardedSeparator(false)
        .allow_inet_aton(false);
    builder.getIPv4AddressParametersBuilder()
        .allowLeadingZeros(false)
        // "/0" counts as a leading zero to the library; Cidr.parse checks the prefix text itself.
        .allowPrefixLengthLeadingZeros(true)
        .allowPrefixesBeyondAddressSize(false)
        .allowWildcardedSeparator(false)
        .allowBinary(false)
        .setRangeOptions(IPAddressStringParameters.RangeParameters.NO_RANGE);
    builder.getIPv6AddressParametersBuilder()
        .allowZone(false)
        .allowEmptyZone(false)
        .allowBase85(false)
        .allowBinary(false)
        .allowMixed(false)
        .allowPrefixLengthLeadingZeros(true)
        .allowPrefixesBeyondAddressSize(false)
        .allowWildcardedSeparator(false)
        .setRangeOptions(IPAddressStringParameters.RangeParameters.NO_RANGE);
    return builder.toParams();
  }

  static void requireNoWhitespace(String text, String what) {
    if (text.chars().anyMatch(Character::isWhitespace)) {
      throw new AddressFormatException("\"" + text + "\" is not " + what + ": it contains white space");
    }
  }

  /** The library's reason without its echo of the input ("<text> IP Address error: ..."). */
  static String reason(AddressStringException e) {
    String message = e.getMessage();
    if (message == null) {
      return "malformed";
    }
    int start = message.indexOf("error: ");
    String reason = start >= 0 ? message.substring(start + "error: ".length()) : message;
    int cut = reason.indexOf(" at index");
    return (cut > 0 ? reason.substring(0, cut) : reason).trim();
  }

  public IpFamily family() {
    return family;
  }

  /** The high 64 bits (always 0 for IPv4). */
  public long high() {
    return high;
  }

  /** The low 64 bits (the whole 32-bit value for IPv4). */
  public long low() {
    return low;
  }

  /** This address plus an unsigned 64-bit amount, carrying into the high half for IPv6. */
  public IpAddress plus(long amount) {
    long newLow = low + amount;
    if (family == IpFamily.IPV4) {
      if (Long.compareUnsigned(amount, 0xFFFF_FFFFL) > 0 || newLow > 0xFFFF_FFFFL) {
        throw new ArithmeticException(this + " + " + Long.toUnsignedString(amount) + " overflows IPv4");
      }
      return new IpAddress(family, 0, newLow);
    }
    long carry = Long.compareUnsigned(newLow, low) < 0 ? 1 : 0;
    return new IpAddress(family, high + carry, newLow);
  }

  /** The address as bytes in network order: 4 for IPv4, 16 for IPv6. */
  public byte[] toBytes() {
    if (family == IpFamily.IPV4) {
      return ByteBuffer.allocate(4).putInt((int) low).array();
    }
    return ByteBuffer.allocate(16).putLong(high).putLong(low).array();
  }

  @Override
  public int compareTo(IpAddress other) {
    int byFamily = family.compareTo(other.family);
    if (byFamily != 0) {
      return byFamily;
    }
    int byHigh = Long.compareUnsigned(high, other.high);
    return byHigh != 0 ? byHigh : Long.compareUnsigned(low, other.low);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof IpAddress other
        && family == other.family && high == other.high && low == other.low;
  }

  @Override
  public int hashCode() {
    // Not Objects.hash: no varargs array, no boxing; addresses are hashed on every lookup.
    return (31 * family.ordinal() + Long.hashCode(high)) * 31 + Long.hashCode(low);
  }

  /** Canonical text: dotted decimal, or RFC 5952 compressed lower-case hex. */
  @Override
  public String toString() {
    if (family == IpFamily.IPV4) {
      return ((low >>> 24) & 0xFF) + "." + ((low >>> 16) & 0xFF) + "."
          + ((low >>> 8) & 0xFF) + "." + (low & 0xFF);
    }
    return new IPv6Address(toBytes()).toCanonicalString();
  }
}
