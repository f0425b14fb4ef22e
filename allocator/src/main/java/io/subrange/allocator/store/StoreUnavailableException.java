package io.subrange.allocator.store;

/**
 * The allocation could not be made durable in time, or the state it needs is not loaded;
 * nothing was granted. Admission answers it with 503: retrying later is the right response. The
 * message is what the client reads as it is, so it says so itself (that nothing was allocated,
 * and to retry shortly).
 */
public final class StoreUnavailableException extends AllocationException {

  public StoreUnavailableException(String message) {
    super(message);
  }

  public StoreUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
