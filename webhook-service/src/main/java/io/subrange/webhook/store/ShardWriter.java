package io.subrange.webhook.store;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.subrange.allocator.store.AllocationEngine;
import io.subrange.allocator.store.RangeKey;
import io.subrange.allocator.store.RangeState;
import io.subrange.allocator.store.RangeWindow;
import io.subrange.webhook.Failures;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the shards a commit changed: exports them from the engine, encodes them, and writes each
 * with compare-and-swap on the {@code resourceVersion} the engine's picture was loaded from (never
 * a newer one the engine has not seen), so a write that would overwrite another replica's loses
 * (409) instead. It reports which ranges were not written and why, and reads those shards back so
 * the next attempt builds on what another replica wrote. It also writes a rebuilt range whole and
 * deletes the shards of ranges no longer served.
 *
 * <p>It exists so that {@link GroupCommitter} decides when to write and what to answer, and this
 * class how a write is done. Called on the committer thread only, so writes of one replica never
 * race each other; the writes of one attempt run side by side on a small pool of its own.
 */
final class ShardWriter implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ShardWriter.class);
  private static final int WRITERS = 4;

  private final AllocationEngine engine;
  private final KubernetesClient client;
  private final String namespace;
  private final StoredShards shards;
  private final StoreMetrics metrics;
  private final ExecutorService writers;

  ShardWriter(AllocationEngine engine, KubernetesClient client, String namespace, StoredShards shards,
      StoreMetrics metrics) {
    this.engine = engine;
    this.client = client;
    this.namespace = namespace;
    this.shards = shards;
    this.metrics = metrics;
    this.writers = Executors.newFixedThreadPool(WRITERS, runnable -> {
      Thread thread = new Thread(runnable, "subrange-store-writer");
      thread.setDaemon(true);
      return thread;
    });
  }

  /** An attempt with nothing to write yet: {@link Attempt#include} the ranges a commit changed. */
  Attempt newAttempt() {
    return new Attempt();
  }

  /**
   * One attempt of a commit: the shards it writes, exported from the engine while the committer
   * holds the engine's lock (so they are exactly what was applied), and once {@link #write}
   * returns, how the writes went.
   */
  final class Attempt {
    /** Ranges written whole: sparse ranges, pod CIDRs, and bitmap ranges without a loaded head shard. */
    private final Map<RangeKey, RangeState> states = new LinkedHashMap<>();
    /** Bitmap shards written alone, by name. */
    private final Map<String, RangeWindow> windows = new LinkedHashMap<>();
    /** The range of each shard in {@link #windows}. */
    private final Map<String, RangeKey> windowKeys = new HashMap<>();
    /** The head shard's place of each range written a shard at a time: which shard holds an offset. */
    private final Map<RangeKey, ShardLayout.Place> heads = new HashMap<>();
    /** Ranges with a shard that was not written. */
    private final Set<RangeKey> failed = new HashSet<>();
    /** The shards that were not written, by name: read back before the next attempt. */
    private final Set<String> reread = new HashSet<>();
    /** The shards of {@link #reread} whose writes lost to another writer (409). */
    private final Set<String> lost = new HashSet<>();
    private String trouble;
    private int written;

    private Attempt() {
    }

    /**
     * Exports what a range's changes need written, once per range. Call holding the engine's lock,
     * after applying the changes.
     *
     * @param changedOffsets the offsets of the range that changed; null when not known, and the
     *     range is written whole
     */
    void include(RangeKey key, Set<Long> changedOffsets) {
      if (states.containsKey(key) || heads.containsKey(key)) {
        return;
      }
      // A bitmap range writes only the shards holding what changed; any other, whole.
      ShardLayout.Place head = Optional.ofNullable(shards.loaded(ShardNames.name(key, 0)))
          .flatMap(ShardLayout::placeOf).orElse(null);
      if (head != null && changedOffsets != null) {
        heads.put(key, head);
        for (long offset : changedOffsets) {
          int index = head.indexOf(offset);
          String name = ShardNames.name(key, index);
          windows.computeIfAbsent(name, n -> engine.exportWindow(key, index * head.span(),
              (index + 1) * head.span()));
          windowKeys.put(name, key);
        }
      } else {
        states.put(key, engine.export(key));
      }
    }

    /**
     * Whether a request's changes are stored: every shard holding an offset it changed was written
     * (or said so already). In a range written whole (sparse ranges, pod CIDRs) a shard not
     * written holds back every request that changed the range.
     *
     * <p>Only the shards a request changed count, not its whole range: a request held back by
     * another's shard would be applied again on the next attempt, where a release finds its value
     * already free and answers that it freed nothing, so the reconciler would not count it.
     *
     * @param keys the ranges the request changed
     * @param changedOffsets the offsets it changed in them, by range ({@link AllocationEngine#drainChangedOffsets})
     */
    boolean stored(Set<RangeKey> keys, Map<RangeKey, Set<Long>> changedOffsets) {
      for (RangeKey key : keys) {
        if (!failed.contains(key)) {
          continue;
        }
        ShardLayout.Place head = heads.get(key);
        Set<Long> offsets = changedOffsets.get(key);
        if (head == null || offsets == null) {
          return false;
        }
        for (long offset : offsets) {
          if (reread.contains(ShardNames.name(key, head.indexOf(offset)))) {
            return false;
          }
        }
      }
      return true;
    }

    /** Whether a write lost to another writer (409), rather than failing. */
    boolean lostToAnother() {
      return !lost.isEmpty();
    }

    /** Why the last shard that was not written was not; null when every shard was. */
    String trouble() {
      return trouble;
    }

    /** How many shards were written (shards already as desired are not written). */
    int written() {
      return written;
    }
  }

  /**
   * Encodes and writes an attempt's shards; each either is written (and the engine's picture is
   * noted as loaded from the version written), or its range is noted as failed.
   */
  void write(Attempt attempt) {
    // Each shard to write: its range, its name, and its new content (null when the version it
    // would replace is unknown: the shard is gone, or was never loaded).
    record Desired(RangeKey key, String name, ConfigMap content) {
    }
    List<Desired> desiredShards = new ArrayList<>();
    for (RangeState state : attempt.states.values()) {
      for (ConfigMap content : RangeConfigMaps.encode(state, namespace, shards.ledgers()).values()) {
        desiredShards.add(new Desired(state.key(), content.getMetadata().getName(), content));
      }
    }
    attempt.windows.forEach((name, window) -> {
      ConfigMap base = shards.loaded(name);
      desiredShards.add(new Desired(attempt.windowKeys.get(name), name,
          base == null ? null : RangeConfigMaps.encodeWindow(base, window, shards.ledgers())));
    });
    List<ShardWrite> writes = new ArrayList<>();
    for (Desired shard : desiredShards) {
      ConfigMap base = shards.loaded(shard.name());
      if (base == null || shard.content() == null) {
        attempt.failed.add(shard.key());
        attempt.reread.add(shard.name());
        attempt.trouble = "ConfigMap " + shard.name() + " is gone";
      } else if (!RangeConfigMaps.sameContent(base, shard.content())) {
        ConfigMap desired = shard.content();
        desired.getMetadata().setResourceVersion(base.getMetadata().getResourceVersion());
        shards.writing(desired);
        writes.add(new ShardWrite(shard.key(), desired));
      }
    }
    for (ShardWrite write : runAll(writes)) {
      if (write.written != null) {
        attempt.written++;
        shards.written(write.written);
      } else {
        shards.notWritten(write.desired.getMetadata().getName());
        attempt.failed.add(write.key);
        attempt.reread.add(write.desired.getMetadata().getName());
        if (write.conflict) {
          attempt.lost.add(write.desired.getMetadata().getName());
        }
        attempt.trouble = write.trouble;
      }
    }
  }

  /**
   * Reads the shards an attempt did not write again, so they load before the next attempt, which
   * then compare-and-swaps on what another writer stored.
   *
   * @param takeTurn whether the shards another writer won take a turn
   *     ({@link StoredShards#rereadTakingTurn}): for a commit whose attempts failed more than once,
   *     most likely against a writer that writes those shards on and on
   */
  void readBack(Attempt attempt, boolean takeTurn) {
    if (!takeTurn || attempt.lost.isEmpty()) {
      shards.reread(attempt.reread);
      return;
    }
    Set<String> failedOtherwise = new HashSet<>(attempt.reread);
    failedOtherwise.removeAll(attempt.lost);
    shards.rereadTakingTurn(attempt.lost);
    shards.reread(failedOtherwise);
  }

  /** Writes shards side by side; each comes back written, or with why not. */
  private List<ShardWrite> runAll(List<ShardWrite> writes) {
    if (writes.size() == 1) {
      writes.get(0).run();
      return writes;
    }
    List<CompletableFuture<Void>> running = writes.stream()
        .map(w -> CompletableFuture.runAsync(w::run, writers)).toList();
    for (CompletableFuture<Void> future : running) {
      try {
        future.join();
      } catch (CompletionException e) {
        log.warn("A shard write failed unexpectedly: {}", Failures.rootMessage(e));
      }
    }
    return writes;
  }

  /** One shard's compare-and-swap write. */
  private final class ShardWrite {
    final RangeKey key;
    final ConfigMap desired;
    ConfigMap written;
    String trouble;
    boolean conflict;

    ShardWrite(RangeKey key, ConfigMap desired) {
      this.key = key;
      this.desired = desired;
    }

    void run() {
      String name = desired.getMetadata().getName();
      try {
        written = client.configMaps().inNamespace(namespace).resource(desired).update();
        metrics.write(StoreMetrics.WriteResult.OK);
      } catch (KubernetesClientException e) {
        conflict = e.getCode() == 409;
        metrics.write(conflict ? StoreMetrics.WriteResult.CONFLICT : StoreMetrics.WriteResult.ERROR);
        trouble = conflict ? "ConfigMap " + name + " was changed by another writer"
            : e.getCode() == 404 ? "ConfigMap " + name + " is gone"
            : e.getCode() > 0 ? "writing ConfigMap " + name + ": the API server answered " + e.getCode()
            : "writing ConfigMap " + name + ": " + Failures.rootMessage(e);
      } catch (RuntimeException e) {
        metrics.write(StoreMetrics.WriteResult.ERROR);
        trouble = "writing ConfigMap " + name + ": " + Failures.rootMessage(e);
      }
    }
  }

  // ---- whole ranges, for the reconciler -----------------------------------------------------

  /**
   * Writes every shard of a state: creates what is missing, replaces what differs
   * (compare-and-swap on the newest version seen, so a concurrent writer wins), and skips what is
   * already as desired.
   *
   * @throws KubernetesClientException when a write fails or loses; shards written before it stay
   */
  void writeWhole(RangeState state) {
    for (ConfigMap desired : RangeConfigMaps.encode(state, namespace).values()) {
      String name = desired.getMetadata().getName();
      ConfigMap current = shards.latest(name);
      ConfigMap written;
      if (current == null) {
        written = client.configMaps().inNamespace(namespace).resource(desired).create();
      } else if (RangeConfigMaps.sameContent(current, desired)) {
        continue;
      } else {
        desired.getMetadata().setResourceVersion(current.getMetadata().getResourceVersion());
        written = client.configMaps().inNamespace(namespace).resource(desired).update();
      }
      metrics.write(StoreMetrics.WriteResult.OK);
      shards.remember(written);
    }
  }

  /** Deletes a shard, whatever version it is at. */
  void delete(String name) {
    client.configMaps().inNamespace(namespace).withName(name).delete();
  }

  /** Stops the writer pool (the store is closing: the committer has stopped). */
  @Override
  public void close() {
    writers.shutdownNow();
  }
}
