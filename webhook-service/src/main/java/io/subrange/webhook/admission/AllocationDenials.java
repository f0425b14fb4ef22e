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
    // Codes and reasons as kube-apiserver's own allocator gives them: a taken or out-of-range
    // value is 422 Invalid ("provided IP is already allocated"), never 409 Conflict, which
    // clients read as a stale resourceVersion and retry at once (retry.RetryOnConflict).
    if (e instanceof AlreadyAllocatedException) {
      return AdmissionDenied.invalid(message + "; " + hint);
    }
    if (e instanceof NotInRangeException || e instanceof NoRangeForFamilyException) {
      return AdmissionDenied.invalid(message);
    }
    if (e instanceof RangeFullException) {
      return AdmissionDenied.rangeFull(message);
    }
    if (e instanceof StoreUnavailableException) {
      return AdmissionDenied.unavailable(message);  // the store's message already says to retry
    }
    throw new IllegalStateException("unhandled allocation refusal " + e.getClass().getName(), e);
  }
}
