package io.subrange.webhook.store;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.store.AllocationEngine;
import io.subrange.allocator.store.RangeKey;
import io.subrange.allocator.store.RangeState;
import io.subrange.allocator.store.RangeWindow;
import io.subrange.webhook.Failures;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@link ConfigMapAllocationStore} knows of the stored shards: the newest version seen of
 * each (from writes, reloads and the watch), the version the engine's picture was loaded from
 * (writes compare-and-swap on that one, never on a newer one the engine has not seen), which
 * kinds must be loaded again, and which ranges cannot be used and why.
 *
 * <p>Only the committer thread loads the engine ({@link #refresh}); the watch only records what
 * it saw and asks for a reload.
 */
final class StoredShards {

  private static final Logger log = LoggerFactory.getLogger(StoredShards.class);
  /**
   * How long a turn another process took at a shard is left alone: about the longest backoff of a
   * commit, so the other process has had time to write.
   */
  static final Duration TURN_RESPECTED = Duration.ofMillis(200);

  private final KubernetesClient client;
  private final String namespace;
  private final StoreMetrics metrics;
  private final Map<String, ConfigMap> latest = new ConcurrentHashMap<>();
  private final Map<String, ConfigMap> loaded = new ConcurrentHashMap<>();
  private final Set<LoadScope> stale = ConcurrentHashMap.newKeySet();
  /** Bitmap shards changed elsewhere: each loads on its own, unless its whole kind loads anyway. */
  private final Set<String> staleShards = ConcurrentHashMap.newKeySet();
  private final Map<RangeKey, String> problems = new ConcurrentHashMap<>();
  /** Shards being written now, as they will read once written: the watch's echo is no news. */
  private final Map<String, ConfigMap> writing = new ConcurrentHashMap<>();
  /** False once the API server refused a patch for want of RBAC: turns are then plain reads. */
  private volatile boolean mayPatch = true;
  /** The last stamp this process put on a shard when it took a turn (see {@link #rereadTakingTurn}). */
  private volatile String ourLastStamp;
  /** The holder ledgers of the shards this process wrote or read last (see LedgerMemo). */
  private final LedgerMemo ledgers = LedgerMemo.create();

  StoredShards(KubernetesClient client, String namespace, StoreMetrics metrics) {
    this.client = client;
    this.namespace = namespace;
    this.metrics = metrics;
  }

  LedgerMemo ledgers() {
    return ledgers;
  }

  /** The version of a shard the engine reflects; null when the engine has none. */
  ConfigMap loaded(String name) {
    return loaded.get(name);
  }

  /** The newest version seen of a shard; null when it does not exist (as far as is known). */
  ConfigMap latest(String name) {
    return latest.get(name);
  }

  /** Every shard seen. */
  List<ConfigMap> all() {
    return List.copyOf(latest.values());
  }

  /** Why a range's stored state cannot be used; null when it can. */
  String problem(RangeKey key) {
    return problems.get(key);
  }

  /** A shard about to be written with {@code desired}: its watch event may come before the answer. */
  void writing(ConfigMap desired) {
    writing.put(desired.getMetadata().getName(), desired);
  }

  /** A shard this process wrote: the engine already reflects it. */
  void written(ConfigMap shard) {
    loaded.put(shard.getMetadata().getName(), shard);
    remember(shard);
    writing.remove(shard.getMetadata().getName());
  }

  /** A write that failed (or may have landed): whatever the watch brings is news. */
  void notWritten(String name) {
    writing.remove(name);
  }

  /** A shard seen (listed, watched, written): kept when newer than what is known. */
  void remember(ConfigMap shard) {
    latest.merge(shard.getMetadata().getName(), shard, (known, seen) -> newer(seen, known) ? seen : known);
  }

  void forget(String name) {
    latest.remove(name);
    loaded.remove(name);
  }

  /** Asks for a kind to be loaded again; true when it was not asked for already. */
  boolean markStale(RangeKey key) {
    return stale.add(LoadScope.of(key));
  }

  /**
   * Asks for a shard to be loaded again: a bitmap shard alone, any other its whole kind; true when
   * it was not asked for already.
   */
  boolean markStale(ConfigMap shard) {
    if (ShardLayout.placeOf(shard).isPresent()) {
      return staleShards.add(shard.getMetadata().getName());
    }
    return ShardNames.keyOf(shard).map(this::markStale).orElse(false);
  }

  /**
   * Reads shards again from the API, one by one (a write to them lost or failed); they load again
   * before the next commit, a bitmap shard alone, any other with its kind. The watch usually
   * brings the same news a moment later.
   */
  void reread(Set<String> names) {
    readAgain(names, name -> client.configMaps().inNamespace(namespace).withName(name).get());
  }

  /**
   * As {@link #reread}, for shards whose writes keep losing to a writer that never needs to read
   * first (its last write told it the version): each is read by a merge patch that stamps
   * {@link RangeConfigMaps#WRITE_TURN_ANNOTATION} with the time, which moves the version on. The
   * other writer's next compare-and-swap then loses and backs off, unless its watch brings it the
   * stamped version first, while this one writes on the version the patch returned.
   *
   * <p>A turn another process took less than {@link #TURN_RESPECTED} ago (as far as the watch has
   * shown) is not cut short: that shard is read plainly. Nor is any shard patched once the API
   * server refused a patch for want of RBAC (manifests older than this version), until restart.
   */
  void rereadTakingTurn(Set<String> names) {
    Instant now = Instant.now();
    String stamp = now.toString();
    String patch = "{\"metadata\":{\"annotations\":{\"" + RangeConfigMaps.WRITE_TURN_ANNOTATION + "\":\""
        + stamp + "\"}}}";
    readAgain(names, name -> {
      Resource<ConfigMap> shard = client.configMaps().inNamespace(namespace).withName(name);
      if (!mayPatch || anotherTookATurnLately(latest.get(name), now)) {
        return shard.get();
      }
      try {
        // Patched through a named object: by name alone, fabric8 reads the shard before patching.
        ConfigMap patched = client.configMaps().inNamespace(namespace).resource(new ConfigMapBuilder()
            .withNewMetadata().withName(name).withNamespace(namespace).endMetadata().build())
            .patch(PatchContext.of(PatchType.JSON_MERGE), patch);
        ourLastStamp = stamp;
        metrics.turnTaken();
        return patched;
      } catch (KubernetesClientException e) {
        if (e.getCode() == 404) {
          return null;
        }
        if (e.getCode() != 403) {
          throw e;
        }
        mayPatch = false;
        log.warn("subrange may not patch ConfigMap {} ({}), so until it restarts a replica whose writes to a shard"
            + " keep losing cannot take its turn; grant patch on configmaps as manifests/rbac.yaml does", name,
            Failures.rootMessage(e));
        return shard.get();
      }
    });
  }

  /** Whether a shard carries a turn another process stamped less than {@link #TURN_RESPECTED} before {@code now}. */
  private boolean anotherTookATurnLately(ConfigMap shard, Instant now) {
    String stamp = shard == null || shard.getMetadata().getAnnotations() == null ? null
        : shard.getMetadata().getAnnotations().get(RangeConfigMaps.WRITE_TURN_ANNOTATION);
    if (stamp == null || stamp.equals(ourLastStamp)) {
      return false;
    }
    try {
      Duration age = Duration.between(Instant.parse(stamp), now);
      // Clocks of other nodes may run ahead a little: a stamp from the near future is recent too.
      return age.compareTo(TURN_RESPECTED) < 0 && age.compareTo(TURN_RESPECTED.negated()) > 0;
    } catch (DateTimeParseException e) {
      return false;
    }
  }

  /** Reads each shard with {@code read} (null: it is gone) and has it loaded before the next commit. */
  private void readAgain(Set<String> names, Function<String, ConfigMap> read) {
    for (String name : names) {
      metrics.reload();
      ConfigMap known = loaded.get(name);
      try {
        ConfigMap current = read.apply(name);
        if (current == null) {
          latest.remove(name);
        } else {
          remember(current);
          known = current;
        }
      } catch (RuntimeException e) {
        log.debug("Reading {} again failed ({}); the next write will tell", name, Failures.rootMessage(e));
      }
      if (known != null) {
        markStale(known);
      }
    }
  }

  /** Reads the shards of the given ranges' kinds again from the API (a write lost or failed). */
  void reload(Set<RangeKey> keys) {
    Set<LoadScope> scopes = new LinkedHashSet<>();
    keys.forEach(key -> scopes.add(LoadScope.of(key)));
    for (LoadScope scope : scopes) {
      metrics.reload();
      try {
        List<ConfigMap> items = client.configMaps().inNamespace(namespace)
            .withLabels(ShardNames.selector(scope.kind(), scope.family())).list().getItems();
        Set<String> present = new HashSet<>();
        for (ConfigMap item : items) {
          present.add(item.getMetadata().getName());
          remember(item);  // a watch event newer than the list stays
        }
        latest.values().removeIf(c -> scope.contains(c) && !present.contains(c.getMetadata().getName()));
      } catch (RuntimeException e) {
        log.debug("Reloading {} failed ({}); the next write will tell", scope, Failures.rootMessage(e));
      }
      stale.add(scope);
    }
  }

  /**
   * Loads the engine's picture of every kind asked for from the newest shards seen, and notes
   * which ranges cannot be used. Call on the committer thread only.
   */
  void refresh(AllocationEngine engine) {
    if (!staleShards.isEmpty()) {
      Set<String> names = new LinkedHashSet<>(staleShards);
      staleShards.removeAll(names);
      for (String name : names) {
        if (!refreshShard(engine, name)) {
          ConfigMap known = latest.containsKey(name) ? latest.get(name) : loaded.get(name);
          if (known != null) {
            ShardNames.keyOf(known).ifPresent(this::markStale);
          }
        }
      }
    }
    if (stale.isEmpty()) {
      return;
    }
    Set<LoadScope> scopes = new LinkedHashSet<>(stale);
    stale.removeAll(scopes);
    Map<String, ConfigMap> view = new HashMap<>(latest);
    for (LoadScope scope : scopes) {
      metrics.kindLoad();
      // Decoding needs no lock: admission's fast paths wait only for the restore itself. A range
      // added meanwhile is restored empty and unknown, and loads on its own (it was marked
      // stale when added); a state for a range removed meanwhile is skipped by restore.
      List<RangeState> states = new ArrayList<>();
      Map<RangeKey, String> rejected = new LinkedHashMap<>();
      List<RangeKey> keys = engine.rangeKeys().stream().filter(scope::covers).toList();
      for (RangeKey key : keys) {
        try {
          states.add(RangeConfigMaps.decode(key, view::get, ledgers));
        } catch (IllegalArgumentException e) {
          rejected.put(key, e.getMessage());
        }
      }
      synchronized (engine) {
        rejected.putAll(engine.restore(scope.kind(), scope.family(), states));
        for (RangeKey key : keys) {
          for (int i = 0; view.containsKey(ShardNames.name(key, i)); i++) {
            ConfigMap shard = view.get(ShardNames.name(key, i));
            loaded.put(shard.getMetadata().getName(), shard);
          }
          noteProblem(key, rejected.get(key));
        }
      }
    }
  }

  /**
   * Loads one bitmap shard's window into the engine; false when it must load with its whole kind
   * (the shard is gone or unreadable, its range has a problem or overlaps another, or the kind
   * loads anyway).
   */
  private boolean refreshShard(AllocationEngine engine, String name) {
    ConfigMap shard = latest.get(name);
    RangeKey key = shard == null ? null : ShardNames.keyOf(shard).orElse(null);
    if (key == null || stale.contains(LoadScope.of(key)) || problems.containsKey(key)) {
      return false;
    }
    RangeWindow window;
    try {
      window = RangeConfigMaps.decodeWindow(key, shard, ledgers);
    } catch (IllegalArgumentException e) {
      return false;
    }
    synchronized (engine) {
      if (!engine.restoreWindow(key, RangeConfigMaps.rangeOf(shard), window)) {
        return false;
      }
      loaded.put(name, shard);
    }
    metrics.shardLoad();
    return true;
  }

  private void noteProblem(RangeKey key, String now) {
    String before = now == null ? problems.remove(key) : problems.put(key, now);
    if (now != null && !now.equals(before)) {
      log.warn("The stored state of {} cannot be used: {}; it hands out nothing until the reconciler rebuilds it",
          key, now);
    } else if (now == null && before != null) {
      log.info("The stored state of {} is loaded", key);
    }
  }

  /**
   * Whether {@code seen} is newer than {@code known}. resourceVersions are opaque to clients, but
   * etcd's are increasing numbers; comparing them only spares needless reloads, correctness comes
   * from compare-and-swap.
   */
  static boolean newer(ConfigMap seen, ConfigMap known) {
    String a = seen.getMetadata().getResourceVersion();
    String b = known.getMetadata().getResourceVersion();
    try {
      return Long.parseLong(a) > Long.parseLong(b);
    } catch (NumberFormatException | NullPointerException e) {
      return !Objects.equals(a, b);
    }
  }

  /**
   * The watch on the shards: another writer's change makes its kind load again; {@code wake} tells
   * the committer. It runs on the store client's I/O thread and must never block (see
   * ConfigMapAllocationStore#clientFor): it records, compares and wakes, nothing more.
   */
  ResourceEventHandler<ConfigMap> watch(Runnable wake) {
    return new ResourceEventHandler<>() {

      @Override
      public void onAdd(ConfigMap shard) {
        seen(shard);
      }

      @Override
      public void onUpdate(ConfigMap before, ConfigMap shard) {
        seen(shard);
      }

      @Override
      public void onDelete(ConfigMap shard, boolean finalStateUnknown) {
        latest.remove(shard.getMetadata().getName());
        ShardNames.keyOf(shard).ifPresent(key -> {
          markStale(key);
          wake.run();
        });
      }

      private void seen(ConfigMap shard) {
        ConfigMap base = loaded.get(shard.getMetadata().getName());
        ConfigMap ours = writing.get(shard.getMetadata().getName());
        remember(shard);
        if (ours != null && RangeConfigMaps.sameContent(shard, ours)) {
          return;  // this process's own write, seen before its answer arrived
        }
        if (base == null || newer(shard, base)) {
          if (log.isDebugEnabled()) {
            log.debug("Shard {} changed elsewhere: version {} (loaded {}, writing {})", shard.getMetadata().getName(),
                shard.getMetadata().getResourceVersion(), base == null ? null : base.getMetadata().getResourceVersion(),
                ours == null ? null : ours.getMetadata().getResourceVersion());
          }
          if (markStale(shard)) {
            wake.run();
          }
        }
      }
    };
  }

  /** What one load covers: a kind, and for Service ranges a family (overlapping ranges load together). */
  record LoadScope(RangeKey.Kind kind, IpFamily family) {

    static LoadScope of(RangeKey key) {
      return new LoadScope(key.kind(), key.family());
    }

    boolean covers(RangeKey key) {
      return key.kind() == kind && Objects.equals(key.family(), family);
    }

    boolean contains(ConfigMap shard) {
      return ShardNames.keyOf(shard).map(this::covers).orElse(false);
    }
  }
}
