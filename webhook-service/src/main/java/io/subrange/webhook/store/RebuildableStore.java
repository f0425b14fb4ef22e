package io.subrange.webhook.store;

import io.subrange.allocator.store.AllocationEngine;
import io.subrange.allocator.store.RangeKey;
import io.subrange.allocator.store.RangeState;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A store whose ranges can lose their state (never written yet, deleted, corrupt, or this process
 * just started with nothing) and get it back from the reconciler, which rebuilds it from what the
 * cluster holds. Until then the store hands out nothing from such a range.
 */
public interface RebuildableStore {

  /** The ranges served whose state is missing or unusable, with why. */
  Map<RangeKey, String> rangesToRebuild();

  /** An empty engine serving only {@code key}'s range, to rebuild its state in. */
  AllocationEngine emptyCopyOf(RangeKey key);

  /**
   * Makes {@code state} the range's state, replacing whatever is stored; completes once that is
   * durable (or fails, and the reconciler tries again on its next pass).
   */
  CompletableFuture<Void> install(RangeState state);

  /** True once every range served has had a state since start: the store can answer requests. */
  boolean loadedOnce();
}
