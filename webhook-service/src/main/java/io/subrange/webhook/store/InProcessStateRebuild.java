package io.subrange.webhook.store;

import io.subrange.allocator.store.AllocationEngine;
import io.subrange.allocator.store.RangeKey;
import io.subrange.allocator.store.RangeState;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * The memory store as a {@link RebuildableStore}: nothing survives a restart, so every range
 * starts unknown and the in-process reconciler loads it from the cluster before anything is
 * handed out; a Service that kept its ClusterIP across subrange's restart never sees it given
 * to another.
 */
public final class InProcessStateRebuild implements RebuildableStore {

  private final AllocationEngine engine;
  private volatile boolean loadedOnce;

  public InProcessStateRebuild(AllocationEngine engine) {
    this.engine = engine;
    engine.requireLoadedState();
  }

  @Override
  public Map<RangeKey, String> rangesToRebuild() {
    Map<RangeKey, String> missing = new LinkedHashMap<>();
    engine.unknownRanges().forEach(key -> missing.put(key, "not loaded since subrange started (memory store)"));
    return missing;
  }

  @Override
  public AllocationEngine emptyCopyOf(RangeKey key) {
    return engine.emptyCopyOf(key);
  }

  @Override
  public CompletableFuture<Void> install(RangeState state) {
    synchronized (engine) {
      List<RangeState> scope = new ArrayList<>();
      for (RangeKey key : engine.rangeKeys()) {
        if (key.kind() == state.key().kind() && Objects.equals(key.family(), state.key().family())
            && !key.equals(state.key()) && !engine.unknownRanges().contains(key)) {
          scope.add(engine.export(key));
        }
      }
      scope.add(state);
      Map<RangeKey, String> rejected = engine.restore(state.key().kind(), state.key().family(), scope);
      if (!rejected.isEmpty()) {
        return CompletableFuture.failedFuture(new IllegalStateException("rebuilt state rejected: " + rejected));
      }
      engine.drainChanged();
    }
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public boolean loadedOnce() {
    if (!loadedOnce && engine.unknownRanges().isEmpty()) {
      loadedOnce = true;
    }
    return loadedOnce;
  }
}
