package io.subrange.allocator.store;

/**
 * Why a reservation was refused. Each subtype carries what a person needs to act: the value
 * asked for, the range, and who holds it when known. Messages are complete sentences without
 * field names; the admission layer adds which field asked.
 */
public abstract sealed class AllocationException extends RuntimeException
    permits AlreadyAllocatedException, NotInRangeException, RangeFullException,
    NoRangeForFamilyException, StoreUnavailableException, PodCidrUnavailableException {

  protected AllocationException(String message) {
    super(message, null, false, false);
  }

  protected AllocationException(String message, Throwable cause) {
    super(message, cause, false, false);
  }
}
