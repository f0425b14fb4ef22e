package io.subrange.webhook.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.subrange.allocator.band.ThreadLocalRandomGenerator;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.port.PortRange;
import io.subrange.allocator.store.AllocationEngine;
import io.subrange.allocator.store.Holder;
import io.subrange.allocator.store.InMemoryAllocationStore;
import io.subrange.allocator.store.RangeKey;
import io.subrange.allocator.store.RangeState;
import io.subrange.webhook.config.SubrangeProperties;
import io.subrange.webhook.config.SubrangeProperties.Role;
import io.subrange.webhook.config.SubrangeProperties.StoreKind;
import io.subrange.webhook.metrics.AllocatorMetrics;
import io.subrange.webhook.metrics.PodCidrMetrics;
import io.subrange.webhook.ranges.RangeReconciler;
import io.subrange.webhook.ranges.RangeSync;
import io.subrange.webhook.store.InProcessStateRebuild;
import io.subrange.webhook.store.RebuildableStore;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;

/**
 * What the runner promises, against fabric8's mock API server in CRUD mode: passes run only where
 * the role reconciles and the API is used, and only while this process leads (from the start with
 * the memory store; with the Lease, only while it holds it); a failing pass does not stop the
 * next; stop ends the loop and gives the Lease back.
 *
 * <p>The runner is built by hand as Spring would wire it (no application context), over the
 * memory store's rebuild, counted: every pass first asks it which ranges to rebuild, so its asks
 * count passes, and it can be made to fail.
 */
@EnableKubernetesMockClient(crud = true)
class ReconcilerRunnerTest {

  private static final String NS = "subrange-system";
  private static final String LEASE = "subrange-reconciler";
  private static final PortRange PORTS = PortRange.parse("30000-32767");
  private static final Duration WAIT = Duration.ofSeconds(10);
  /** Five of the runner's ticks (200 ms): a loop still running would show in it. */
  private static final Duration QUIET = Duration.ofSeconds(1);

  KubernetesClient client;

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private InMemoryAllocationStore store;
  private CountingRebuild rebuild;
  private ReconcilerRunner runner;

  @BeforeEach
  void ranges() {
    store = new InMemoryAllocationStore(PORTS, ThreadLocalRandomGenerator.INSTANCE);
    store.addServiceRange("kubernetes", Cidr.parse("10.96.0.0/24"));
    rebuild = new CountingRebuild(store.engine());
  }

  @AfterEach
  void stopRunner() {
    if (runner != null) {
      runner.stop();
    }
  }

  @Test
  void withTheMemoryStoreItLeadsAtOnceAndRebuildsTheStateFromTheCluster() {
    service("default", "web", "10.96.0.10", 30010);
    runner = runner(properties(Role.ALL, StoreKind.MEMORY), client);
    runner.start();

    assertThat(runner.isRunning()).isTrue();
    assertThat(leader()).as("leads from the start").isEqualTo(1.0);
    await().atMost(WAIT).until(rebuild::loadedOnce);
    assertThat(store.holderOf(IpAddress.parse("10.96.0.10"))).get().extracting(Holder::name).isEqualTo("web");
    assertThat(store.holderOfNodePort(30010)).get().extracting(Holder::name).isEqualTo("web");

    // A range added later is rebuilt on one of the next ticks, not after the comparison interval (10 s).
    store.addServiceRange("second", Cidr.parse("10.97.0.0/24"));
    assertThat(store.engine().unknownRanges()).isNotEmpty();
    await().atMost(Duration.ofSeconds(3)).until(() -> store.engine().unknownRanges().isEmpty());
  }

  @Test
  void aProcessInTheWebhookRoleNeverReconciles() {
    runner = runner(properties(Role.WEBHOOK, StoreKind.KUBERNETES), client);
    runner.start();

    assertThat(runner.isRunning()).isTrue();
    await().during(QUIET).atMost(WAIT).until(() -> rebuild.asks() == 0);
    assertThat(rebuild.loadedOnce()).isFalse();
    assertThat(leader()).isZero();
    assertThat(client.leases().inNamespace(NS).withName(LEASE).get()).as("no Lease taken").isNull();
  }

