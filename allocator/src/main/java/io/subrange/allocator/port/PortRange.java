package io.subrange.allocator.port;

import io.subrange.allocator.band.BandOffset;

/**
 * An inclusive range of TCP/UDP ports, written {@code N1-N2} as kube-apiserver's flag takes it.
 * Its static band (KEP-3668) is the first {@code min(max(16, size / 32), 128)} ports.
 */
public record PortRange(int first, int last) {

  public PortRange {
    if (first < 1 || last > 65535 || first > last) {
      throw new IllegalArgumentException("port range " + first + "-" + last
          + " is invalid: ports must be 1-65535 and the first must not exceed the last");
    }
  }

  /** Parses {@code N1-N2}, for example {@code 30000-32767}. */
  public static PortRange parse(String text) {
    if (text == null || !text.matches("[0-9]{1,5}-[0-9]{1,5}")) {
      throw new IllegalArgumentException("\"" + text + "\" is not a port range: expected N1-N2,"
          + " for example 30000-32767");
    }
    int dash = text.indexOf('-');
    int first = Integer.parseInt(text.substring(0, dash));
    int last = Integer.parseInt(text.substring(dash + 1));
    if (first < 1 || last > 65535 || first > last) {
      throw new IllegalArgumentException("\"" + text + "\" is not a port range: ports must be 1-65535"
          + " and the first must not exceed the last");
    }
    return new PortRange(first, last);
  }

  /** Number of ports in the range. */
  public int size() {
    return last - first + 1;
  }

  public boolean contains(int port) {
    return port >= first && port <= last;
  }

  /** Ports in the static band, which starts at {@link #first()}: 86 for 30000-32767. */
  public int staticBandSize() {
    return (int) BandOffset.forNodePorts(size());
  }

  /** "30086-32767". */
  public String describeDynamicBand() {
    return (first + staticBandSize()) + "-" + last;
  }

  /** "30000-30085", or "none". */
  public String describeStaticBand() {
    int band = staticBandSize();
    return band == 0 ? "none" : first + "-" + (first + band - 1);
  }

  @Override
  public String toString() {
    return first + "-" + last;
  }
}
