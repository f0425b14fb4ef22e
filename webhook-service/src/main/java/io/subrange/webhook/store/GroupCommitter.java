package io.subrange.webhook.store;

import io.subrange.allocator.band.AnchoredStart;
import io.subrange.allocator.store.AllocationEngine;
import io.subrange.allocator.store.AllocationException;
import io.subrange.allocator.store.RangeKey;
import io.subrange.allocator.store.StoreUnavailableException;
import io.subrange.webhook.Failures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The committer thread of a {@link ConfigMapAllocationStore}: it takes every request waiting at
 * that moment, applies them to the engine, and has the shards they changed written once
 * (<em>group commit</em>, {@link ShardWriter}), so one ConfigMap write carries many allocations
 * and throughput grows with concurrency. A request is answered only once what it was given is
 * stored. When a write loses (409: another replica wrote first) or fails (5xx, timeout, cut
 * connection: it may or may not have landed), it waits a short, jittered, growing pause, reloads
 * the stored state, applies the requests not yet durable again (the same object gets back what it
 * already holds) and writes on what it has just read, until each request's budget runs out; then
 * it answers 503 and has granted nothing. Requests whose shards were all written are answered at
 * once, even when others in the same commit must retry: a shard not written holds back only the
 * requests that changed it ({@link ShardWriter.Attempt#stored}), and the other requests of their
 * objects.
 *
 * <p>Only this thread changes the engine's picture of stored state ({@link StoredShards#refresh})
 * and writes ConfigMaps. Other threads hand it work through its queue: admission threads their
 * requests ({@link #submit}), the informer thread a wake-up when another replica wrote
 * ({@link #wake}), the range informers and the reconciler work to run between commits
 * ({@link #runBetweenCommits}).
 */
final class GroupCommitter {

  private static final Logger log = LoggerFactory.getLogger(GroupCommitter.class);
  private static final int MAX_BATCH = 1024;
  private static final long FIRST_BACKOFF_MILLIS = 5;
  private static final long MAX_BACKOFF_MILLIS = 200;
  /** The failed attempts (of any kind) after which a commit's reads take a turn at the shards it lost. */
  private static final int TAKE_TURN_FROM_ATTEMPT = 2;

  private final AllocationEngine engine;
  private final StoredShards shards;
  private final ShardWriter writer;
  /** Where this replica starts dynamic allocations; null when starts are uniform. */
  private final AnchoredStart anchor;
  private final Duration budget;
  /**
   * How long after it arrived a request may still get a write: its budget less the time one
   * request to the API server may take ({@link ConfigMapAllocationStore#requestTimeout}).
   */
  private final long lastStartNanos;
  private final StoreMetrics metrics;
  /** Objects with changes applied to the engine and not yet stored (guarded by the engine's lock). */
  private final Set<String> unstoredHolders = new HashSet<>();
  private final LinkedBlockingQueue<Task> queue = new LinkedBlockingQueue<>();
  /** Tasks taken from the queue during a commit, to run after it (committer thread only). */
  private final List<Control> deferred = new ArrayList<>();
  /** How long a request waits for others to share its write ({@link #lingerForCompany}); 0: none. */
  private volatile long lingerNanos;
  /** As {@link #lingerNanos}, for releases ({@link #submitRelease}), when longer. */
  private volatile long releaseLingerNanos;
  private final Thread thread;
  private volatile boolean running;

  /**
   * @param anchor the engine's start strategy, moved after a write lost to another replica so
   *     replicas spread over a range's shards; null when starts are uniform
   * @param budget how long a request may wait for its write before it is answered 503
   */
  GroupCommitter(AllocationEngine engine, StoredShards shards, ShardWriter writer, AnchoredStart anchor,
      Duration budget, StoreMetrics metrics) {
    this.engine = engine;
    this.shards = shards;
    this.writer = writer;
    this.anchor = anchor;
    this.budget = budget;
    this.lastStartNanos = budget.minus(ConfigMapAllocationStore.requestTimeout(budget)).toNanos();
    this.metrics = metrics;
    this.thread = new Thread(this::commitLoop, "subrange-store-committer");
    this.thread.setDaemon(true);
  }

  // ---- lifecycle ----------------------------------------------------------------------------

  /** From now on requests are queued, not refused; they wait for {@link #start}. */
  void acceptRequests() {
    running = true;
  }

  /**
   * Lets a request wait up to {@code linger} after it arrived for other requests to share its
   * write: fewer, fuller writes (each write costs the API server, etcd and every replica's watch
   * as much as the allocations in it), for at most that much more latency per request. A request
   * that already waited that long behind a commit in flight goes at once.
   */
  void lingerBeforeCommit(Duration linger) {
    lingerNanos = linger.toNanos();
  }

  /**
   * Lets a release wait up to {@code linger} after it arrived for others to share its write, when
   * that is longer than {@link #lingerBeforeCommit}. Nobody waits for a release as for an
   * allocation (the reconciler frees what a deleted Service held), yet each of its writes costs as
   * much as an allocation's: a burst of deletes released as they come wrote more than one
   * ConfigMap per delete. A release leaves with the first commit that must go earlier (a request
   * that may not wait that long); work between commits taken meanwhile waits with it. At most half
   * of the time a request may still get a write is spent so, leaving the rest for its attempts.
   */
  void lingerReleases(Duration linger) {
    releaseLingerNanos = linger.toNanos();
  }

  /** Starts the committer thread. */
  void start() {
    thread.start();
  }

  /** Whether requests are taken (from {@link #acceptRequests} until {@link #stop}). */
  boolean running() {
    return running;
  }

  /** Stops the committer thread, and answers whatever is still queued: nothing of it was stored. */
  void stop() {
    running = false;
    thread.interrupt();
    try {
      thread.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (Task task : queue) {
      task.fail(shuttingDown());
    }
  }

  private static StoreUnavailableException shuttingDown() {
    return new StoreUnavailableException("subrange is shutting down, so nothing was allocated; retry shortly");
  }

  // ---- work from other threads --------------------------------------------------------------

  /**
   * Queues a request that changes state; its answer comes once its changes are stored (or it is
   * refused, or its budget runs out: 503). Called on admission threads, and by the reconciler.
   *
   * @param what the request, as 503 messages and the log name it
   * @param holderKey the object whose values it changes (see {@link #hasUnstoredChanges}); null
   *     for releases and adoptions
   * @param action the request, applied to the engine (under its lock); what it throws refuses it
   */
  <T> CompletableFuture<T> submit(String what, String holderKey, Function<AllocationEngine, T> action) {
    return submit(what, holderKey, action, System.nanoTime());
  }

  /**
   * As {@link #submit(String, String, Function)}, for a request that arrived earlier ({@link
   * System#nanoTime}) and waited elsewhere first: its budget counts from then.
   */
  <T> CompletableFuture<T> submit(String what, String holderKey, Function<AllocationEngine, T> action,
      long arrivedNanos) {
    return enqueue(new Mutation<>(what, holderKey, action, arrivedNanos, lingerNanos, metrics));
  }

  /**
   * As {@link #submit(String, String, Function)}, for a release: it may wait longer for company
   * ({@link #lingerReleases}).
   */
  <T> CompletableFuture<T> submitRelease(String what, Function<AllocationEngine, T> action) {
    return submitUnhurried(what, action, releaseLingerNanos);
  }

  /**
   * As {@link #submit(String, String, Function)}, for work nobody waits for (releases, naming the
   * holders of values reserved ahead): it may wait up to {@code mayWaitNanos} after it arrived for
   * a commit that must go earlier, and goes with it; at most half of the time a request may still
   * get a write, so it keeps the rest for its attempts.
   */
  <T> CompletableFuture<T> submitUnhurried(String what, Function<AllocationEngine, T> action, long mayWaitNanos) {
    long linger = Math.max(lingerNanos, Math.min(mayWaitNanos, lastStartNanos / 2));
    return enqueue(new Mutation<>(what, null, action, System.nanoTime(), linger, metrics));
  }

  private <T> CompletableFuture<T> enqueue(Mutation<T> mutation) {
    if (!running) {
      mutation.fail(new StoreUnavailableException("subrange's store is not running, so nothing was allocated;"
          + " retry shortly"));
    } else {
      queue.add(mutation);
    }
    return mutation.result;
  }

  /**
   * Queues work to run on the committer thread between commits (loading a new range, installing
   * a rebuilt state); the stored state is loaded again after it.
   *
   * @return done once it ran; failed with what it threw, or when the store closed first
   */
  CompletableFuture<Void> runBetweenCommits(Runnable work) {
    Control control = new Control(work);
    if (!running) {
      control.fail(new StoreUnavailableException("subrange's store is not running, so it did not load or write"
          + " anything; retry shortly"));
    } else {
      queue.add(control);
    }
    return control.done;
  }

  /** Has the committer load what changed before its next commit, even when no request is waiting. */
  void wake() {
    queue.add(new Control(() -> { }));
  }

  /**
   * Whether an object has changes applied to the engine and not yet stored: its values do not count
   * as held. Call holding the engine's lock.
   */
  boolean hasUnstoredChanges(String holderKey) {
    return unstoredHolders.contains(holderKey);
  }

  // ---- the committer thread -----------------------------------------------------------------

  private void commitLoop() {
    while (running) {
      try {
        List<Mutation<?>> batch = takeWork();
        if (!batch.isEmpty()) {
          commitOrFail(batch);
          runDeferred();
        }
      } catch (InterruptedException e) {
        // stop() answers what is still queued; work taken during the interrupted commit is ours.
        deferred.forEach(control -> control.fail(shuttingDown()));
        deferred.clear();
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException e) {
        log.error("The store's committer failed; it carries on", e);
      }
    }
  }

  /**
   * Waits up to a second for work and takes whatever else is waiting. Loads what changed, runs
   * the work between commits among it (loading again after each), and returns the requests.
   */
  private List<Mutation<?>> takeWork() throws InterruptedException {
    Task first = queue.poll(1, TimeUnit.SECONDS);
    List<Task> tasks = new ArrayList<>();
    if (first != null) {
      tasks.add(first);
      queue.drainTo(tasks, MAX_BATCH - 1);
      try {
        lingerForCompany(tasks);
      } catch (InterruptedException e) {
        // stop() answers what is still queued; these were taken from the queue already.
        tasks.forEach(task -> task.fail(shuttingDown()));
        throw e;
      }
    }
    List<Mutation<?>> batch = new ArrayList<>();
    try {
      shards.refresh(engine);
      for (Task task : tasks) {
        if (task instanceof Control control) {
          control.run();
          shards.refresh(engine);
        } else {
          batch.add((Mutation<?>) task);
        }
      }
    } catch (RuntimeException e) {
      // Taken off the queue, so nobody else answers them: a waiting caller would wait for good.
      // Work that ran already is answered; this changes nothing for it.
      StoreUnavailableException unavailable = new StoreUnavailableException("subrange could not load the stored"
          + " state (" + Failures.rootMessage(e) + "), so nothing was allocated; retry shortly", e);
      tasks.forEach(task -> task.fail(unavailable));
      throw e;
    }
    return batch;
  }

  /**
   * Takes what arrives until the first of the requests taken must go: each goes its linger after it
   * arrived (or when the batch is full). Work between commits waits with them; alone, it does not.
   */
  private void lingerForCompany(List<Task> tasks) throws InterruptedException {
    int requests = 0;
    long deadline = 0;  // set by the first request taken, then only ever earlier
    for (int seen = 0; ; ) {
      for (; seen < tasks.size(); seen++) {
        if (tasks.get(seen) instanceof Mutation<?> request
            && (requests++ == 0 || request.arrived + request.lingerNanos - deadline < 0)) {
          deadline = request.arrived + request.lingerNanos;
        }
      }
      long left = deadline - System.nanoTime();
      if (requests == 0 || left <= 0 || tasks.size() >= MAX_BATCH) {
        return;
      }
      Task next = queue.poll(left, TimeUnit.NANOSECONDS);
      if (next == null) {
        return;
      }
      tasks.add(next);
      queue.drainTo(tasks, MAX_BATCH - tasks.size());
    }
  }

  /** Commits a batch; what is not stored by the end (after an error, or at shutdown) is answered 503. */
  private void commitOrFail(List<Mutation<?>> pending) throws InterruptedException {
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
  }

  /** Runs the work that arrived during the commit, then loads what it and the commit changed. */
  private void runDeferred() {
    for (Control control : List.copyOf(deferred)) {
      control.run();
    }
    deferred.clear();
    shards.refresh(engine);
  }

  /**
   * Makes a batch durable: apply, write what changed, answer what is stored; reload and go again
   * for the rest, until each request's budget is spent. Requests leave {@code pending} as they
   * are answered.
   */
  private void commit(List<Mutation<?>> pending) throws InterruptedException {
    Batch batch = new Batch(pending);
    while (!pending.isEmpty()) {
      expire(batch);
      if (pending.isEmpty()) {
        break;
      }
      ShardWriter.Attempt attempt = applyAndExport(pending);
      writer.write(attempt);
      batch.wrote(attempt);
      answerStored(batch, attempt);
      if (pending.isEmpty()) {
        break;
      }
      prepareRetry(batch, attempt);
    }
    if (batch.requestsStored > 0) {
      metrics.commit(batch.requestsStored, batch.writesAlone, batch.writesDone);
      log.debug("Committed {} requests in {} writes ({} attempts), first: {}", batch.requestsStored, batch.writesDone,
          batch.attempt + 1, batch.first.what);
    }
  }

  /** A batch's progress through its attempts: what the commit loop carries from one attempt to the next. */
  private static final class Batch {
    /** The requests not answered yet. */
    final List<Mutation<?>> pending;
    /** The first request, which the log names. */
    final Mutation<?> first;
    /** The attempt under way, counting from 0 (so also how many were made before it). */
    int attempt;
    /** Why the last shard that was not written was not; said in 503s. */
    String trouble;
    /** Requests answered as stored, the ranges they wrote (summed), and the writes that stored them. */
    int requestsStored;
    int writesAlone;
    int writesDone;

    Batch(List<Mutation<?>> pending) {
      this.pending = pending;
      this.first = pending.get(0);
    }

    void wrote(ShardWriter.Attempt attempt) {
      writesDone += attempt.written();
      if (attempt.trouble() != null) {
        trouble = attempt.trouble();
      }
    }
  }

  /**
   * Answers 503 for requests with too little budget left for another write (one may take up to
   * {@link ConfigMapAllocationStore#requestTimeout}); they were not granted (their changes are not
   * stored).
   */
  private void expire(Batch batch) {
    long now = System.nanoTime();
    for (Iterator<Mutation<?>> it = batch.pending.iterator(); it.hasNext();) {
      Mutation<?> mutation = it.next();
      if (now - mutation.arrived > lastStartNanos) {
        mutation.fail(new StoreUnavailableException("subrange could not store " + mutation.what + " within "
            + budget.toMillis() + " ms (" + mutation.whereTheTimeWent(batch.trouble, now) + "), so nothing was"
            + " allocated; retry shortly"));
        it.remove();
      }
    }
  }

  /**
   * Applies the pending requests to the engine (answering, and dropping, those it refuses) and
   * exports the shards their changes touch: under one hold of the engine's lock, so what is
   * written is exactly what was applied.
   */
  private ShardWriter.Attempt applyAndExport(List<Mutation<?>> pending) {
    ShardWriter.Attempt attempt = writer.newAttempt();
    synchronized (engine) {
      engine.drainChanged();
      for (Iterator<Mutation<?>> it = pending.iterator(); it.hasNext();) {
        Mutation<?> mutation = it.next();
        if (mutation.holderKey != null) {
          unstoredHolders.add(mutation.holderKey);
        }
        mutation.attempts++;
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
          attempt.include(key, offsets.get(key));
        }
      }
    }
    return attempt;
  }

  /**
   * Answers the requests whose changes the attempt stored, unless a request of the same object
   * still waits; the rest stay pending. Requests of one object go together: a later one may answer
   * with a value an earlier one took (it changed nothing there itself), in a shard that was not
   * written, and the earlier one, applied again, may get another value.
   */
  private void answerStored(Batch batch, ShardWriter.Attempt attempt) {
    Set<Mutation<?>> notStored = new HashSet<>();
    Set<String> objectsWaiting = new HashSet<>();  // never null: releases have no holder key
    for (Mutation<?> mutation : batch.pending) {
      if (!attempt.stored(mutation.keys, mutation.offsets)) {
        notStored.add(mutation);
        if (mutation.holderKey != null) {
          objectsWaiting.add(mutation.holderKey);
        }
      }
    }
    List<Mutation<?>> stored = new ArrayList<>();
    for (Iterator<Mutation<?>> it = batch.pending.iterator(); it.hasNext();) {
      Mutation<?> mutation = it.next();
      if (!notStored.contains(mutation) && !objectsWaiting.contains(mutation.holderKey)) {
        stored.add(mutation);
        it.remove();
      }
    }
    synchronized (engine) {
      // Before answering: the validating webhook follows at once and may take the fast path.
      unstoredHolders.clear();
      batch.pending.forEach(m -> {
        if (m.holderKey != null) {
          unstoredHolders.add(m.holderKey);
        }
      });
    }
    for (Mutation<?> mutation : stored) {
      batch.requestsStored++;
      batch.writesAlone += mutation.keys.size();
      mutation.succeed();
    }
  }

  /**
   * Gets the requests still pending ready for another attempt: backs off, reads back and loads the
   * shards that were not written, and takes in requests that arrived meanwhile.
   */
  private void prepareRetry(Batch batch, ShardWriter.Attempt attempt) throws InterruptedException {
    if (attempt.lostToAnother() && anchor != null) {
      anchor.reanchor();  // another replica allocates where this one did: move elsewhere
    }
    // Back off first, then read: a shard another replica keeps writing has moved on during the
    // pause, and a retry must compare-and-swap on the version it has just seen, or it loses again.
    // Against a replica that writes the shard on and on, even that loses most races (it writes on
    // the version its last write returned, with no read in between), so after the second failed
    // attempt the read of a shard lost to another writer takes a turn: it makes the other writer's
    // next write lose, unless that writer's watch is quicker.
    pause(batch.attempt++, batch.pending);  // batch.attempt now counts the failed attempts
    writer.readBack(attempt, batch.attempt >= TAKE_TURN_FROM_ATTEMPT);
    shards.refresh(engine);
    joinArrivals(batch.pending);
  }

  private void pause(int attempt, List<Mutation<?>> pending) throws InterruptedException {
    long cap = Math.min(MAX_BACKOFF_MILLIS, FIRST_BACKOFF_MILLIS << Math.min(attempt, 10));
    long sleep = ThreadLocalRandom.current().nextLong(cap / 2, cap + 1);
    long earliestLastStart = pending.stream().mapToLong(m -> m.arrived + lastStartNanos).min().orElse(0);
    long left = TimeUnit.NANOSECONDS.toMillis(earliestLastStart - System.nanoTime());
    Thread.sleep(Math.max(0, Math.min(sleep, left)));
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

  // ---- tasks ----------------------------------------------------------------------------------

  private sealed interface Task permits Mutation, Control {
    void fail(Throwable cause);
  }

  /** A request that changes state: applied to the engine, answered once its shards are stored. */
  private static final class Mutation<T> implements Task {
    final String what;
    final String holderKey;
    final Function<AllocationEngine, T> action;
    final long arrived;
    /** How long after it arrived it may wait for others to share its write. */
    final long lingerNanos;
    /** When it reached the committer's queue ({@link System#nanoTime}); after arrived if it waited elsewhere first. */
    final long queued = System.nanoTime();
    final CompletableFuture<T> result = new CompletableFuture<>();
    private final StoreMetrics metrics;
    /** How many attempts applied it; a request that joined a commit being retried has fewer than the commit. */
    int attempts;
    /** The ranges this request changed when last applied, and which of their offsets. */
    Set<RangeKey> keys = Set.of();
    Map<RangeKey, Set<Long>> offsets = Map.of();
    T value;

    Mutation(String what, String holderKey, Function<AllocationEngine, T> action,
        long arrived, long lingerNanos, StoreMetrics metrics) {
      this.what = what;
      this.holderKey = holderKey;
      this.action = action;
      this.arrived = arrived;
      this.lingerNanos = lingerNanos;
      this.metrics = metrics;
    }

    /** Applies to the engine (under its lock); the refusal when the engine refused. */
    Throwable apply(AllocationEngine engine) {
      T outcome;
      try {
        outcome = action.apply(engine);
      } catch (RuntimeException e) {
        offsets = engine.drainChangedOffsets();
        keys = engine.drainChanged();
        return e;
      }
      offsets = engine.drainChangedOffsets();
      keys = engine.drainChanged();
      value = outcome;
      return null;
    }

    /**
     * For a 503: how many attempts it had and the last trouble its commit met (a shard of its
     * range, or of another in the same commit); or, when it had none, how long it waited before
     * it reached the queue (for values reserved ahead) and in it (behind the commits before it),
     * so the log tells a slow API server from a busy committer.
     */
    String whereTheTimeWent(String lastTrouble, long now) {
      if (attempts > 0) {
        return attempts + (attempts == 1 ? " attempt" : " attempts") + "; last: " + lastTrouble;
      }
      return "no write was attempted: it reached the store's queue " + (queued - arrived) / 1_000_000
          + " ms after it arrived and waited " + (now - queued) / 1_000_000
          + " ms there behind earlier writes and loads";
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
}
