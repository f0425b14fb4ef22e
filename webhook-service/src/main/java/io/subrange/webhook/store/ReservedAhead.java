package io.subrange.webhook.store;

import io.subrange.allocator.band.RangeUsage;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.store.AllocationEngine;
import io.subrange.allocator.store.AllocationException;
import io.subrange.allocator.store.Holder;
import io.subrange.allocator.store.IpAssignment;
import io.subrange.allocator.store.IpClaim;
import io.subrange.allocator.store.PortAssignment;
import io.subrange.allocator.store.PortClaim;
import io.subrange.allocator.store.RangeKey;
import io.subrange.allocator.store.Reservation;
import io.subrange.allocator.store.ReservationRequest;
import io.subrange.allocator.store.Scope;
import io.subrange.allocator.store.StoreUnavailableException;
import io.subrange.webhook.Failures;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Values one webhook replica reserves ahead of requests, so that most Service creates are
 * answered without a ConfigMap write of their own (Calico's block affinity, in spirit).
 *
 * <p>A write costs the API server, etcd and every replica's watch far more than the allocation
 * it carries. So a replica reserves a batch of dynamic values at once, each held on record by
 * a holder of its own ({@link Holder#reservedAhead}): from that write on, no other replica and
 * no other request can be given them. A create asking only for dynamic values then gets values
 * from the batch at once (or, when the pool ran dry and its next batch is being written, as soon
 * as that batch is in); the rule that no answer comes before its allocation is durable holds,
 * because what makes a value unavailable to anyone else, its reservation, is stored. Which
 * Service holds it is written a moment later: with the pool's next batch, which reserves near the
 * same anchor (see AnchoredStart), so the names mostly go to the shard that batch writes anyway;
 * or, for values still unnamed {@code flushDelay} after they were handed out, with the next
 * commit or half a {@code flushDelay} later, within about twice {@code flushDelay} of the
 * hand-out. Until then the Service itself
 * says it (the API server stores it with its values), the validating webhook of any replica
 * accepts a value reserved ahead ({@link ReservationRequest#withReservedAheadAsHeld}), and the
 * reconciler leaves such a record to this replica for its grace period.
 *
 * <p>What keeps it safe:
 * <ul>
 *   <li>each value is handed out once: it leaves the pool as it is given, and this replica's
 *       engine keeps it held by its reservation until the holder is named;
 *   <li>a value is handed out only while the engine still shows it held by its reservation and
 *       its range still gives addresses, and only while it is younger than {@code freshFor}
 *       (half the reconciler's grace): the reconciler frees reservations nothing carries once
 *       they are older than its grace (a replica that died, a pool left unused), and by then a
 *       value this replica gave had its holder named (the flush follows within about
 *       twice {@code flushDelay}, unless the API server refuses writes for longer than half the grace);
 *   <li>a batch is at most a {@link #ROOM_PER_BATCH}th of what its range has free in its dynamic
 *       band (smaller than {@code batch} where that is less), so a pool never holds more than a
 *       sliver of a range, and a nearly full range is never held in pools: there every create
 *       writes, as without this;
 *   <li>a retry of the same create gets the same values only while they are fresh and still
 *       reserved or held by it; nothing is handed out while a range's state is not loaded, nor
 *       after the store closed;
 *   <li>requests naming a value, requests of an object that holds values already (updates, and
 *       creates of a name that holds some), dry runs and objects without a name yet
 *       (generateName) take the usual path.
 * </ul>
 *
 * <p>Values that grew too old in a pool are freed with the pool's next batch, and otherwise by
 * the reconciler after its grace. What this trusts: that the reconciler's grace is the one this
 * replica was given ({@code manifests/} give both the same configuration), and that the clocks of
 * the two processes agree to well within half of it.
 *
 * <p>All state is guarded by the engine's lock: admission threads take from the pools, the
 * committer thread fills them and names holders (a batch's through {@link GroupCommitter#submit},
 * the timer's through {@link GroupCommitter#submitUnhurried}), and a timer thread asks for the
 * holders that fell due to be named.
 */
final class ReservedAhead implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ReservedAhead.class);
  /** A batch is at most this fraction (its inverse) of what its range has free in its dynamic band. */
  static final int ROOM_PER_BATCH = 64;

  private final AllocationEngine engine;
  private final GroupCommitter committer;
  private final StoreMetrics metrics;
  /** Names this process in its reservations' holders (a restarted pod reserves anew). */
  private final String replica;
  private final int batch;
  private final long freshForNanos;
  private final Duration flushDelay;
  private final AtomicLong sequence = new AtomicLong();
  private final ScheduledExecutorService timer;

  private final Map<PoolKey, ArrayDeque<Reserved>> pools = new HashMap<>();
  /** The batch being written for a pool, done once its values are in the pool (or it failed). */
  private final Map<PoolKey, CompletableFuture<Void>> filling = new HashMap<>();
  /** Values handed out whose holder is not stored yet, by the object's key. */
  private final Map<String, HandOut> handedOut = new LinkedHashMap<>();
  /** Values dropped for age while still reserved: the next batch frees them (else the reconciler does). */
  private final List<Reserved> expired = new ArrayList<>();
  private boolean flushScheduled;
  /** Pools whose due names a flush is taking to the committer: the timer leaves them to it. */
  private final Set<PoolKey> flushing = new HashSet<>();
  private boolean closed;

  /**
   * @param replica names this process in its reservations (unique among live replicas)
   * @param batch values reserved per write at most (fewer where the range is tight); a pool is
   *     filled again when half a batch is left
   * @param freshFor how long after it was reserved a value may still be handed out; keep it at
   *     most half the reconciler's grace for values nothing carries
   * @param flushDelay how long after a value is handed out its holder is due to be written, if
   *     no batch of its pool wrote it first; due names go with the next commit, or half as long
   *     again later (see {@link #flush})
   */
  ReservedAhead(AllocationEngine engine, GroupCommitter committer, StoreMetrics metrics, String replica, int batch,
      Duration freshFor, Duration flushDelay) {
    if (batch < 1) {
      throw new IllegalArgumentException("a batch holds at least one value, not " + batch);
    }
    this.engine = engine;
    this.committer = committer;
    this.metrics = metrics;
    this.replica = replica;
    this.batch = batch;
    this.freshForNanos = freshFor.toNanos();
    this.flushDelay = flushDelay;
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread thread = new Thread(r, "subrange-reserved-ahead");
      thread.setDaemon(true);
      return thread;
    });
  }

  // ---- admission threads ----------------------------------------------------------------------

  /**
   * The answer to a create that asks only for dynamic values, from the pools: at once when they
   * hold what it needs; when a pool it needs ran dry while a batch for it is being written, once
   * that batch is in (so the create writes nothing of its own, where it would have written its
   * values beside the batch). Null, or a future completing with null, when it must take the usual
   * path: the pools lack a value (also after that batch), the object holds values already, the
   * request names a value, is a dry run, or its object has no name yet.
   */
  CompletableFuture<Reservation> handOut(ReservationRequest request) {
    Holder holder = request.holder();
    if (request.dryRun() || !request.allDynamic() || !holder.isNamed()
        || (request.ips().isEmpty() && request.ports().isEmpty())) {
      return null;
    }
    Attempt first = attempt(request);
    if (first == null) {
      return null;
    }
    if (first.answer() != null) {
      return CompletableFuture.completedFuture(first.answer());
    }
    // Once the batch is in, once more; still short (other creates took it first), the usual path.
    long waitStarted = System.nanoTime();
    return first.batchesOnTheirWay().handle((done, failed) -> {
      Attempt again = attempt(request);
      Reservation answer = again == null ? null : again.answer();
      metrics.waitedForBatch(System.nanoTime() - waitStarted, answer != null);
      return answer;
    });
  }

  /**
   * One try at the pools: the answer, or (no answer) the batches on their way for the pools it
   * needs, one of which ran dry; null when the pools cannot answer this request.
   */
  private record Attempt(Reservation answer, CompletableFuture<Void> batchesOnTheirWay) {
  }

  private Attempt attempt(ReservationRequest request) {
    Holder holder = request.holder();
    String key = keyOf(holder);
    synchronized (engine) {
      if (closed) {
        return null;
      }
      HandOut earlier = handedOut.get(key);
      if (earlier != null) {
        // The same create again (the API server's retry, or reinvocation): the same values, while
        // they are still its own; otherwise they are left to be freed, and it takes the usual path.
        if (earlier.answers(request) && System.nanoTime() - earlier.at() < freshForNanos && stillTheirs(earlier)) {
          return new Attempt(earlier.answer(), null);
        }
        handedOut.remove(key);
        return null;
      }
      if (engine.holdsAnythingFor(holder)) {
        return null;  // the usual path gives back what it holds
      }
      Set<PoolKey> used = new HashSet<>();
      request.ips().forEach(claim -> used.add(PoolKey.ips(claim.family())));
      if (!request.ports().isEmpty()) {
        used.add(PoolKey.NODE_PORTS);
      }
      if (!used.stream().allMatch(this::loaded)) {
        return null;  // a range being loaded or rebuilt: the usual path answers 503 until it is
      }
      List<Reserved> taken = new ArrayList<>();
      List<IpAssignment> ips = new ArrayList<>();
      List<PortAssignment> ports = new ArrayList<>();
      PoolKey dry = null;
      for (IpClaim claim : request.ips()) {
        Reserved value = take(PoolKey.ips(claim.family()));
        if (value == null) {
          dry = PoolKey.ips(claim.family());
          break;
        }
        taken.add(value);
        ips.add(value.ip());
      }
      for (int i = 0; dry == null && i < request.ports().size(); i++) {
        Reserved value = take(PoolKey.NODE_PORTS);
        if (value == null) {
          dry = PoolKey.NODE_PORTS;
          break;
        }
        taken.add(value);
        ports.add(value.port());
      }
      used.forEach(this::fillWhenLow);  // every pool the request needs, also those it did not reach
      if (dry != null) {
        // Back to the front, in order: they are the oldest, so the first to go stale.
        for (int i = taken.size() - 1; i >= 0; i--) {
          pools.get(taken.get(i).pool()).addFirst(taken.get(i));
        }
        if (!filling.containsKey(dry)) {
          return null;  // no room for a batch: the usual path
        }
        // Every batch on its way for this request's pools: the one it lacks may be stored first.
        return new Attempt(null, CompletableFuture.allOf(used.stream().map(filling::get).filter(Objects::nonNull)
            .toArray(CompletableFuture[]::new)));
      }
      Reservation answer = new Reservation(ips, ports);
      handedOut.put(key, new HandOut(holder, taken, answer, System.nanoTime(), used));
      metrics.reservedAhead("handed_out", taken.size());
      scheduleFlush();
      return new Attempt(answer, null);
    }
  }

  private boolean loaded(PoolKey pool) {
    return pool.kind() == RangeKey.Kind.NODE_PORTS ? engine.nodePortsLoaded() : engine.loaded(pool.family());
  }

  /** Whether each value handed out is still held by its reservation, or by the object it was given to. */
  private boolean stillTheirs(HandOut handOut) {
    for (Reserved value : handOut.values()) {
      Optional<Holder> now = holderNow(engine, value);
      if (now.isEmpty() || !(now.get().equals(value.holder()) || handOut.owner().isSameObject(now.get()))) {
        return false;
      }
    }
    return true;
  }

  private static Optional<Holder> holderNow(AllocationEngine e, Reserved value) {
    return value.port() != null ? e.holderOfNodePort(value.port().port()) : e.holderOf(value.ip().address());
  }

  /** True when values were handed to {@code holder}'s object and its holder is not stored yet. */
  boolean handedOutTo(Holder holder) {
    synchronized (engine) {
      return handedOut.containsKey(keyOf(holder));
    }
  }

  /** The next value of a pool that can still be handed out, or null; those that cannot are dropped. */
  private Reserved take(PoolKey pool) {
    ArrayDeque<Reserved> values = pools.computeIfAbsent(pool, k -> new ArrayDeque<>());
    long now = System.nanoTime();
    int dropped = 0;
    try {
      while (!values.isEmpty()) {
        Reserved value = values.pollFirst();
        if (now - value.reservedAt() >= freshForNanos) {
          expired.add(value);  // too old to hand out: freed with the next batch, or by the reconciler
          dropped++;
          continue;
        }
        Reserved usable = stillReserved(value);
        if (usable != null) {
          return usable;
        }
        dropped++;  // freed or taken meanwhile, or its range gives no more addresses
      }
      return null;
    } finally {
      if (dropped > 0) {
        metrics.reservedAhead("dropped", dropped);
      }
    }
  }

  /** The value as it may be handed out now (its range as it stands), or null when it may not. */
  private Reserved stillReserved(Reserved value) {
    if (value.port() != null) {
      return engine.holderOfNodePort(value.port().port()).filter(value.holder()::equals).isPresent() ? value : null;
    }
    IpAddress address = value.ip().address();
    if (!engine.holderOf(address).filter(value.holder()::equals).isPresent()) {
      return null;
    }
    Cidr range = engine.liveRangeOf(address);
    return range == null ? null : value.in(range);
  }

  // ---- filling the pools ------------------------------------------------------------------------

  /** Asks for a batch when a pool is at half a batch or less, unless one is on its way or the range is tight. */
  private void fillWhenLow(PoolKey pool) {
    ArrayDeque<Reserved> values = pools.computeIfAbsent(pool, k -> new ArrayDeque<>());
    if (values.size() > batch / 2 || filling.containsKey(pool)) {
      return;
    }
    int size = batchFor(pool);  // read only when the pool runs low: it walks the ranges' usage
    if (size == 0 || values.size() > size / 2) {
      return;  // the range is tight (creates write their own values), or its smaller batch is not half gone
    }
    CompletableFuture<Void> fill = new CompletableFuture<>();
    filling.put(pool, fill);  // before submitting: a submit that fails at once completes inline
    List<Reserved> stale = List.copyOf(expired);
    expired.clear();
    // The batch names the holders of what the pool handed out since its last batch: those values
    // were reserved near the same anchor, so the names mostly go to the shard the batch writes.
    Set<PoolKey> pools = Set.of(pool);
    List<HandOut> toName = unnamed(pools);
    long asked = System.nanoTime();  // before the values are stamped on record: their age is never underestimated
    committer.submit("reserving " + size + " values ahead for " + pool, null,
            e -> new Filled(reserveBatch(e, pool, size, stale), handOver(e, toName, pools)))
        .whenComplete((filled, failure) -> {
          synchronized (engine) {
            filling.remove(pool, fill);
            if (filled != null) {
              filled.reserved().forEach(value -> values.addLast(value.at(asked)));
              metrics.reservedAhead("reserved", filled.reserved().size());
              recordNamed(toName, pools, filled.named());  // what it could not name stays for the timer
            }
          }
          fill.complete(null);  // creates waiting for this batch try again (outside the lock)
          if (failure != null) {
            log.debug("Reserving values ahead for {} failed ({}); creates write their own until the next try", pool,
                Failures.rootMessage(failure));
          } else {
            reportLost(filled.named());
          }
        });
  }

  /** What a batch's commit did: the values it reserved, and the holders it named. */
  private record Filled(List<Reserved> reserved, Named named) {
  }

  /**
   * On the committer thread, under the engine's lock: frees this replica's reservations that grew
   * too old to hand out (each only while its reservation still holds it), then reserves as many
   * of a batch as the range gives.
   */
  private List<Reserved> reserveBatch(AllocationEngine e, PoolKey pool, int size, List<Reserved> stale) {
    for (Reserved old : stale) {
      try {
        if (old.port() != null) {
          e.releaseNodePort(old.port().port(), old.holder());
        } else {
          e.releaseIp(old.ip().address(), old.holder());
        }
      } catch (StoreUnavailableException loading) {
        // its range is being loaded: the reconciler frees it after its grace
      }
    }
    List<Reserved> reserved = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      Holder holder = Holder.reservedAhead(replica, sequence.incrementAndGet());
      try {
        if (pool.kind() == RangeKey.Kind.NODE_PORTS) {
          PortAssignment port = e.reserve(new ReservationRequest(holder, List.of(), List.of(PortClaim.dynamic()), false))
              .ports().get(0);
          reserved.add(new Reserved(pool, holder, 0, null, port));
        } else {
          IpAssignment ip = e.reserve(ReservationRequest.ips(holder, List.of(IpClaim.dynamic(pool.family())), false))
              .ips().get(0);
          reserved.add(new Reserved(pool, holder, 0, ip, null));
        }
      } catch (AllocationException full) {
        break;  // what was reserved stays; the range's room is checked again before the next batch
      }
    }
    return reserved;
  }

  /**
   * How many values the next batch of a pool reserves: {@code batch}, or a {@link #ROOM_PER_BATCH}th
   * of what the roomiest range of the pool has free in its dynamic band where that is less (the
   * NodePort range, 30000-32767, gives batches of about 40 while it is empty); 0 when the range is tight.
   */
  private int batchFor(PoolKey pool) {
    long free = pool.kind() == RangeKey.Kind.NODE_PORTS ? dynamicFree(engine.nodePortUsage())
        : engine.usage().stream()
            .filter(usage -> Cidr.parse(usage.range()).family() == pool.family())
            .mapToLong(ReservedAhead::dynamicFree)
            // unsigned: an IPv6 range counts past Long.MAX_VALUE
            .reduce(0L, (a, b) -> Long.compareUnsigned(a, b) >= 0 ? a : b);
    return (int) Long.min(batch, Long.divideUnsigned(free, ROOM_PER_BATCH));
  }

  private static long dynamicFree(RangeUsage usage) {
    return (usage.size() - usage.staticBandSize()) - usage.usedInDynamicBand();
  }

  // ---- naming the holders ---------------------------------------------------------------------

  /** Has the timer look for names due in half a {@code flushDelay}, unless it is set to already. */
  private void scheduleFlush() {
    if (!flushScheduled && !timer.isShutdown()) {
      flushScheduled = true;
      timer.schedule(this::flush, flushDelay.toNanos() / 2, TimeUnit.NANOSECONDS);
    }
  }

  /**
   * Writes the holders of what a pool handed out once a value of it has gone {@code flushDelay}
   * unnamed (no batch of the pool came: a pool that hands out slowly fills slowly), every value of
   * that pool handed out so far: with the next commit, or half a {@code flushDelay} later. Runs
   * every half {@code flushDelay} while anything is unnamed, and again as soon as a flush is done
   * if names of its pools fell due meanwhile, so a name is written about twice {@code flushDelay}
   * after its value was handed out at the latest (later only while writes fail).
   */
  private void flush() {
    Set<PoolKey> pools;
    List<HandOut> pending;
    synchronized (engine) {
      flushScheduled = false;
      if (handedOut.isEmpty()) {
        return;
      }
      scheduleFlush();  // again while anything is unnamed: this one may fail, or leave a range being loaded
      pools = duePools();
      pools.removeAll(flushing);  // a flush is taking them: it looks again when it is done
      pending = unnamed(pools);
      if (pending.isEmpty()) {
        return;
      }
      flushing.addAll(pools);
    }
    int values = pending.stream().mapToInt(h -> h.values().size()).sum();
    // Nobody waits for the names: they go with the next commit, most often a batch's.
    committer.submitUnhurried("naming the holders of up to " + values + " values handed out",
            e -> handOver(e, pending, pools), flushDelay.toNanos() / 2)
        .whenComplete((named, failure) -> {
          boolean dueMeanwhile;
          synchronized (engine) {
            flushing.removeAll(pools);
            if (failure == null) {
              recordNamed(pending, pools, named);
            }
            // Not after a failure, nor for a range being loaded: the next tick tries again.
            dueMeanwhile = failure == null && named.notLoaded().isEmpty()
                && !Collections.disjoint(duePools(), pools);
          }
          if (failure != null) {
            log.debug("Naming the holders of values handed out failed ({}); trying again",
                Failures.rootMessage(failure));
          } else {
            reportLost(named);
          }
          if (dueMeanwhile) {
            try {
              timer.execute(this::flush);
            } catch (RejectedExecutionException closed) {
              // the store closed: values left unnamed are the reconciler's (see close)
            }
          }
        });
  }

  /** The pools with a value handed out {@code flushDelay} ago or earlier and still unnamed. Call holding the engine's lock. */
  private Set<PoolKey> duePools() {
    long now = System.nanoTime();
    Set<PoolKey> due = new HashSet<>();
    for (HandOut handOut : handedOut.values()) {
      if (now - handOut.at() >= flushDelay.toNanos()) {
        due.addAll(handOut.unnamed());
      }
    }
    return due;
  }

  /** The hand-outs with values of {@code pools} still to be named. Call holding the engine's lock. */
  private List<HandOut> unnamed(Set<PoolKey> pools) {
    List<HandOut> found = new ArrayList<>();
    for (HandOut handOut : handedOut.values()) {
      if (!Collections.disjoint(handOut.unnamed(), pools)) {
        found.add(handOut);
      }
    }
    return found;
  }

  /**
   * After a commit named the values of {@code pools} handed out to {@code pending}: an object whose
   * values are all named leaves {@link #handedOut}. Call holding the engine's lock.
   */
  private void recordNamed(List<HandOut> pending, Set<PoolKey> pools, Named named) {
    for (HandOut handOut : pending) {
      if (!named.notLoaded().contains(handOut)) {
        handOut.unnamed().removeAll(pools);
        if (handOut.unnamed().isEmpty()) {
          handedOut.remove(keyOf(handOut.owner()), handOut);
        }
      }
    }
    metrics.reservedAhead("recorded", named.recorded());
  }

  private void reportLost(Named named) {
    if (!named.lost().isEmpty()) {
      metrics.reservedAhead("lost", named.lost().size());
      log.warn("{} values handed out were no longer reserved when their holders were to be named (freed"
          + " while in use?); the reconciler records what Services carry: {}", named.lost().size(), named.lost());
    }
  }

  /** What one flush did: values named, values no longer reserved nor held by their object, objects left for later. */
  private record Named(int recorded, List<String> lost, Set<HandOut> notLoaded) {
  }

  /** On the committer thread: names the holder of each value of {@code pools}, value by value. */
  private static Named handOver(AllocationEngine e, List<HandOut> pending, Set<PoolKey> pools) {
    int recorded = 0;
    List<String> lost = new ArrayList<>();
    Set<HandOut> notLoaded = new HashSet<>();
    for (HandOut handOut : pending) {
      for (Reserved value : handOut.values()) {
        if (!pools.contains(value.pool())) {
          continue;
        }
        try {
          if (e.handOver(value.pool().kind(), value.text(), value.holder(), handOut.owner())) {
            recorded++;
          } else if (!holderNow(e, value).filter(h -> handOut.owner().isSameObject(h)).isPresent()) {
            lost.add(value.text() + " (" + handOut.owner() + ")");
          }
        } catch (StoreUnavailableException loading) {
          notLoaded.add(handOut);  // its range is being loaded or rebuilt: tried again later
        }
      }
    }
    return new Named(recorded, lost, notLoaded);
  }

  /**
   * Stops handing out and the timer; values handed out and not yet named keep their reservation
   * (the reconciler names the Services that carry them, see the class comment).
   */
  @Override
  public void close() {
    synchronized (engine) {
      closed = true;
      pools.clear();
    }
    timer.shutdownNow();
  }

  private static String keyOf(Holder holder) {
    return holder.kind() + "/" + holder.namespace() + "/" + holder.name();
  }

  // ---- values ------------------------------------------------------------------------------------

  /** A pool: the Service IPs of one family, or the NodePorts. */
  private record PoolKey(RangeKey.Kind kind, IpFamily family) {
    static final PoolKey NODE_PORTS = new PoolKey(RangeKey.Kind.NODE_PORTS, null);
    private static final Map<IpFamily, PoolKey> IPS = new EnumMap<>(IpFamily.class);

    static {
      for (IpFamily family : IpFamily.values()) {
        IPS.put(family, new PoolKey(RangeKey.Kind.SERVICE_IPS, family));
      }
    }

    static PoolKey ips(IpFamily family) {
      return IPS.get(family);
    }

    @Override
    public String toString() {
      return family == null ? "NodePorts" : family + " ClusterIPs";
    }
  }

  /**
   * One value reserved ahead: its holder on record, when it was asked for ({@link System#nanoTime}),
   * and the assignment it makes (an address, or a port).
   */
  private record Reserved(PoolKey pool, Holder holder, long reservedAt, IpAssignment ip, PortAssignment port) {
    Reserved at(long nanos) {
      return new Reserved(pool, holder, nanos, ip, port);
    }

    /** The same address, given from {@code liveRange} (the range that gives it now). */
    Reserved in(Cidr liveRange) {
      return new Reserved(pool, holder, reservedAt, new IpAssignment(ip.address(), liveRange, Scope.DYNAMIC, false),
          port);
    }

    String text() {
      return ip != null ? ip.address().toString() : String.valueOf(port.port());
    }
  }

  /**
   * Values handed to one object, the answer it got (a retry of the same create gets it again),
   * when ({@link System#nanoTime}), and the pools of its values whose holders are not named yet
   * (changed under the engine's lock as batches and flushes name them). Equal only to itself.
   */
  private static final class HandOut {
    private final Holder owner;
    private final List<Reserved> values;
    private final Reservation answer;
    private final long at;
    private final Set<PoolKey> unnamed;

    HandOut(Holder owner, List<Reserved> values, Reservation answer, long at, Set<PoolKey> pools) {
      this.owner = owner;
      this.values = values;
      this.answer = answer;
      this.at = at;
      this.unnamed = new HashSet<>(pools);
    }

    Holder owner() {
      return owner;
    }

    List<Reserved> values() {
      return values;
    }

    Reservation answer() {
      return answer;
    }

    long at() {
      return at;
    }

    Set<PoolKey> unnamed() {
      return unnamed;
    }

    boolean answers(ReservationRequest request) {
      return request.ports().size() == answer.ports().size()
          && request.ips().stream().map(IpClaim::family).toList()
              .equals(answer.ips().stream().map(ip -> ip.address().family()).toList());
    }
  }
}
