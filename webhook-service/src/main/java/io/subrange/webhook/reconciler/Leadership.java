package io.subrange.webhook.reconciler;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElector;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Which reconciler acts: the holder of a Lease, or the only one there is. */
abstract class Leadership implements AutoCloseable {

  /** Starts taking part; the callbacks run as this process gains and loses the lead. */
  abstract void start(Runnable onStartLeading, Runnable onStopLeading);

  @Override
  public abstract void close();

  /** For a store no other process shares (memory): this process leads from the start. */
  static Leadership alone() {
    return new Leadership() {
      @Override
      void start(Runnable onStartLeading, Runnable onStopLeading) {
        onStartLeading.run();
      }

      @Override
      public void close() {
      }
    };
  }

  /**
   * A {@code coordination.k8s.io/v1} Lease in subrange's namespace: one holder acts, the others
   * wait and take over when it stops renewing. A process that loses the lead stops acting and
   * tries again.
   */
  static Leadership lease(KubernetesClient client, String namespace, String name, String identity, Duration duration) {
    return new LeaseLeadership(client, namespace, name, identity, duration);
  }

  private static final class LeaseLeadership extends Leadership {

    private static final Logger log = LoggerFactory.getLogger(LeaseLeadership.class);

    private final KubernetesClient client;
    private final String namespace;
    private final String name;
    private final String identity;
    private final Duration duration;
    private final ExecutorService executor = Executors.newCachedThreadPool(r -> {
      Thread thread = new Thread(r, "subrange-leader-election");
      thread.setDaemon(true);
      return thread;
    });
    private volatile boolean running = true;
    private volatile CompletableFuture<?> election;

    LeaseLeadership(KubernetesClient client, String namespace, String name, String identity, Duration duration) {
      this.client = client;
      this.namespace = namespace;
      this.name = name;
      this.identity = identity;
      this.duration = duration;
    }

    @Override
    void start(Runnable onStartLeading, Runnable onStopLeading) {
      executor.execute(() -> {
        while (running) {
          try {
            // A LeaderElector runs once: after it stops (the lead lost, the API unreachable)
            // taking part again needs a new one.
            election = elector(onStartLeading, onStopLeading).start();
            election.join();
          } catch (RuntimeException e) {
            if (running) {
              log.warn("Leader election for Lease {}/{} stopped ({}); taking part again", namespace, name,
                  e.getMessage());
            }
          }
          sleep(duration.dividedBy(5));
        }
      });
    }

    private LeaderElector elector(Runnable onStartLeading, Runnable onStopLeading) {
      return client.leaderElector().withConfig(new LeaderElectionConfigBuilder()
          .withName(name)
          .withLock(new LeaseLock(namespace, name, identity))
          .withLeaseDuration(duration)
          .withRenewDeadline(duration.multipliedBy(2).dividedBy(3))
          .withRetryPeriod(duration.dividedBy(5))
          .withReleaseOnCancel(true)
          .withLeaderCallbacks(new LeaderCallbacks(onStartLeading, onStopLeading,
              leader -> log.info("Reconciler leader is {}", leader)))
          .build()).build();
    }

    @Override
    public void close() {
      running = false;
      CompletableFuture<?> current = election;
      if (current != null) {
        current.cancel(true);  // releases the Lease (releaseOnCancel) so another takes over at once
      }
      executor.shutdown();
      try {
        executor.awaitTermination(2, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    private void sleep(Duration pause) {
      try {
        Thread.sleep(pause.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        running = false;
      }
    }
  }
}
