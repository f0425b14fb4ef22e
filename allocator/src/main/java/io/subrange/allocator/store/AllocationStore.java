package io.subrange.allocator.store;

import io.subrange.allocator.net.Cidr;
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
 *
 * <p>Service ranges are named (after their ServiceCIDR); one pool per IP family merges them
 * (KEP-1880): ranges may be added, marked terminating and removed at run time.
 */
public interface AllocationStore {

  /**
   * Reserves addresses for {@code holder}, in claim order.
   *
   * <p>A specific claim succeeds when a live range can assign the address and it is free, or
   * already held by the same object (admission may be retried). A dynamic claim reuses the
   * address the same named object already holds in that family, otherwise takes a free one,
   * dynamic bands first.
   *
   * @param dryRun compute the answer as for a real request, and keep nothing
   * @return the assignments, or a future failed with an {@link AllocationException}
   */
  CompletableFuture<List<IpAssignment>> reserve(Holder holder, List<IpClaim> claims, boolean dryRun);

  /** Who holds {@code address}, when it is held and the store knows. */
  Optional<Holder> holderOf(IpAddress address);

  /** Usage of every Service range, for metrics and status. */
  List<RangeUsage> usage();

  /** Adds (or revives) a named Service range; taken addresses it covers count in it at once. */
  void addServiceRange(String name, Cidr cidr);

  /** Stops a Service range from handing out addresses; it keeps what it holds. */
  void markServiceRangeTerminating(String name);

  /** How many held addresses no other live range covers; the range may go when this is 0. */
  long serviceRangeInUseOnlyBy(String name);

  /**
   * Removes a Service range.
   *
   * @throws IllegalStateException while it holds addresses no other range covers
   */
  void removeServiceRange(String name);
}
