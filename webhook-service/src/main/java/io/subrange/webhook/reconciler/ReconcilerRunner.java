package io.subrange.webhook.reconciler;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.subrange.allocator.store.AllocationStore;
import io.subrange.webhook.Failures;
import io.subrange.webhook.config.SubrangeProperties;
import io.subrange.webhook.node.NodePodCidrs;
import io.subrange.webhook.ranges.RangeReconciler;
import io.subrange.webhook.store.ConfigMapAllocationStore;
import io.subrange.webhook.store.RebuildableStore;
import java.net.InetAddress;
import java.time.Clock;
import java.util.UUID;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Runs the reconciler where {@code subrange.role} says so ({@code all} or {@code reconciler})
 * and the API is used: watches Services and Nodes at once, and while this process leads (the
 * Lease; with the memory store it always does) rebuilds missing state, keeps range objects'
 * finalizers and status, and compares cluster and store every {@code subrange.reconciler.interval}
 * (see {@link AllocationReconciler#compare}).
 *
 * <p>It starts after the ranges are loaded (RangeSync) and before the web servers, so with the
 * memory store the state is rebuilt from the cluster before the first admission request, and
 * readiness waits for that.
 */
@Component
public class ReconcilerRunner implements SmartLifecycle {

  private static final Logger log = LoggerFactory.getLogger(ReconcilerRunner.class);
  private static final long TICK_MILLIS = 200;

  private final SubrangeProperties properties;
  private final ObjectProvider<KubernetesClient> clients;
  private final ObjectProvider<RebuildableStore> rebuildables;
  private final AllocationStore store;
  private final RangeReconciler ranges;
  private final ReconcilerMetrics metrics;
  private final Semaphore wake = new Semaphore(0);
  private volatile boolean running;
  private volatile boolean leading;
  private ClusterObjects cluster;
  private AllocationReconciler reconciler;
  private Leadership leadership;
  private Thread loop;

  public ReconcilerRunner(SubrangeProperties properties, ObjectProvider<KubernetesClient> clients,
      ObjectProvider<RebuildableStore> rebuildables, AllocationStore store, RangeReconciler ranges,
      MeterRegistry registry) {
    this.properties = properties;
    this.clients = clients;
    this.rebuildables = rebuildables;
    this.store = store;
    this.ranges = ranges;
    this.metrics = new ReconcilerMetrics(registry);
  }

  /** After RangeSync (phase 0), before the web servers. */
  @Override
  public int getPhase() {
    return 1;
  }

  @Override
  public void start() {
    KubernetesClient client = clients.getIfAvailable();
    RebuildableStore rebuildable = rebuildables.getIfAvailable();
    running = true;
    if (!properties.role().reconciles() || client == null || rebuildable == null) {
      return;
    }
    cluster = new ClusterObjects(client);
    reconciler = new AllocationReconciler(store, rebuildable, cluster, new RepairEvents(client), metrics,
        properties.service().nodePortRange(), properties.reconciler().orphanGrace(),
        properties.reconciler().fullComparisonInterval(), Clock.systemUTC(),
        () -> leading, client, NodePodCidrs.primaryFamily(properties));
    cluster.start();
    loop = new Thread(this::loop, "subrange-reconciler");
    loop.setDaemon(true);
    loop.start();
    leadership = properties.store() == SubrangeProperties.StoreKind.MEMORY ? Leadership.alone()
        : Leadership.lease(client, properties.kubernetes().namespaceOr(client.getNamespace()), properties.reconciler().leaseName(), identity(),
            properties.reconciler().leaseDuration());
    leadership.start(() -> {
      reconciler.compareEverythingNext();  // it saw no events while it did not lead
      leading = true;
      metrics.leading(true);
      log.info("This process is the acting reconciler");
      wake.release();
    }, () -> {
      leading = false;
      metrics.leading(false);
      log.info("This process is no longer the acting reconciler");
    });
  }

  /**
   * While leading: rebuilds missing state at once (a new range waits for it; checking is cheap),
   * range objects every {@code subrange.kubernetes.reconcile-interval}, the comparison every
   * {@code subrange.reconciler.interval}.
   */
  private void loop() {
    long nextRanges = System.nanoTime();
    long nextComparison = System.nanoTime();
    while (running) {
      if (leading && cluster.synced()) {
        try {
          reconciler.rebuildMissing();
          long now = System.nanoTime();
          if (now - nextRanges >= 0) {
            ranges.reconcile();
            if (store instanceof ConfigMapAllocationStore stored) {
              stored.deleteStateOfRangesNotServed().get(30, TimeUnit.SECONDS);
            }
            nextRanges = now + properties.kubernetes().reconcileInterval().toNanos();
          }
          if (now - nextComparison >= 0) {
            reconciler.compare();
            nextComparison = System.nanoTime() + properties.reconciler().interval().toNanos();
          }
        } catch (Exception e) {
          metrics.error();
          log.warn("Reconciling failed, will retry: {}", Failures.rootMessage(e));
        }
      }
      try {
        wake.tryAcquire(TICK_MILLIS, TimeUnit.MILLISECONDS);
        wake.drainPermits();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** The pod's name in a cluster (POD_NAME, or the hostname), made unique per process. */
  private static String identity() {
    String name = System.getenv("POD_NAME");
    if (name == null || name.isBlank()) {
      try {
        name = InetAddress.getLocalHost().getHostName();
      } catch (Exception e) {
        name = "subrange";
      }
    }
    return name + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  @Override
  public void stop() {
    running = false;
    if (leadership != null) {
      leadership.close();
    }
    if (loop != null) {
      loop.interrupt();
    }
    if (cluster != null) {
      cluster.close();
    }
    if (reconciler != null) {
      reconciler.close();
    }
  }

  @Override
  public boolean isRunning() {
    return running;
  }
}
