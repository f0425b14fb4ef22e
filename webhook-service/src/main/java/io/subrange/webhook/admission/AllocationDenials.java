package io.subrange.webhook.admission;

import io.subrange.allocator.store.AllocationException;
import io.subrange.allocator.store.AlreadyAllocatedException;
import io.subrange.allocator.store.NoRangeForFamilyException;
import io.subrange.allocator.store.NotInRangeException;
import io.subrange.allocator.store.RangeFullException;
import io.subrange.allocator.store.StoreUnavailableException;

/** Turns an allocator's refusal into the denial the client sees, prefixed by the field that asked. */
public final class AllocationDenials {

  private AllocationDenials() {
  }

  /**
   * @param field the field the claim came from, e.g. {@code spec.clusterIP}
   * @param hint what the person can do instead, appended after the reason
   */
  public static AdmissionDenied deny(String field, AllocationException e, String hint) {
    String message = field + ": " + e.getMessage();
    if (e instanceof AlreadyAllocatedException) {
      return AdmissionDenied.conflict(message + "; " + hint);
    }
    if (e instanceof NotInRangeException || e instanceof NoRangeForFamilyException) {
      return AdmissionDenied.invalid(message);
    }
    if (e instanceof RangeFullException) {
      return AdmissionDenied.conflict(message);
    }
    if (e instanceof StoreUnavailableException) {
      return AdmissionDenied.unavailable(message);  // the store's message already says to retry
    }
    throw new IllegalStateException("unhandled allocation refusal " + e.getClass().getName(), e);
  }
}
