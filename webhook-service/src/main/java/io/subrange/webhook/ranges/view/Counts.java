package io.subrange.webhook.ranges.view;

import java.math.BigInteger;

/** The store's counts are unsigned 64-bit values (a /64 holds 2^64-1 addresses); these read them exactly. */
final class Counts {

  private Counts() {
  }

  static BigInteger exact(long unsignedCount) {
    return new BigInteger(Long.toUnsignedString(unsignedCount));
  }

  static String text(long unsignedCount) {
    return Long.toUnsignedString(unsignedCount);
  }
}
