package io.subrange.webhook.store;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * What the ConfigMap store does, for {@code /metrics}:
 * <ul>
 *   <li>{@code subrange_store_commits_total}: group commits (one pass of the committer);
 *   <li>{@code subrange_store_committed_requests_total}: requests made durable;
 *   <li>{@code subrange_store_batch_requests}: requests per commit (a summary);
 *   <li>{@code subrange_store_configmap_writes_total{result}}: ConfigMap writes, by
 *       {@code ok}, {@code conflict} (another writer was first) or {@code error};
 *   <li>{@code subrange_store_configmap_writes_saved_total}: writes group commit saved: what
 *       the committed requests would have written one by one, less what was written;
 *   <li>{@code subrange_store_reloads_total}: re-reads of stored state after a failed write;
 *   <li>{@code subrange_store_write_turns_total}: those re-reads that took a turn at a shard whose
 *       writes kept losing to another writer (a patch that makes the other's next write lose; see
 *       {@link StoredShards#rereadTakingTurn});
 *   <li>{@code subrange_store_loads_total{scope}}: stored state loaded into the engine after
 *       another writer changed it, by {@code shard} (one bitmap shard) or {@code kind} (every
 *       range of a kind and family: sparse ranges, pod CIDRs, and whatever a shard cannot settle);
 *   <li>{@code subrange_store_commit_duration_seconds}: from a request's arrival to its durable
 *       answer;
 *   <li>{@code subrange_store_unavailable_total}: requests answered 503;
 *   <li>{@code subrange_store_reserved_ahead_total{event}}: values reserved ahead
 *       ({@link ReservedAhead}): {@code reserved}, {@code handed_out} (to a Service, without a
 *       write of its own), {@code recorded} (its holder named in a later write), {@code dropped}
 *       (too old to hand out, or freed meanwhile: the reconciler frees it) and {@code lost}
 *       (handed out, but no longer reserved when its holder was to be named: logged);
 *   <li>{@code subrange_store_reserved_ahead_waits_seconds{result}}: creates that found a pool
 *       dry and waited for the batch on its way, and how long: {@code served} (from that batch) or
 *       {@code usual_path} (the batch failed or others took it: the create then wrote its own
 *       values, with what was left of its budget). Many waits say the pool runs dry before its
 *       next batch is in: a bigger {@code reserve-ahead} helps where the range has room.
 * </ul>
 */
public final class StoreMetrics {

  private static final String PREFIX = "subrange.store.";

  private final Counter commits;
  private final Counter committed;
  private final DistributionSummary batchSize;
  private final Counter writesOk;
  private final Counter writesConflict;
  private final Counter writesError;
  private final Counter writesSaved;
  private final Counter reloads;
  private final Counter writeTurns;
  private final Counter shardLoads;
  private final Counter kindLoads;
  private final Counter unavailable;
  private final Timer commitDuration;
  /** One counter per event, looked up once: handing out is on every Service create's path. */
  private final Map<String, Counter> reservedAhead = new ConcurrentHashMap<>();
  private final Timer batchWaitsServed;
  private final Timer batchWaitsUsualPath;
  private final MeterRegistry registry;

  public StoreMetrics(MeterRegistry registry) {
    this.registry = registry;
    commits = Counter.builder(PREFIX + "commits").description("Group commits").register(registry);
    committed = Counter.builder(PREFIX + "committed.requests").description("Requests made durable")
        .register(registry);
    batchSize = DistributionSummary.builder(PREFIX + "batch.requests").description("Requests per group commit")
        .register(registry);
    writesOk = writes(registry, "ok");
    writesConflict = writes(registry, "conflict");
    writesError = writes(registry, "error");
    writesSaved = Counter.builder(PREFIX + "configmap.writes.saved")
        .description("ConfigMap writes group commit saved").register(registry);
    reloads = Counter.builder(PREFIX + "reloads").description("Reloads of stored state after a failed write")
        .register(registry);
    writeTurns = Counter.builder(PREFIX + "write.turns")
        .description("Re-reads that took a turn at a shard another writer kept winning").register(registry);
    shardLoads = loads(registry, "shard");
    kindLoads = loads(registry, "kind");
    unavailable = Counter.builder(PREFIX + "unavailable").description("Requests answered 503").register(registry);
    commitDuration = Timer.builder(PREFIX + "commit.duration").description("Arrival to durable answer")
        .publishPercentileHistogram().register(registry);
    batchWaitsServed = batchWaitTimer(registry, "served");
    batchWaitsUsualPath = batchWaitTimer(registry, "usual_path");
  }

  /** Counts values reserved ahead by what happened to them (see the class comment). */
  void reservedAhead(String event, int count) {
    reservedAhead.computeIfAbsent(event, e -> Counter.builder(PREFIX + "reserved.ahead")
        .description("Values reserved ahead, by what happened to them").tag("event", e).register(registry))
        .increment(count);
  }

  /** A create that waited for a batch reserved ahead: served from it, or sent the usual path after it. */
  void waitedForBatch(long nanos, boolean served) {
    (served ? batchWaitsServed : batchWaitsUsualPath).record(nanos, TimeUnit.NANOSECONDS);
  }

  /** Creates so far that waited for a batch reserved ahead and were {@code served} from it, or not. */
  public long batchWaits(boolean served) {
    return (served ? batchWaitsServed : batchWaitsUsualPath).count();
  }

  /** Metrics nobody reads, for tests and tools. */
  public static StoreMetrics unregistered() {
    return new StoreMetrics(new SimpleMeterRegistry());
  }

  private static Counter writes(MeterRegistry registry, String result) {
    return Counter.builder(PREFIX + "configmap.writes").description("ConfigMap writes by result")
        .tag("result", result).register(registry);
  }

  private static Timer batchWaitTimer(MeterRegistry registry, String result) {
    return Timer.builder(PREFIX + "reserved.ahead.waits")
        .description("Creates that found a pool of values reserved ahead dry and waited for its batch")
        .tag("result", result).register(registry);
  }

  private static Counter loads(MeterRegistry registry, String scope) {
    return Counter.builder(PREFIX + "loads").description("Stored state loaded into the engine, by scope")
        .tag("scope", scope).register(registry);
  }

  void commit(int requests, int writesAlone, int writesDone) {
    commits.increment();
    committed.increment(requests);
    batchSize.record(requests);
    long saved = Math.max(0, writesAlone - writesDone);
    writesSaved.increment(saved);
  }

  void write(WriteResult result) {
    switch (result) {
      case OK -> writesOk.increment();
      case CONFLICT -> writesConflict.increment();
      case ERROR -> writesError.increment();
    }
  }

  void reload() {
    reloads.increment();
  }

  void turnTaken() {
    writeTurns.increment();
  }

  /** Turns taken at shards so far (see {@code subrange_store_write_turns_total}). */
  public long turnsTaken() {
    return (long) writeTurns.count();
  }

  void shardLoad() {
    shardLoads.increment();
  }

  void kindLoad() {
    kindLoads.increment();
  }

  /** Loads of one shard so far (see {@code subrange_store_loads_total}). */
  public long shardLoads() {
    return (long) shardLoads.count();
  }

  /** Loads of a whole kind so far. */
  public long kindLoads() {
    return (long) kindLoads.count();
  }

  void unavailable() {
    unavailable.increment();
  }

  void answered(Duration sinceArrival) {
    commitDuration.record(sinceArrival);
  }

  /** Group commits that stored requests so far (see {@code subrange_store_commits_total}). */
  public long commits() {
    return (long) commits.count();
  }

  /** Successful ConfigMap writes so far. */
  public long writes() {
    return (long) writesOk.count();
  }

  /** Writes lost to another writer (409) so far. */
  public long conflicts() {
    return (long) writesConflict.count();
  }

  /** Writes saved by group commit so far. */
  public long writesSaved() {
    return (long) writesSaved.count();
  }

  /** Values reserved ahead that met {@code event} so far (see the class comment). */
  public long reservedAhead(String event) {
    Counter counter = registry.find(PREFIX + "reserved.ahead").tag("event", event).counter();
    return counter == null ? 0 : (long) counter.count();
  }

  enum WriteResult { OK, CONFLICT, ERROR }
}