  @Test
  void withoutTheApiNothingIsReconciled() {
    runner = runner(properties(Role.ALL, StoreKind.MEMORY), null);
    runner.start();

    assertThat(runner.isRunning()).isTrue();
    await().during(QUIET).atMost(WAIT).until(() -> rebuild.asks() == 0);
    assertThat(rebuild.loadedOnce()).isFalse();
    assertThat(leader()).isZero();
  }

  @Test
  void aFailingPassDoesNotStopTheNext() {
    rebuild.failNext(2);
    runner = runner(properties(Role.ALL, StoreKind.MEMORY), client);
    runner.start();

    await().atMost(WAIT).until(rebuild::loadedOnce);
    assertThat(rebuild.asks()).as("two failed passes, then one that rebuilt").isGreaterThanOrEqualTo(3);
    assertThat(errors()).as("each failed pass counted").isEqualTo(2.0);
    int asked = rebuild.asks();
    await().atMost(WAIT).until(() -> rebuild.asks() > asked);
    assertThat(runner.isRunning()).isTrue();
  }

  @Test
  void passesRunOnlyWhileThisProcessHoldsTheLease() {
    client.leases().inNamespace(NS).resource(new LeaseBuilder()
        .withNewMetadata().withName(LEASE).withNamespace(NS).endMetadata()
        .withNewSpec().withHolderIdentity("other").withLeaseDurationSeconds(3600).withLeaseTransitions(0)
        .withAcquireTime(ZonedDateTime.now()).withRenewTime(ZonedDateTime.now().plusHours(1)).endSpec()
        .build()).create();
    runner = runner(properties(Role.RECONCILER, StoreKind.KUBERNETES), client);
    runner.start();

    // Another holds the Lease: no pass runs.
    await().during(QUIET).atMost(WAIT).until(() -> rebuild.asks() == 0);
    assertThat(leader()).isZero();
    assertThat(rebuild.loadedOnce()).isFalse();

    // The Lease is free: this process takes it, and passes run.
    client.leases().inNamespace(NS).withName(LEASE).delete();
    await().atMost(WAIT).until(() -> leader() == 1.0);
    await().atMost(WAIT).until(rebuild::loadedOnce);
    assertThat(leaseHolder()).isNotEmpty().isNotEqualTo("other");

    // Another takes it over: passes stop (one under way as the lead is lost may still finish).
    // Retried: a renewal between the edit's read and its write makes it a conflict.
    await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> client.leases().inNamespace(NS).withName(LEASE)
        .edit(lease -> {
          lease.getSpec().setHolderIdentity("other");
          lease.getSpec().setRenewTime(ZonedDateTime.now().plusHours(1));
          return lease;
        }));
    await().atMost(WAIT).until(() -> leader() == 0.0);
    int asked = rebuild.asks();
    await().during(QUIET).atMost(WAIT).until(() -> rebuild.asks() <= asked + 1);
    assertThat(runner.isRunning()).isTrue();
  }

  @Test
  void stopEndsTheLoopAndItsPasses() {
    runner = runner(properties(Role.RECONCILER, StoreKind.KUBERNETES), client);
    runner.start();
    await().atMost(WAIT).until(() -> leader() == 1.0 && rebuild.asks() > 0);
    assertThat(leaseHolder()).isNotEmpty();

    runner.stop();

    assertThat(runner.isRunning()).isFalse();
    // That the Lease is handed back is LeadershipIT's (closingReleasesTheLeaseForTheNext: the next
    // process leads long before the Lease would expire); fabric8's release need not clear the
    // holder's name, so it is not asserted here.
    await().atMost(WAIT).until(() -> leader() == 0.0);
    int asked = rebuild.asks();
    await().during(QUIET).atMost(WAIT).until(() -> rebuild.asks() <= asked + 1);
  }

  // ---- helpers ------------------------------------------------------------------------------

  private ReconcilerRunner runner(SubrangeProperties properties, KubernetesClient kubernetes) {
    DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
    if (kubernetes != null) {
      beans.registerSingleton("client", kubernetes);
    }
    beans.registerSingleton("rebuildable", rebuild);
    ObjectProvider<KubernetesClient> clients = beans.getBeanProvider(KubernetesClient.class);
    SimpleMeterRegistry rangeMetrics = new SimpleMeterRegistry();
    RangeSync sync = new RangeSync(store, properties, clients, new AllocatorMetrics(rangeMetrics, store),
        new PodCidrMetrics(rangeMetrics, store));
    return new ReconcilerRunner(properties, clients, beans.getBeanProvider(RebuildableStore.class), store,
        new RangeReconciler(sync, store, properties, clients), registry);
  }

  /** Short Lease times, so that taking over and losing the lead take well under a second. */
  private static SubrangeProperties properties(Role role, StoreKind storeKind) {
    return new SubrangeProperties(
        new SubrangeProperties.Service(List.of(Cidr.parse("10.96.0.0/24")), PORTS, 100),
        new SubrangeProperties.Pod(List.of(), 24, 64),
        storeKind,
        role,
        new SubrangeProperties.Admission(Duration.ofSeconds(4), 64, Duration.ofSeconds(10), true, 1, 1000),
        new SubrangeProperties.Tls("/etc/subrange/tls", ""),
        new SubrangeProperties.Kubernetes(true, Duration.ofSeconds(5), Duration.ofSeconds(5), NS, Duration.ZERO, 0,
            Duration.ofMillis(500)),
        new SubrangeProperties.Reconciler(Duration.ofSeconds(60), Duration.ofSeconds(10), Duration.ofMinutes(3), LEASE,
            Duration.ofSeconds(1), Duration.ofMillis(500)));
  }

  private double leader() {
    return registry.get("subrange.reconciler.leader").gauge().value();
  }

  private double errors() {
    return registry.get("subrange.reconciler.errors").counter().count();
  }

  /** Who holds the Lease; empty when nobody does (or there is none). */
  private String leaseHolder() {
    Lease lease = client.leases().inNamespace(NS).withName(LEASE).get();
    String holder = lease == null || lease.getSpec() == null ? null : lease.getSpec().getHolderIdentity();
    return holder == null ? "" : holder;
  }

  private void service(String namespace, String name, String clusterIp, Integer nodePort) {
    TestServices.create(client, namespace, name, clusterIp, nodePort);
  }


  /** The memory store's rebuild, counting how often a pass asks what to rebuild; asks can be made to fail. */
  private static final class CountingRebuild implements RebuildableStore {

    private final InProcessStateRebuild delegate;
    private final AtomicInteger asks = new AtomicInteger();
    private final AtomicInteger failuresLeft = new AtomicInteger();

    CountingRebuild(AllocationEngine engine) {
      this.delegate = new InProcessStateRebuild(engine);
    }

    /** The next {@code times} asks fail, as when the store cannot be reached. */
    void failNext(int times) {
      failuresLeft.set(times);
    }

    int asks() {
      return asks.get();
    }

    @Override
    public Map<RangeKey, String> rangesToRebuild() {
      asks.incrementAndGet();
      if (failuresLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        throw new IllegalStateException("the store cannot be reached (a test failure)");
      }
      return delegate.rangesToRebuild();
    }

    @Override
    public AllocationEngine emptyCopyOf(RangeKey key) {
      return delegate.emptyCopyOf(key);
    }

    @Override
    public CompletableFuture<Void> install(RangeState state) {
      return delegate.install(state);
    }

    @Override
    public boolean loadedOnce() {
      return delegate.loadedOnce();
    }
  }
}
