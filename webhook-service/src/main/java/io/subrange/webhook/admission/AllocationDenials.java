package io.subrange.webhook.admission;

import io.subrange.allocator.store.AllocationException;
import io.subrange.allocator.store.AlreadyAllocatedException;
import io.subrange.allocator.store.Holder;
import io.subrange.allocator.store.NoRangeForFamilyException;
import io.subrange.allocator.store.NotInRangeException;
import io.subrange.allocator.store.RangeFullException;
import io.subrange.allocator.store.StoreUnavailableException;
import java.util.function.Predicate;

/** Turns an allocator's refusal into the denial the client sees, prefixed by the field that asked. */
public final class AllocationDenials {

  private AllocationDenials() {
  }

  /**
   * @param field the field the claim came from, e.g. {@code spec.clusterIP}
   * @param hint what the person can do instead, appended after the reason
   */
  public static AdmissionDenied deny(String field, AllocationException e, String hint) {
    return deny(field, e, hint, holder -> true);
  }

  /**
   * As {@link #deny(String, AllocationException, String)}, naming the object that holds a taken
   * value only when {@code mayName} allows it (subrange.admission.name-other-namespaces-holders).
   */
  public static AdmissionDenied deny(String field, AllocationException e, String hint, Predicate<Holder> mayName) {
    String message = field + ": " + e.getMessage();
    if (e instanceof AlreadyAllocatedException taken && taken.holder().isPresent()
        && !mayName.test(taken.holder().get())) {
      message = field + ": " + taken.value() + " is already allocated in " + taken.range();
    }
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
