package io.subrange.webhook.store;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.subrange.allocator.band.AnchoredRandom;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.podcidr.ClusterCidr;
import io.subrange.allocator.podcidr.ClusterCidrUsage;
import io.subrange.allocator.podcidr.NodeView;
import io.subrange.allocator.podcidr.PodCidrAllocation;
import io.subrange.allocator.store.Allocation;
import io.subrange.allocator.store.AllocationException;
import io.subrange.allocator.store.AllocationStore;
import io.subrange.allocator.store.Holder;
import io.subrange.allocator.store.InMemoryAllocationStore;
import io.subrange.allocator.store.IpClaim;
import io.subrange.allocator.store.PortClaim;
import io.subrange.allocator.store.RangeKey;
import io.subrange.allocator.store.RangeState;
import io.subrange.allocator.band.RangeUsage;
import io.subrange.allocator.store.RangeView;
import io.subrange.allocator.store.RangeWindow;
import io.subrange.allocator.store.Reservation;
import io.subrange.allocator.store.ReservationRequest;
import io.subrange.allocator.store.StoreUnavailableException;
import io.subrange.webhook.Failures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The allocation store kept in the cluster ({@code subrange.store=kubernetes}): each range's
 * state is a set of ConfigMaps in subrange's namespace ({@link RangeConfigMaps}), written with
 * compare-and-swap on {@code resourceVersion}, so any number of replicas may allocate and none
 * can overwrite what another recorded.
 *
 * <p>It decorates the {@link InMemoryAllocationStore} engine, which decides every allocation;
 * this class decides when an answer may be given: only once what it reports is stored. One
 * committer thread takes every request waiting at that moment, applies them to the engine,
 * and writes the shards they changed once (<em>group commit</em>), so one ConfigMap write
 * carries many allocations and throughput grows with concurrency. When a write loses (409:
 * another replica wrote first) or fails (5xx, timeout, cut connection: it may or may not have
 * landed), the committer waits a short, jittered, growing pause, reloads the stored state,
 * applies the requests not yet durable again (the same object gets back what it already holds)
 * and writes on what it has just read, until each request's budget runs out; then it answers
 * 503 and has granted nothing. Requests whose ranges were written in full are answered at once, even when others
 * in the same commit must retry (a failed shard holds back every request in its range).
 *
 * <p>Only the committer changes the engine's picture of stored state, and it writes each shard
 * with the {@code resourceVersion} of the version that picture was loaded from; a watch on the
 * ConfigMaps tells it when another replica wrote, and it reloads between commits.
 *
 * <p>Ranges whose ConfigMaps are missing or corrupt hand out nothing (503) until the reconciler
 * rebuilds them from the cluster ({@link #install}); replicas never create a range's state
 * themselves, since only the cluster knows what it holds.
 */
public final class ConfigMapAllocationStore implements AllocationStore, RebuildableStore, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ConfigMapAllocationStore.class);
  private static final int MAX_BATCH = 1024;
  private static final int WRITERS = 4;
  private static final long FIRST_BACKOFF_MILLIS = 5;
  private static final long MAX_BACKOFF_MILLIS = 200;

  private final InMemoryAllocationStore engine;
  private final KubernetesClient client;
  private final String namespace;
  private final Duration budget;
  private final StoreMetrics metrics;

  private final StoredShards shards;
  /** Objects with changes applied to the engine and not yet stored (guarded by the engine's lock). */
  private final Set<String> unstoredHolders = new HashSet<>();
  private final LinkedBlockingQueue<Task> queue = new LinkedBlockingQueue<>();
  /** Tasks taken from the queue during a commit, to run after it (committer thread only). */
  private final List<Control> deferred = new ArrayList<>();
  /** Where this replica starts dynamic allocations; null when starts are uniform. */
  private final AnchoredRandom anchor;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final ExecutorService writers;
  private final Thread committer;
  private volatile boolean running;
  private volatile boolean loadedOnce;
  private SharedIndexInformer<ConfigMap> informer;

  /**
   * @param client a client of the store's own, closed with it, that does not retry by itself (the
   *     committer retries, within budget) and gives up on a request within
   *     {@link #requestTimeout} (see {@link #clientFor})
   * @param namespace where the ConfigMaps live (subrange's own namespace)
   * @param budget how long a request may wait for its write before it is answered 503; keep it
   *     below the admission timeout
   */
  public ConfigMapAllocationStore(InMemoryAllocationStore engine, KubernetesClient client, String namespace,
      Duration budget, StoreMetrics metrics) {
    this(engine, null, client, namespace, budget, metrics);
  }

  /**
   * @param anchor the engine's source of start offsets, moved after a write lost to another
   *     replica so replicas spread over a range's shards
   */
  public ConfigMapAllocationStore(InMemoryAllocationStore engine, AnchoredRandom anchor, KubernetesClient client,
      String namespace, Duration budget, StoreMetrics metrics) {
    this.engine = engine;
    this.anchor = anchor;
    this.client = client;
    this.namespace = namespace;
    this.budget = budget;
    this.metrics = metrics;
    this.shards = new StoredShards(client, namespace, metrics);
    engine.requireLoadedState();
    this.writers = Executors.newFixedThreadPool(WRITERS, daemon("subrange-store-writer"));
    this.committer = daemon("subrange-store-committer").newThread(this::commitLoop);
  }

  /**
   * How long one ConfigMap request may take: a quarter of the budget, at least 250 ms. A request
   * gets no new attempt once less than this is left of its budget, so an answer (stored, or 503)
   * never comes later than the budget, however slow the API server is.
   */
  public static Duration requestTimeout(Duration budget) {
    return Duration.ofMillis(Math.max(250, budget.toMillis() / 4));
  }

  /**
   * The store's own client made from the shared one: no retries inside the client (the committer
   * retries, and a retried write must use a new resourceVersion), and requests that give up
   * within {@link #requestTimeout}.
   */
  public static KubernetesClient clientFor(KubernetesClient shared, Duration budget) {
    int timeout = (int) requestTimeout(budget).toMillis();
    return new KubernetesClientBuilder().withConfig(new ConfigBuilder(shared.getConfiguration())
        .withRequestRetryBackoffLimit(0)
        .withRequestTimeout(timeout)
        .withConnectionTimeout(timeout)
        .build()).build();
  }

  /**
   * Lists the stored shards, keeps watching them, and starts committing.
   *
   * @throws IllegalStateException when the ConfigMaps cannot be listed within {@code timeout}
   */
  public void start(Duration timeout) {
    informer = client.configMaps().inNamespace(namespace).withLabel(ShardNames.KIND_LABEL).runnableInformer(0);
    informer.addEventHandler(shards.watch(() -> queue.add(new Control(() -> { }))));
    try {
      informer.start().toCompletableFuture().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      informer.stop();
      throw new IllegalStateException("could not list subrange's ConfigMaps in namespace " + namespace + " within "
          + timeout.toSeconds() + " s: " + Failures.rootMessage(e) + ". subrange.store=kubernetes keeps allocations there;"
          + " check that the namespace exists and that subrange may list, watch and update ConfigMaps in it", e);
    }
    informer.getStore().list().forEach(shards::remember);
    running = true;
    engine.rangeKeys().forEach(shards::markStale);
    shards.refresh(engine);
    committer.start();
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    running = false;
    committer.interrupt();
    try {
      committer.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (Task task : queue) {
      task.fail(new StoreUnavailableException("subrange is shutting down, so nothing was allocated; retry shortly"));
    }
    writers.shutdownNow();
    if (informer != null) {
      informer.stop();
    }
    client.close();
  }

  // ---- requests: through the committer ------------------------------------------------------

  @Override
  public CompletableFuture<Reservation> reserve(ReservationRequest request) {
    if (request.dryRun()) {
      return engine.reserve(request);  // keeps nothing, so nothing to make durable
    }
    Reservation unchanged = answerIfAlreadyHeld(request);
    if (unchanged != null) {
      return CompletableFuture.completedFuture(unchanged);
    }
    return submit("the allocation for " + request.holder().kind() + " " + request.holder(), holderKey(request.holder()),
        e -> e.reserve(request));
  }

  /**
   * The answer to a request that would change nothing (everything it asks for is stored and held
   * by it already: the validating webhook after the mutating one, an update that keeps its
   * values), without waiting for the committer; null when it must go through it. Values of an
   * object with changes not yet stored do not count as held.
   */
  private Reservation answerIfAlreadyHeld(ReservationRequest request) {
    synchronized (engine) {
      return unstoredHolders.contains(holderKey(request.holder())) ? null : engine.answerIfAlreadyHeld(request);
    }
  }

  private static String holderKey(Holder holder) {
    return holder.kind() + "/" + holder.namespace() + "/" + holder.name();
  }

  @Override
  public CompletableFuture<PodCidrAllocation> reservePodCidrs(NodeView node, List<Cidr> preset, boolean dryRun) {
    if (dryRun) {
      return engine.reservePodCidrs(node, preset, true);
    }
    return submit("the pod CIDRs of node " + node.name(), holderKey(Holder.node(node.name())),
        e -> e.reservePodCidrs(node, preset, false));
  }

  @Override
  public CompletableFuture<PodCidrAllocation> recordPodCidrs(NodeView node, List<Cidr> podCidrs) {
    return submit("the pod CIDRs of node " + node.name(), holderKey(Holder.node(node.name())),
        e -> e.recordPodCidrs(node, podCidrs));
  }

  @Override
  public CompletableFuture<Boolean> releaseIp(IpAddress address, Holder holder) {
    return submit("the release of " + address, null, e -> e.releaseIp(address, holder));
  }

  @Override
  public CompletableFuture<Boolean> releaseNodePort(int port, Holder holder) {
    return submit("the release of NodePort " + port, null, e -> e.releaseNodePort(port, holder));
  }

  @Override
  public CompletableFuture<Boolean> releaseLeakedIp(IpAddress address, Holder holder, long heldSince) {
    return submit("the release of " + address, null, e -> e.releaseLeakedIp(address, holder, heldSince));
  }

  @Override
  public CompletableFuture<Boolean> releaseLeakedNodePort(int port, Holder holder, long heldSince) {
    return submit("the release of NodePort " + port, null, e -> e.releaseLeakedNodePort(port, holder, heldSince));
  }

  @Override
  public CompletableFuture<Boolean> releasePodCidrs(String nodeName) {
    return submit("the release of node " + nodeName + "'s pod CIDRs", null, e -> e.releasePodCidrs(nodeName));
  }

  @Override
  public CompletableFuture<Boolean> adopt(RangeKey.Kind kind, String value, Holder recorded, Holder owner) {
    return submit("the holder of " + value, null, e -> e.adopt(kind, value, recorded, owner));
  }

  private <T> CompletableFuture<T> submit(String what, String holderKey,
      Function<InMemoryAllocationStore, CompletableFuture<T>> action) {
    Mutation<T> mutation = new Mutation<>(what, holderKey, action, System.nanoTime(), metrics);
    if (!running) {
      mutation.fail(new StoreUnavailableException("subrange's store is not running, so nothing was allocated; retry shortly"));
    } else {
      queue.add(mutation);
    }
    return mutation.result;
  }

  // ---- reads: the engine, which mirrors what is stored ---------------------------------------

  @Override
  public List<Allocation> allocations() {
    return engine.allocations();
  }

  @Override
  public Optional<Holder> holderOf(IpAddress address) {
    return engine.holderOf(address);
  }

  @Override
  public Optional<Holder> holderOfNodePort(int port) {
    return engine.holderOfNodePort(port);
  }

  @Override
  public boolean holdsAnythingFor(Holder holder) {
    return engine.holdsAnythingFor(holder);
  }

  @Override
  public Set<IpFamily> servedFamilies() {
    return engine.servedFamilies();
  }

  @Override
  public List<RangeUsage> usage() {
    return engine.usage();
  }

  @Override
  public RangeUsage nodePortUsage() {
    return engine.nodePortUsage();
  }

  @Override
  public List<ClusterCidrUsage> podCidrUsage() {
    return engine.podCidrUsage();
  }

  @Override
  public List<RangeView> describeRanges() {
    return engine.describeRanges();
  }

  @Override
  public Map<String, List<Cidr>> serviceRanges() {
    return engine.serviceRanges();
  }

  @Override
  public List<String> clusterCidrNames() {
    return engine.clusterCidrNames();
  }

  @Override
  public long serviceRangeInUseOnlyBy(String name) {
    return engine.serviceRangeInUseOnlyBy(name);
  }

  @Override
  public boolean clusterCidrInUse(String name) {
    return engine.clusterCidrInUse(name);
  }

  // ---- ranges: a new one loads its stored state before it serves -----------------------------

  @Override
  public void addServiceRange(String name, Cidr cidr) {
    boolean added = !engine.serviceRanges().getOrDefault(name, List.of()).contains(cidr);
    engine.addServiceRange(name, cidr);
    if (added) {
      reloadBeforeServing(RangeKey.serviceIps(name, cidr.family()));
    }
  }

  @Override
  public void markServiceRangeTerminating(String name) {
    engine.markServiceRangeTerminating(name);
  }

  @Override
  public void removeServiceRange(String name) {
    engine.removeServiceRange(name);
  }

  @Override
  public void addClusterCidr(ClusterCidr clusterCidr) {
    boolean added = !engine.clusterCidrNames().contains(clusterCidr.name());
    engine.addClusterCidr(clusterCidr);
    if (added) {
      reloadBeforeServing(RangeKey.podCidrs(clusterCidr.name()));
    }
  }

  @Override
  public void markClusterCidrTerminating(String name) {
    engine.markClusterCidrTerminating(name);
  }

  @Override
  public void removeClusterCidr(String name) {
    engine.removeClusterCidr(name);
  }

  /** Loads a new range's stored state; waits briefly, so a range found at startup serves at once. */
  private void reloadBeforeServing(RangeKey key) {
    shards.markStale(key);
    if (!running) {
      return;  // start() loads everything
    }
    Control reload = new Control(() -> { });
    queue.add(reload);
    try {
      reload.done.get(budget.toMillis() * 2, TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      log.debug("Range {} is still loading: {}", key, Failures.rootMessage(e));
    }
  }

  // ---- rebuilding, for the reconciler ---------------------------------------------------------

  @Override
  public Map<RangeKey, String> rangesToRebuild() {
    Map<RangeKey, String> result = new LinkedHashMap<>();
    for (RangeKey key : engine.unknownRanges()) {
      String problem = shards.problem(key);
      result.put(key, problem == null ? "not loaded yet" : problem);
    }
    return result;
  }

  @Override
  public InMemoryAllocationStore emptyCopyOf(RangeKey key) {
    return engine.emptyCopyOf(key);
  }

  /**
   * Writes every shard of a rebuilt state: creates what is missing, replaces what is there
   * (compare-and-swap on the version last seen, so a concurrent writer wins and the reconciler
   * looks again), then loads it.
   */
  @Override
  public CompletableFuture<Void> install(RangeState state) {
    Control control = new Control(() -> {
      shards.refresh(engine);
      if (!engine.unknownRanges().contains(state.key())) {
        // Loaded meanwhile (an earlier install, or the shards came back): writing a picture of
        // the cluster over it would free what admissions stored since.
        log.info("Not installing the rebuilt state of {}: its stored state is loaded", state.key());
        return;
      }
      writeAll(state);
      shards.refresh(engine);
    });
    queue.add(control);
    return control.done;
  }

  @Override
  public boolean loadedOnce() {
    if (!loadedOnce && running && engine.unknownRanges().isEmpty()) {
      loadedOnce = true;
    }
    return loadedOnce;
  }

  /** Deletes the shards of ranges this store does not serve (their range objects are gone). */
  public CompletableFuture<Void> deleteStateOfRangesNotServed() {
    Control control = new Control(() -> {
      Set<RangeKey> served = new HashSet<>(engine.rangeKeys());
      for (ConfigMap shard : shards.all()) {
        Optional<RangeKey> key = ShardNames.keyOf(shard);
        if (key.isPresent() && !served.contains(key.get())) {
          client.configMaps().inNamespace(namespace).withName(shard.getMetadata().getName()).delete();
          log.info("Deleted ConfigMap {}: range {} is no longer served", shard.getMetadata().getName(), key.get());
          shards.forget(shard.getMetadata().getName());
        }
      }
    });
    queue.add(control);
    return control.done;
  }

  private void writeAll(RangeState rebuilt) {
    shards.reload(Set.of(rebuilt.key()));
    RangeState state = withValuesStoredMeanwhile(rebuilt);
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
    shards.markStale(state.key());
    log.info("Stored the rebuilt state of {}: {} values", state.key(), state.entries().size());
  }

  /**
   * A rebuilt state plus the values its shards hold now that it lacks. The rebuilt state is the
   * cluster as the reconciler's informers last saw it; a replica that still had the range loaded
   * may have stored an allocation since, for an object those informers have not shown yet, and
   * writing over it would hand that value out twice. Stored values the cluster's picture gives to
   * another object are left out (the picture wins); kept ones that no object ever carries are
   * freed by the reconciler after its grace period, as any leak. Pod CIDR states are written as
   * rebuilt: nodes get blocks from the reconciler itself.
   */
  private RangeState withValuesStoredMeanwhile(RangeState rebuilt) {
    RangeKey key = rebuilt.key();
    if (key.kind() == RangeKey.Kind.POD_CIDRS) {
      return rebuilt;
    }
    List<RangeState.Entry> stored = new ArrayList<>();
    for (ConfigMap shard : shards.all()) {
      if (ShardNames.keyOf(shard).filter(key::equals).isPresent()) {
        stored.addAll(HolderLedger.readableEntries(shard));
      }
    }
    if (stored.isEmpty()) {
      return rebuilt;
    }
    InMemoryAllocationStore merged = engine.emptyCopyOf(key);
    merged.restore(key.kind(), key.family(), List.of(rebuilt));
    for (RangeState.Entry entry : stored) {
      if (entry.holder() == null) {
        continue;
      }
      try {
        ReservationRequest keep = key.kind() == RangeKey.Kind.NODE_PORTS
            ? new ReservationRequest(entry.holder(), List.of(),
                List.of(PortClaim.kept(Integer.parseInt(entry.value()))), false)
            : ReservationRequest.ips(entry.holder(), List.of(IpClaim.kept(IpAddress.parse(entry.value()))), false);
        merged.reserve(keep);  // refused when the picture gives the value to another object: it wins
      } catch (RuntimeException e) {
        // a value that is not one of this range's: nothing to keep
      }
    }
    RangeState result = merged.export(key);
    if (result.entries().size() > rebuilt.entries().size()) {
      log.info("Rebuilding {}: kept {} values stored while the rebuild was being made", key,
          result.entries().size() - rebuilt.entries().size());
    }
    return result;
  }

  // ---- the committer ------------------------------------------------------------------------

  private void commitLoop() {
    while (running) {
      try {
        Task first = queue.poll(1, TimeUnit.SECONDS);
        List<Task> tasks = new ArrayList<>();
        if (first != null) {
          tasks.add(first);
          queue.drainTo(tasks, MAX_BATCH - 1);
        }
        shards.refresh(engine);
        List<Mutation<?>> batch = new ArrayList<>();
        for (Task task : tasks) {
          if (task instanceof Control control) {
            control.run();
            shards.refresh(engine);
          } else {
            batch.add((Mutation<?>) task);
          }
        }
        if (!batch.isEmpty()) {
          List<Mutation<?>> pending = new ArrayList<>(batch);
          try {
            commit(pending);
          } catch (RuntimeException e) {
            log.error("Committing {} requests failed; they are answered 503 and the stored state is reloaded",
                pending.size(), e);
            shards.reload(new HashSet<>(engine.rangeKeys()));
          } finally {
            // Whatever is still pending was not stored (an error, or shutdown): say so now rather
            // than leave it to the admission timeout. Completing an answered request does nothing.
            pending.forEach(m -> m.fail(new StoreUnavailableException("subrange could not store " + m.what
                + "; nothing was allocated; retry shortly")));
            synchronized (engine) {
              unstoredHolders.clear();
            }
          }
          for (Control control : List.copyOf(deferred)) {
            control.run();
          }
          deferred.clear();
          shards.refresh(engine);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException e) {
        log.error("The store's committer failed; it carries on", e);
      }
    }
  }

  /**
   * Makes a batch durable: apply, write what changed, answer what is stored; reload and go again
   * for the rest, until each request's budget is spent.
   */
  private void commit(List<Mutation<?>> pending) throws InterruptedException {
    Mutation<?> first = pending.get(0);
    String trouble = null;
    int attempt = 0;
    int requests = 0;
    int writesAlone = 0;
    int writesDone = 0;
    while (!pending.isEmpty()) {
      expire(pending, trouble, attempt);
      if (pending.isEmpty()) {
        break;
      }
      Map<RangeKey, RangeState> states = new LinkedHashMap<>();
      Map<String, RangeWindow> windows = new LinkedHashMap<>();
      Map<String, RangeKey> windowKeys = new HashMap<>();
      synchronized (engine) {
        engine.drainChanged();
        for (Iterator<Mutation<?>> it = pending.iterator(); it.hasNext();) {
          Mutation<?> mutation = it.next();
          if (mutation.holderKey != null) {
            unstoredHolders.add(mutation.holderKey);
          }
          Throwable refused = mutation.apply(engine);
          if (refused != null) {
            mutation.fail(refused);
            it.remove();
          }
        }
        Map<RangeKey, Set<Long>> offsets = new HashMap<>();
        pending.forEach(m -> m.offsets.forEach((key, changed) ->
            offsets.computeIfAbsent(key, k -> new HashSet<>()).addAll(changed)));
        for (Mutation<?> mutation : pending) {
          for (RangeKey key : mutation.keys) {
            if (states.containsKey(key) || windowKeys.containsValue(key)) {
              continue;
            }
            // A bitmap range writes only the shards holding what changed; any other, whole.
            ShardLayout.Place head = Optional.ofNullable(shards.loaded(ShardNames.name(key, 0)))
                .flatMap(ShardLayout::placeOf).orElse(null);
            if (head != null && offsets.containsKey(key)) {
              for (long offset : offsets.get(key)) {
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
        }
      }
      Set<RangeKey> failed = new HashSet<>();
      Set<String> reread = new HashSet<>();
      boolean lostToAnother = false;
      List<ShardWrite> writes = new ArrayList<>();
      // Each shard to write: its range, its name, and its new content (null when the version it
      // would replace is unknown: the shard is gone, or was never loaded).
      record Desired(RangeKey key, String name, ConfigMap content) {
      }
      List<Desired> desiredShards = new ArrayList<>();
      for (RangeState state : states.values()) {
        for (ConfigMap content : RangeConfigMaps.encode(state, namespace, shards.ledgers()).values()) {
          desiredShards.add(new Desired(state.key(), content.getMetadata().getName(), content));
        }
      }
      windows.forEach((name, window) -> {
        ConfigMap base = shards.loaded(name);
        desiredShards.add(new Desired(windowKeys.get(name), name,
            base == null ? null : RangeConfigMaps.encodeWindow(base, window, shards.ledgers())));
      });
      for (Desired shard : desiredShards) {
        ConfigMap base = shards.loaded(shard.name());
        if (base == null || shard.content() == null) {
          failed.add(shard.key());
          reread.add(shard.name());
          trouble = "ConfigMap " + shard.name() + " is gone";
        } else if (!RangeConfigMaps.sameContent(base, shard.content())) {
          ConfigMap desired = shard.content();
          desired.getMetadata().setResourceVersion(base.getMetadata().getResourceVersion());
          shards.writing(desired);
          writes.add(new ShardWrite(shard.key(), desired));
        }
      }
      for (ShardWrite write : runAll(writes)) {
        if (write.written != null) {
          writesDone++;
          shards.written(write.written);
        } else {
          shards.notWritten(write.desired.getMetadata().getName());
          failed.add(write.key);
          reread.add(write.desired.getMetadata().getName());
          lostToAnother |= write.conflict;
          trouble = write.trouble;
        }
      }
      List<Mutation<?>> stored = new ArrayList<>();
      for (Iterator<Mutation<?>> it = pending.iterator(); it.hasNext();) {
        Mutation<?> mutation = it.next();
        if (Collections.disjoint(mutation.keys, failed)) {
          stored.add(mutation);
          it.remove();
        }
      }
      synchronized (engine) {
        // Before answering: the validating webhook follows at once and may take the fast path.
        unstoredHolders.clear();
        pending.forEach(m -> {
          if (m.holderKey != null) {
            unstoredHolders.add(m.holderKey);
          }
        });
      }
      for (Mutation<?> mutation : stored) {
        requests++;
        writesAlone += mutation.keys.size();
        mutation.succeed();
      }
      if (pending.isEmpty()) {
        break;
      }
      if (lostToAnother && anchor != null) {
        anchor.reanchor();  // another replica allocates where this one did: move elsewhere
      }
      // Back off first, then read: a shard another replica keeps writing has moved on during the
      // pause, and a retry must compare-and-swap on the version it has just seen, or it loses again.
      pause(attempt++, pending);
      shards.reread(reread);
      shards.refresh(engine);
      joinArrivals(pending);
    }
    if (requests > 0) {
      metrics.commit(requests, writesAlone, writesDone);
      log.debug("Committed {} requests in {} writes ({} attempts), first: {}", requests, writesDone, attempt + 1,
          first.what);
    }
  }

  /**
   * Requests that arrived while a commit was being retried join it: they would wait behind it
   * anyway, and one write carries them all. Other tasks wait for the commit to end.
   */
  private void joinArrivals(List<Mutation<?>> pending) {
    List<Task> arrived = new ArrayList<>();
    queue.drainTo(arrived, MAX_BATCH);
    for (Task task : arrived) {
      if (task instanceof Mutation<?> mutation) {
        pending.add(mutation);
      } else {
        deferred.add((Control) task);
      }
    }
  }

  /**
   * Answers 503 for requests with too little budget left for another write (one may take up to
   * {@link #requestTimeout}); they were not granted (their changes are not stored).
   */
  private void expire(List<Mutation<?>> pending, String trouble, int attempts) {
    long lastStart = budget.minus(requestTimeout(budget)).toNanos();
    long now = System.nanoTime();
    for (Iterator<Mutation<?>> it = pending.iterator(); it.hasNext();) {
      Mutation<?> mutation = it.next();
      if (now - mutation.arrived > lastStart) {
        mutation.fail(new StoreUnavailableException("subrange could not store " + mutation.what + " within "
            + budget.toMillis() + " ms (" + attempts + " attempts; last: " + trouble + "), so nothing was allocated;"
            + " retry shortly"));
        it.remove();
      }
    }
  }

  private void pause(int attempt, List<Mutation<?>> pending) throws InterruptedException {
    long cap = Math.min(MAX_BACKOFF_MILLIS, FIRST_BACKOFF_MILLIS << Math.min(attempt, 10));
    long sleep = ThreadLocalRandom.current().nextLong(cap / 2, cap + 1);
    long lastStart = budget.minus(requestTimeout(budget)).toNanos();
    long earliestLastStart = pending.stream().mapToLong(m -> m.arrived + lastStart).min().orElse(0);
    long left = TimeUnit.NANOSECONDS.toMillis(earliestLastStart - System.nanoTime());
    Thread.sleep(Math.max(0, Math.min(sleep, left)));
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

  // ---- tasks ----------------------------------------------------------------------------------

  private sealed interface Task permits Mutation, Control {
    void fail(Throwable cause);
  }

  /** A request that changes state: applied to the engine, answered once its shards are stored. */
  private static final class Mutation<T> implements Task {
    final String what;
    final String holderKey;
    final Function<InMemoryAllocationStore, CompletableFuture<T>> action;
    final long arrived;
    final CompletableFuture<T> result = new CompletableFuture<>();
    private final StoreMetrics metrics;
    /** The ranges this request changed when last applied, and which of their offsets. */
    Set<RangeKey> keys = Set.of();
    Map<RangeKey, Set<Long>> offsets = Map.of();
    T value;

    Mutation(String what, String holderKey, Function<InMemoryAllocationStore, CompletableFuture<T>> action,
        long arrived, StoreMetrics metrics) {
      this.what = what;
      this.holderKey = holderKey;
      this.action = action;
      this.arrived = arrived;
      this.metrics = metrics;
    }

    /** Applies to the engine (under its lock); the refusal when the engine refused. */
    Throwable apply(InMemoryAllocationStore engine) {
      CompletableFuture<T> outcome;
      try {
        outcome = action.apply(engine);
      } catch (RuntimeException e) {
        offsets = engine.drainChangedOffsets();
        keys = engine.drainChanged();
        return e;
      }
      offsets = engine.drainChangedOffsets();
      keys = engine.drainChanged();
      try {
        value = outcome.join();
        return null;
      } catch (CompletionException e) {
        return e.getCause() == null ? e : e.getCause();
      }
    }

    void succeed() {
      metrics.answered(Duration.ofNanos(System.nanoTime() - arrived));
      result.complete(value);
    }

    @Override
    public void fail(Throwable cause) {
      boolean answered = result.completeExceptionally(cause instanceof AllocationException
          || cause instanceof RuntimeException ? cause : new IllegalStateException(cause));
      if (answered && cause instanceof StoreUnavailableException) {
        metrics.unavailable();  // every 503 the store causes, counted once
      }
    }
  }

  /** Work on the committer thread between commits: loading a new range, installing a rebuilt state. */
  private static final class Control implements Task {
    final Runnable work;
    final CompletableFuture<Void> done = new CompletableFuture<>();

    Control(Runnable work) {
      this.work = work;
    }

    void run() {
      try {
        work.run();
        done.complete(null);
      } catch (RuntimeException e) {
        done.completeExceptionally(e);
      }
    }

    @Override
    public void fail(Throwable cause) {
      done.completeExceptionally(cause);
    }
  }

  private static java.util.concurrent.ThreadFactory daemon(String name) {
    return runnable -> {
      Thread thread = new Thread(runnable, name);
      thread.setDaemon(true);
      return thread;
    };
  }
}
