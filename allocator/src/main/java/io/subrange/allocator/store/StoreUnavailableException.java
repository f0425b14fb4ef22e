package io.subrange.allocator.store;

/**
 * The allocation could not be made durable in time, or the state it needs is not loaded;
 * nothing was granted. Admission answers it with 503: retrying later is the right response.
 */
public final class StoreUnavailableException extends AllocationException {

  public StoreUnavailableException(String message) {
    super(message);
  }

  public StoreUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
