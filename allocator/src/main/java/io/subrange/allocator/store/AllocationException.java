package io.subrange.allocator.store;

/**
 * Why a reservation was refused. Each subtype carries what a person needs to act: the value
 * asked for, the range, and who holds it when known. Messages are complete sentences without
 * field names; the admission layer adds which field asked.
 */
public abstract sealed class AllocationException extends RuntimeException
    permits AlreadyAllocatedException, NotInRangeException, RangeFullException,
    NoRangeForFamilyException, StoreUnavailableException, PodCidrUnavailableException {

  private Object failedClaim;

  protected AllocationException(String message) {
    super(message, null, false, false);
  }

  protected AllocationException(String message, Throwable cause) {
    super(message, cause, false, false);
  }

  /**
   * The claim of the request that was refused (an {@link IpClaim} or {@link PortClaim}), so
   * the caller can name the field that asked; null when the refusal is not about one claim.
   */
  public Object failedClaim() {
    return failedClaim;
  }

  /** Records the claim that failed; the store calls this once, where the claim is refused. */
  AllocationException forClaim(Object claim) {
    if (failedClaim == null) {
      failedClaim = claim;
    }
    return this;
  }
}
