package io.subrange.allocator.net;

/** A string that is not an address or CIDR in the one form subrange accepts. */
public final class AddressFormatException extends IllegalArgumentException {
  public AddressFormatException(String message) {
    super(message);
  }
}
