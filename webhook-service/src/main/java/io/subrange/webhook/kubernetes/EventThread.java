package io.subrange.webhook.kubernetes;

import io.fabric8.kubernetes.client.KubernetesClientBuilder.ExecutorSupplier;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The task executor of subrange's API clients: one thread, {@code subrange-events-N}, per client.
 *
 * <p>fabric8 runs on this executor what its Vert.x I/O threads hand over: decoding watch events,
 * informer caches and their handlers (each informer and each watch through a serial executor of
 * its own), leader election, watch reconnects. Its default is a cached thread pool, whose queue
 * hands each task to a different parked thread: every serial step of a watch event (decode,
 * watcher, informer handlers) woke a thread and parked one, about ten system calls and five
 * context switches per Service event in the reconciler (docs/performance.md, "Tenth round"). On
 * one thread, a step queued by the step before it is taken without a wake-up; only the hand-over
 * from the I/O thread may wake it.
 *
 * <p>What this asks of what runs here, as fabric8's serial executors already did of each
 * informer: a handler may block on the API (its answer comes on an I/O thread) or on the store's
 * committer, which never waits for an informer; nothing here may wait for another task of this
 * executor. While a handler blocks, the events of every informer of that client wait behind it.
 */
final class EventThread implements ExecutorSupplier {

  private static final AtomicInteger CLIENTS = new AtomicInteger();

  @Override
  public Executor get() {
    String name = "subrange-events-" + CLIENTS.incrementAndGet();
    ThreadPoolExecutor executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
        task -> {
          Thread thread = new Thread(task, name);
          thread.setDaemon(true);
          return thread;
        });
    executor.prestartCoreThread();
    return executor;
  }

  @Override
  public void onClose(Executor executor) {
    ((ExecutorService) executor).shutdownNow();
  }
}
