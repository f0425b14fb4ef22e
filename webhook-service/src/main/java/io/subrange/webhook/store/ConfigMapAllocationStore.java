package io.subrange.webhook.store;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.subrange.allocator.band.AnchoredStart;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.podcidr.ClusterCidr;
import io.subrange.allocator.podcidr.ClusterCidrUsage;
import io.subrange.allocator.podcidr.NodeView;
import io.subrange.allocator.podcidr.PodCidrAllocation;
import io.subrange.allocator.store.Allocation;
import io.subrange.allocator.store.AllocationEngine;
import io.subrange.allocator.store.AllocationStore;
import io.subrange.allocator.store.Holder;
import io.subrange.allocator.store.IpClaim;
import io.subrange.allocator.store.PortClaim;
import io.subrange.allocator.store.RangeKey;
import io.subrange.allocator.store.RangeState;
import io.subrange.allocator.band.RangeUsage;
import io.subrange.allocator.store.RangeView;
import io.subrange.allocator.store.Reservation;
import io.subrange.allocator.store.ReservationRequest;
import io.subrange.allocator.store.StoreUnavailableException;
import io.subrange.webhook.Failures;
import io.subrange.webhook.kubernetes.KubernetesClients;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The allocation store kept in the cluster ({@code subrange.store=kubernetes}): each range's
 * state is a set of ConfigMaps in subrange's namespace ({@link RangeConfigMaps}), written with
 * compare-and-swap on {@code resourceVersion}, so any number of replicas may allocate and none
 * can overwrite what another recorded.
 *
 * <p>It decorates the {@link AllocationEngine}, which decides every allocation at once; this
 * class decides when an answer may be given: only once what it reports is stored, which is why
 * its answers are futures. One committer thread ({@link GroupCommitter}) takes every request
 * waiting at that moment, applies them to the engine, and writes the shards they changed once
 * ({@link ShardWriter}), retrying within each request's budget when a write loses or fails.
 *
 * <p>Only the committer changes the engine's picture of stored state, and it writes each shard
 * with the {@code resourceVersion} of the version that picture was loaded from; a watch on the
 * ConfigMaps (the informer, kept here) tells it when another replica wrote, and it reloads between
 * commits ({@link StoredShards}).
 *
 * <p>Ranges whose ConfigMaps are missing or corrupt hand out nothing (503) until the reconciler
 * rebuilds them from the cluster ({@link #install}); replicas never create a range's state
 * themselves, since only the cluster knows what it holds.
 *
 * <p>This class is the facade: requests go to the committer, reads to the engine, and the
 * reconciler's rebuilds run on the committer thread between commits. Called from admission
 * threads, the range informers and the reconciler.
 */
public final class ConfigMapAllocationStore implements AllocationStore, RebuildableStore, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ConfigMapAllocationStore.class);
  /** Between attempts to list the stored shards at start. */
  private static final Duration STARTUP_RETRY_PAUSE = Duration.ofMillis(500);

  private final AllocationEngine engine;
  private final KubernetesClient client;
  private final String namespace;
  private final Duration budget;

  private final StoredShards shards;
  private final ShardWriter writer;
  private final GroupCommitter committer;
  private final StoreMetrics metrics;
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile boolean loadedOnce;
  /** Whether another process's write is loaded as soon as it is seen ({@link #loadOthersWritesWhenNeeded}). */
  private volatile boolean loadOnArrival = true;
  private SharedIndexInformer<ConfigMap> informer;
  /** Values reserved ahead of requests; null when creates each write their own (the default). */
  private volatile ReservedAhead reservedAhead;

  /**
   * @param client a client of the store's own, closed with it, that does not retry by itself (the
   *     committer retries, within budget) and gives up on a request within
   *     {@link #requestTimeout} (see {@link #clientFor})
   * @param namespace where the ConfigMaps live (subrange's own namespace)
   * @param budget how long a request may wait for its write before it is answered 503; keep it
   *     below the admission timeout
   */
  public ConfigMapAllocationStore(AllocationEngine engine, KubernetesClient client, String namespace,
      Duration budget, StoreMetrics metrics) {
    this(engine, null, client, namespace, budget, metrics);
  }

  /**
   * @param anchor the engine's start strategy, moved after a write lost to another replica so
   *     replicas spread over a range's shards
   */
  public ConfigMapAllocationStore(AllocationEngine engine, AnchoredStart anchor, KubernetesClient client,
      String namespace, Duration budget, StoreMetrics metrics) {
    this.engine = engine;
    this.client = client;
    this.namespace = namespace;
    this.budget = budget;
    this.metrics = metrics;
    this.shards = new StoredShards(client, namespace, metrics);
    engine.requireLoadedState();
    this.writer = new ShardWriter(engine, client, namespace, shards, metrics);
    this.committer = new GroupCommitter(engine, shards, writer, anchor, budget, metrics);
  }

  /**
   * Lets each request wait up to {@code linger} after it arrived for others to share its write
   * (see {@code subrange.kubernetes.commit-linger}); zero, the default, writes as soon as the
   * committer is free.
   */
  public ConfigMapAllocationStore lingerBeforeCommit(Duration linger) {
    committer.lingerBeforeCommit(linger);
    return this;
  }

  /**
   * Lets each release of a Service's value wait up to {@code linger} after it arrived for others to
   * share its write (see {@code subrange.reconciler.release-linger}); a release also goes with
   * any commit that goes earlier. For the reconciler, which makes them.
   */
  public ConfigMapAllocationStore lingerReleases(Duration linger) {
    committer.lingerReleases(linger);
    return this;
  }

  /**
   * Reserves dynamic values ahead of requests, {@code batch} per write, and answers creates that
   * ask only for dynamic values from them without a write of their own (see {@link ReservedAhead}
   * and {@code subrange.kubernetes.reserve-ahead}). For webhook replicas; the reconciler
   * allocates nothing dynamically.
   *
   * @param replica names this process among the live replicas
   * @param freshFor how long after it was reserved a value may be handed out: at most half the
   *     reconciler's grace for values nothing carries
   * @param flushDelay how long a value may be handed out before its holder is written without
   *     waiting for its pool's next batch (which names it otherwise)
   */
  public ConfigMapAllocationStore reserveAhead(String replica, int batch, Duration freshFor, Duration flushDelay) {
    reservedAhead = new ReservedAhead(engine, committer, metrics, replica, batch, freshFor, flushDelay);
    return this;
  }

  /**
   * Loads what other processes write only when this store needs it: before its next commit, and
   * otherwise within about a second (the committer's idle wake-up), not as each write arrives.
   * For the reconciler, which allocates nothing dynamically and reads the store for its periodic
   * comparison: several writes to a shard in that second cost it one load instead of one each.
   * Every change it makes is still applied to freshly loaded state and written with
   * compare-and-swap; only what it reads between commits may lag by that second. Admission keeps
   * the default (load at once): its fast paths and dry runs answer from what is loaded.
   */
  public ConfigMapAllocationStore loadOthersWritesWhenNeeded() {
    loadOnArrival = false;
    return this;
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
   * within {@link #requestTimeout}. Its one informer's handler ({@link StoredShards#watch}) only
   * records which shards changed and wakes the committer, so its events are handled on the I/O
   * thread that read them ({@link KubernetesClients#forHandlersThatNeverBlock}); whatever is added
   * to it must not block either.
   */
  public static KubernetesClient clientFor(KubernetesClient shared, Duration budget) {
    int timeout = (int) requestTimeout(budget).toMillis();
    return KubernetesClients.forHandlersThatNeverBlock(new ConfigBuilder(shared.getConfiguration())
        .withRequestRetryBackoffLimit(0)
        .withRequestTimeout(timeout)
        .withConnectionTimeout(timeout)
        .build());
  }

  private void anotherProcessWrote() {
    if (loadOnArrival) {
      committer.wake();
    }
  }

  /**
   * Lists the stored shards, keeps watching them, and starts committing. A list that fails (each
   * request may take only {@link #requestTimeout}) is tried again until {@code timeout}; a refusal
   * (401, 403) is not.
   *
   * @throws IllegalStateException when the ConfigMaps cannot be listed within {@code timeout}
   */
  public void start(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    for (int attempt = 1; ; attempt++) {
      informer = client.configMaps().inNamespace(namespace).withLabel(ShardNames.KIND_LABEL).runnableInformer(0);
      informer.addEventHandler(shards.watch(this::anotherProcessWrote));
      try {
        long left = Math.max(1, deadline - System.nanoTime());
        informer.start().toCompletableFuture().get(left, TimeUnit.NANOSECONDS);
        break;
      } catch (InterruptedException e) {
        informer.stop();
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while listing subrange's ConfigMaps", e);
      } catch (Exception e) {
        informer.stop();
        // Each request gives up within the admission budget's request timeout, which a busy API
        // server (or a node short of CPU at start) can miss: try again until the startup timeout.
        // A refusal (403, 401) will not change by waiting.
        long left = deadline - System.nanoTime();
        if (refused(e) || left < STARTUP_RETRY_PAUSE.toNanos()) {
          throw new IllegalStateException("could not list subrange's ConfigMaps in namespace " + namespace
              + " (" + attempt + (attempt == 1 ? " attempt" : " attempts") + " within " + timeout.toSeconds() + " s): "
              + Failures.rootMessage(e) + ". subrange.store=kubernetes keeps allocations there; check that the"
              + " namespace exists and that subrange may list, watch and update ConfigMaps in it", e);
        }
        log.warn("Listing subrange's ConfigMaps in namespace {} failed (attempt {}), trying again: {}", namespace,
            attempt, Failures.rootMessage(e));
        try {
          Thread.sleep(STARTUP_RETRY_PAUSE.toMillis());
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while listing subrange's ConfigMaps", interrupted);
        }
      }
    }
    informer.getStore().list().forEach(shards::remember);
    committer.acceptRequests();
    engine.rangeKeys().forEach(shards::markStale);
    shards.refresh(engine);
    committer.start();
  }

  private static boolean refused(Throwable failure) {
    for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
      if (cause instanceof KubernetesClientException client && (client.getCode() == 401 || client.getCode() == 403)) {
        return true;
      }
    }
    return false;
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    if (reservedAhead != null) {
      reservedAhead.close();
    }
    committer.stop();
    writer.close();
    if (informer != null) {
      informer.stop();
    }
    client.close();
  }

  // ---- requests: through the committer ------------------------------------------------------

  @Override
  public CompletableFuture<Reservation> reserve(ReservationRequest request) {
    if (request.dryRun()) {
      return AllocationStore.answerNow(() -> engine.reserve(request));  // keeps nothing, so nothing to make durable
    }
    long arrived = System.nanoTime();
    ReservedAhead ahead = reservedAhead;
    CompletableFuture<Reservation> fromPools = ahead == null ? null : ahead.handOut(request);
    if (fromPools == null) {
      return reserveWithWrite(request, arrived);
    }
    // Values from the pools: their reservations are stored already. A create that waited for a
    // batch and still found none keeps its budget from when it arrived, not from now.
    return fromPools.thenCompose(answer -> answer != null ? CompletableFuture.completedFuture(answer)
        : reserveWithWrite(request, arrived));
  }

  /** A request the pools do not answer: from the engine when it changes nothing, else through the committer. */
  private CompletableFuture<Reservation> reserveWithWrite(ReservationRequest request, long arrived) {
    Reservation unchanged = answerIfAlreadyHeld(request);
    if (unchanged != null) {
      return CompletableFuture.completedFuture(unchanged);
    }
    return committer.submit("the allocation for " + request.holder().kind() + " " + request.holder(),
        holderKey(request.holder()), e -> e.reserve(request), arrived);
  }

  /**
   * The answer to a request that would change nothing (everything it asks for is stored and held
   * by it already: the validating webhook after the mutating one, an update that keeps its
   * values), without waiting for the committer; null when it must go through it. Values of an
   * object with changes not yet stored do not count as held.
   */
  private Reservation answerIfAlreadyHeld(ReservationRequest request) {
    synchronized (engine) {
      return committer.hasUnstoredChanges(holderKey(request.holder())) ? null : engine.answerIfAlreadyHeld(request);
    }
  }

  private static String holderKey(Holder holder) {
    return holder.kind() + "/" + holder.namespace() + "/" + holder.name();
  }

  @Override
  public CompletableFuture<PodCidrAllocation> reservePodCidrs(NodeView node, List<Cidr> preset, boolean dryRun) {
    if (dryRun) {
      return AllocationStore.answerNow(() -> engine.reservePodCidrs(node, preset, true));
    }
    return committer.submit("the pod CIDRs of node " + node.name(), holderKey(Holder.node(node.name())),
        e -> e.reservePodCidrs(node, preset, false));
  }

  @Override
  public CompletableFuture<PodCidrAllocation> recordPodCidrs(NodeView node, List<Cidr> podCidrs) {
    return committer.submit("the pod CIDRs of node " + node.name(), holderKey(Holder.node(node.name())),
        e -> e.recordPodCidrs(node, podCidrs));
  }

  @Override
  public CompletableFuture<Boolean> releaseIp(IpAddress address, Holder holder) {
    return committer.submitRelease("the release of " + address, e -> e.releaseIp(address, holder));
  }

  @Override
  public CompletableFuture<Boolean> releaseNodePort(int port, Holder holder) {
    return committer.submitRelease("the release of NodePort " + port, e -> e.releaseNodePort(port, holder));
  }

  @Override
  public CompletableFuture<Boolean> releaseIpHeldExactlyBy(IpAddress address, Holder holder) {
    return committer.submitRelease("the release of " + address, e -> e.releaseIpHeldExactlyBy(address, holder));
  }

  @Override
  public CompletableFuture<Boolean> releaseNodePortHeldExactlyBy(int port, Holder holder) {
    return committer.submitRelease("the release of NodePort " + port,
        e -> e.releaseNodePortHeldExactlyBy(port, holder));
  }

  @Override
  public CompletableFuture<Boolean> releaseLeakedIp(IpAddress address, Holder holder, long heldSince) {
    return committer.submitRelease("the release of " + address, e -> e.releaseLeakedIp(address, holder, heldSince));
  }

  @Override
  public CompletableFuture<Boolean> releaseLeakedNodePort(int port, Holder holder, long heldSince) {
    return committer.submitRelease("the release of NodePort " + port,
        e -> e.releaseLeakedNodePort(port, holder, heldSince));
  }

  @Override
  public CompletableFuture<Boolean> releasePodCidrs(String nodeName) {
    return committer.submit("the release of node " + nodeName + "'s pod CIDRs", null, e -> e.releasePodCidrs(nodeName));
  }

  @Override
  public CompletableFuture<Boolean> adopt(RangeKey.Kind kind, String value, Holder recorded, Holder owner) {
    return committer.submit("the holder of " + value, null, e -> e.adopt(kind, value, recorded, owner));
  }

  // ---- reads: the engine, which mirrors what is stored ---------------------------------------

  @Override
  public List<Allocation> allocations() {
    loadWhatOthersWrote();  // the reconciler's comparison starts from what is stored now
    return engine.allocations();
  }

  @Override
  public List<Allocation> allocationsSince(long epochSeconds) {
    loadWhatOthersWrote();
    return engine.allocationsSince(epochSeconds);
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
    ReservedAhead ahead = reservedAhead;
    return engine.holdsAnythingFor(holder) || (ahead != null && ahead.handedOutTo(holder));
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
    if (!loadWhatOthersWrote()) {
      throw new StoreUnavailableException("could not load the newest stored state to tell whether ServiceCIDR "
          + name + " is still in use; it is kept for now");
    }
    return engine.serviceRangeInUseOnlyBy(name);
  }

  @Override
  public boolean clusterCidrInUse(String name) {
    // Unknown counts as in use: its finalizer stays until the next pass can tell.
    return !loadWhatOthersWrote() || engine.clusterCidrInUse(name);
  }

  /**
   * For tests: the resourceVersion of the newest version of a shard this store has seen (listed,
   * watched or written); null when none.
   */
  String seenVersion(String shardName) {
    ConfigMap seen = shards.latest(shardName);
    return seen == null ? null : seen.getMetadata().getResourceVersion();
  }

  /**
   * When this store does not load others' writes as they arrive ({@link #loadOthersWritesWhenNeeded}),
   * loads what it has seen change so far, for a read whose answer matters now: the reconciler's
   * comparison, and whether a range may go. False when that could not be done in time.
   */
  private boolean loadWhatOthersWrote() {
    if (loadOnArrival || !committer.running()) {
      return true;
    }
    try {
      // On the committer thread, the only one that loads: every shard seen to change by now.
      committer.runBetweenCommits(() -> shards.refresh(engine)).get(budget.toMillis() * 2, TimeUnit.MILLISECONDS);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (Exception e) {
      log.warn("Could not load the newest stored state: {}", Failures.rootMessage(e));
      return false;
    }
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
    requireWhatOthersWrote("ServiceCIDR " + name);
    engine.removeServiceRange(name);
  }

  /** Before a range is removed: its values must be known to the last write, or it stays. */
  private void requireWhatOthersWrote(String range) {
    if (!loadWhatOthersWrote()) {
      throw new IllegalStateException("could not load the newest stored state to tell whether " + range
          + " still holds values");
    }
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
    requireWhatOthersWrote("ClusterCIDR " + name);
    engine.removeClusterCidr(name);
  }

  /** Loads a new range's stored state; waits briefly, so a range found at startup serves at once. */
  private void reloadBeforeServing(RangeKey key) {
    shards.markStale(key);
    if (!committer.running()) {
      return;  // start() loads everything
    }
    CompletableFuture<Void> reloaded = committer.runBetweenCommits(() -> { });
    try {
      reloaded.get(budget.toMillis() * 2, TimeUnit.MILLISECONDS);
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
  public AllocationEngine emptyCopyOf(RangeKey key) {
    return engine.emptyCopyOf(key);
  }

  /**
   * Writes every shard of a rebuilt state: creates what is missing, replaces what is there
   * (compare-and-swap on the version last seen, so a concurrent writer wins and the reconciler
   * looks again), then loads it.
   */
  @Override
  public CompletableFuture<Void> install(RangeState state) {
    return committer.runBetweenCommits(() -> {
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
  }

  @Override
  public boolean loadedOnce() {
    if (!loadedOnce && committer.running() && engine.unknownRanges().isEmpty()) {
      loadedOnce = true;
    }
    return loadedOnce;
  }

  /** Deletes the shards of ranges this store does not serve (their range objects are gone). */
  public CompletableFuture<Void> deleteStateOfRangesNotServed() {
    return committer.runBetweenCommits(() -> {
      Set<RangeKey> served = new HashSet<>(engine.rangeKeys());
      for (ConfigMap shard : shards.all()) {
        Optional<RangeKey> key = ShardNames.keyOf(shard);
        if (key.isPresent() && !served.contains(key.get())) {
          writer.delete(shard.getMetadata().getName());
          log.info("Deleted ConfigMap {}: range {} is no longer served", shard.getMetadata().getName(), key.get());
          shards.forget(shard.getMetadata().getName());
        }
      }
    });
  }

  private void writeAll(RangeState rebuilt) {
    shards.reload(Set.of(rebuilt.key()));
    RangeState state = withValuesStoredMeanwhile(rebuilt);
    writer.writeWhole(state);
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
        stored.addAll(LedgerCodec.readableEntries(shard));
      }
    }
    if (stored.isEmpty()) {
      return rebuilt;
    }
    AllocationEngine merged = engine.emptyCopyOf(key);
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
        // a value that is not one of this range's, or a refusal: nothing to keep
      }
    }
    RangeState result = merged.export(key);
    if (result.entries().size() > rebuilt.entries().size()) {
      log.info("Rebuilding {}: kept {} values stored while the rebuild was being made", key,
          result.entries().size() - rebuilt.entries().size());
    }
    return result;
  }
}
