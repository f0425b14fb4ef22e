package io.subrange.webhook.ranges;

import io.subrange.allocator.net.AddressFormatException;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * CIDR text from a range object, accepted only in its canonical spelling, so that one range has
 * one spelling wherever it is compared or shown. Anything else is refused with the canonical
 * form when one can be guessed.
 */
final class CanonicalCidrs {

  private static final Pattern DOTTED_DECIMAL = Pattern.compile("[0-9]+(\\.[0-9]+){3}");
  private static final Pattern DECIMAL = Pattern.compile("[0-9]+");

  private CanonicalCidrs() {
  }

  static Cidr parse(String field, String text) {
    String value = text == null ? "" : text;
    Cidr cidr;
    try {
      cidr = Cidr.parse(value);
    } catch (AddressFormatException e) {
      throw new InvalidRangeObjectException(field, e.getMessage()
          + guess(value).map(c -> "; write it as \"" + c + "\"").orElse(""));
    }
    if (!cidr.toString().equals(value)) {
      throw new InvalidRangeObjectException(field, "\"" + value + "\" is not in canonical form; write it as \""
          + cidr + "\"");
    }
    return cidr;
  }

  /**
   * What a rejected spelling most likely meant: trimmed, lower case, IPv4 octets and the prefix
   * without leading zeros (read as decimal, as Kubernetes reads them), host bits cleared.
   * Empty when that is no different or still not a CIDR.
   */
  private static Optional<Cidr> guess(String text) {
    String lenient = text.strip().toLowerCase(Locale.ROOT);
    int slash = lenient.indexOf('/');
    if (slash < 0 || lenient.indexOf('/', slash + 1) >= 0) {
      return Optional.empty();
    }
    String address = lenient.substring(0, slash);
    String prefix = lenient.substring(slash + 1);
    if (!DECIMAL.matcher(prefix).matches() || noLeadingZeros(prefix).length() > 3) {
      return Optional.empty();
    }
    prefix = noLeadingZeros(prefix);
    if (DOTTED_DECIMAL.matcher(address).matches()) {
      address = String.join(".", Arrays.stream(address.split("\\.")).map(CanonicalCidrs::noLeadingZeros).toList());
    }
    String candidate = address + "/" + prefix;
    if (candidate.equals(text)) {
      return Optional.empty();  // the parser's own reason says it all (e.g. "the network is ...")
    }
    try {
      return Optional.of(Cidr.containing(IpAddress.parse(address), Integer.parseInt(prefix)));
    } catch (AddressFormatException | NumberFormatException e) {
      return Optional.empty();
    }
  }

  private static String noLeadingZeros(String digits) {
    String stripped = digits.replaceFirst("^0+", "");
    return stripped.isEmpty() ? "0" : stripped;
  }
}
