package io.subrange.allocator.store;

/** The allocation could not be made durable in time; nothing was granted. */
public final class StoreUnavailableException extends AllocationException {

  public StoreUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
