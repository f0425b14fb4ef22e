package io.subrange.allocator.store;

import io.subrange.allocator.net.IpAddress;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Where allocations live. The unit of work is one object's request: every claim in a
 * {@link #reserve} call is granted, or none is kept.
 *
 * <p>A store that persists (see {@code subrange.store}) completes {@code reserve} only once the
 * allocation is durable; callers must not report an address before that.
 */
public interface AllocationStore {

  /**
   * Reserves addresses for {@code holder}, in claim order.
   *
   * <p>A specific claim succeeds when the address is assignable and free, or already held by
   * the same object (admission may be retried). A dynamic claim reuses the address the same
   * named object already holds in that range, otherwise takes a free one, dynamic band first.
   *
   * @param dryRun compute the answer as for a real request, and keep nothing
   * @return the assignments, or a future failed with an {@link AllocationException}
   */
  CompletableFuture<List<IpAssignment>> reserve(Holder holder, List<IpClaim> claims, boolean dryRun);

  /** Who holds {@code address}, when it is held and the store knows. */
  Optional<Holder> holderOf(IpAddress address);

  /** Usage of every range, for metrics and status. */
  List<RangeUsage> usage();
}
