package io.subrange.webhook.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.subrange.allocator.band.ThreadLocalRandomGenerator;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.podcidr.ClusterCidr;
import io.subrange.allocator.port.PortRange;
import io.subrange.allocator.store.AllocationStore;
import io.subrange.allocator.store.Holder;
import io.subrange.allocator.store.InMemoryAllocationStore;
import io.subrange.allocator.store.IpClaim;
import io.subrange.allocator.store.PortClaim;
import io.subrange.allocator.store.RangeKey;
import io.subrange.allocator.store.ReservationRequest;
import io.subrange.webhook.store.InProcessStateRebuild;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The reconciler's rules, quickly, against fabric8's mock API server in CRUD mode, which (unlike
 * a real API server) lets two Services carry one ClusterIP; the real-server paths are covered by
 * the end-to-end tests.
 */
@EnableKubernetesMockClient(crud = true)
class AllocationReconcilerTest {

  private static final PortRange PORTS = PortRange.parse("30000-32767");

  KubernetesClient client;

  private final MovableClock clock = new MovableClock(Instant.parse("2026-01-01T00:00:00Z"));
  private final ReconcilerMetrics metrics = ReconcilerMetrics.unregistered();
  private InMemoryAllocationStore store;
  private InProcessStateRebuild rebuildable;
  private ClusterObjects cluster;
  private AllocationReconciler reconciler;

  @BeforeEach
  void start() {
    store = new InMemoryAllocationStore(PORTS, ThreadLocalRandomGenerator.INSTANCE, clock);
    store.addServiceRange("kubernetes", Cidr.parse("10.96.0.0/24"));
    store.addClusterCidr(ClusterCidr.ipv4("pods", null, 8, "10.244.0.0/16"));
    rebuildable = new InProcessStateRebuild(store.engine());
    cluster = new ClusterObjects(client);
    reconciler = new AllocationReconciler(store, rebuildable, cluster, new RepairEvents(client), metrics, PORTS,
        Duration.ofSeconds(60), Duration.ofMinutes(3), clock, () -> true, client, IpFamily.IPV4);
  }

  @AfterEach
  void stop() {
    cluster.close();
  }

  private void startWatching() {
    cluster.start();
    await().atMost(Duration.ofSeconds(10)).until(cluster::synced);
  }

  @Test
  void aStoreThatLostItsStateIsRebuiltFromTheCluster() {
    service("default", "web", "10.96.0.10", 30010);
    service("default", "api", "10.96.0.11", null);
    client.nodes().resource(new NodeBuilder().withNewMetadata().withName("n1").endMetadata()
        .withNewSpec().withPodCIDR("10.244.3.0/24").withPodCIDRs("10.244.3.0/24").endSpec().build()).create();
    startWatching();
    assertThat(rebuildable.loadedOnce()).isFalse();

    assertThat(reconciler.rebuildMissing()).as("Service range, NodePorts, ClusterCIDR").isEqualTo(3);
    assertThat(rebuildable.loadedOnce()).isTrue();
    assertThat(store.holderOf(IpAddress.parse("10.96.0.10"))).get().extracting(Holder::name).isEqualTo("web");
    assertThat(store.holderOfNodePort(30010)).get().extracting(Holder::name).isEqualTo("web");
    assertThat(store.allocations()).anySatisfy(a -> assertThat(a.value()).isEqualTo("10.244.3.0/24"));
    assertThat(reconciler.rebuildMissing()).as("nothing left to rebuild").isZero();
  }

  @Test
  void valuesObjectsCarryAreRecordedAndProblemsReportedAsEvents() {
    startWatching();
    reconciler.rebuildMissing();
    // Created in the same second: the older keeps a value; ties go by namespace, then name.
    Service first = service("default", "first", "10.96.0.10", 30010);
    Service second = service("default", "second", "10.96.0.10", 30010);  // only a mock server allows this
    Service outside = service("other", "outside", "10.97.0.1", 40000);
    await().atMost(Duration.ofSeconds(10)).until(() -> cluster.services().size() == 3);

    reconciler.compare();

    assertThat(store.holderOf(IpAddress.parse("10.96.0.10"))).get().extracting(Holder::name).isEqualTo("first");
    assertThat(events(first)).containsExactlyInAnyOrder("ClusterIPNotAllocated", "PortNotAllocated");
    assertThat(events(second)).containsExactlyInAnyOrder("ClusterIPAlreadyAllocated", "PortAlreadyAllocated");
    assertThat(events(outside)).containsExactlyInAnyOrder("ClusterIPOutOfRange", "PortOutOfRange");
    assertThat(metrics.repairs("clusterip", "not_allocated")).isEqualTo(1);
    assertThat(metrics.repairs("clusterip", "duplicate")).isEqualTo(1);
    assertThat(metrics.repairs("clusterip", "out_of_range")).isEqualTo(1);
    assertThat(metrics.repairs("nodeport", "duplicate")).isEqualTo(1);

    reconciler.compare();
    assertThat(events(second)).as("a problem that persists is reported once").hasSize(2);
  }

  @Test
  void aValueNothingCarriesIsFreedOnlyAfterTheGracePeriod() {
    startWatching();
    reconciler.rebuildMissing();
    store.reserve(new ReservationRequest(Holder.service("default", "never-created", ""),
        List.of(IpClaim.specific(IpAddress.parse("10.96.0.50"))), List.of(PortClaim.specific(30050)), false)).join();

    clock.advance(Duration.ofSeconds(59));
    reconciler.compare();
    assertThat(store.holderOf(IpAddress.parse("10.96.0.50"))).as("still within grace: may be on its way").isPresent();

    clock.advance(Duration.ofSeconds(2));
    reconciler.compare();
    assertThat(store.holderOf(IpAddress.parse("10.96.0.50"))).isEmpty();
    assertThat(store.holderOfNodePort(30050)).isEmpty();
    assertThat(metrics.repairs("clusterip", "leak")).isEqualTo(1);
    assertThat(metrics.repairs("nodeport", "leak")).isEqualTo(1);
  }

  @Test
  void aValueReservedAheadIsLeftToItsReplicaForTheGracePeriodThenNamedOrFreed() {
    startWatching();
    reconciler.rebuildMissing();
    Holder handedOut = Holder.reservedAhead("replica-a", 1);
    Holder unused = Holder.reservedAhead("replica-a", 2);
    store.reserve(ReservationRequest.ips(handedOut, List.of(IpClaim.specific(IpAddress.parse("10.96.0.60"))), false))
        .join();
    store.reserve(ReservationRequest.ips(unused, List.of(IpClaim.specific(IpAddress.parse("10.96.0.61"))), false))
        .join();
    // The replica gave .60 to a Service and has not named it the holder yet.
    service("default", "web", "10.96.0.60", null);
    await().atMost(Duration.ofSeconds(10)).until(() -> cluster.services().size() == 1);

    clock.advance(Duration.ofSeconds(59));
    reconciler.compare();
    assertThat(store.holderOf(IpAddress.parse("10.96.0.60"))).as("the replica names it in a moment").contains(handedOut);
    assertThat(store.holderOf(IpAddress.parse("10.96.0.61"))).as("may still be handed out").contains(unused);

    // Past the grace the replica is taken to be gone: the Service is named, the unused value freed.
    clock.advance(Duration.ofSeconds(2));
    reconciler.compare();
    assertThat(store.holderOf(IpAddress.parse("10.96.0.60"))).get().extracting(Holder::name).isEqualTo("web");
    assertThat(store.holderOf(IpAddress.parse("10.96.0.61"))).isEmpty();
    assertThat(metrics.repairs("clusterip", "reserved_ahead_expired")).isEqualTo(1);
    assertThat(metrics.repairs("clusterip", "leak")).isZero();
  }

  /**
   * Between full comparisons a pass looks at the Services that changed and the values held since
   * the last pass, not at every Service: a record lost behind its back, with no event to say so,
   * waits for the next full comparison.
   */
  @Test
  void aPassBetweenFullComparisonsLooksAtWhatChangedAndAFullOneAtEverything() {
    startWatching();
    reconciler.rebuildMissing();
    service("default", "web", "10.96.0.10", null);
    await().atMost(Duration.ofSeconds(10)).until(() -> cluster.services().size() == 1);
    reconciler.compare();
    IpAddress web = IpAddress.parse("10.96.0.10");
    assertThat(store.holderOf(web)).get().extracting(Holder::name).isEqualTo("web");

    store.releaseIp(web, store.holderOf(web).orElseThrow()).join();  // no event says so
    clock.advance(Duration.ofSeconds(10));
    reconciler.compare();
    assertThat(store.holderOf(web)).as("web did not change: not looked at").isEmpty();

    service("default", "api", "10.96.0.11", null);
    await().atMost(Duration.ofSeconds(10)).until(() -> cluster.services().size() == 2);
    clock.advance(Duration.ofSeconds(10));
    reconciler.compare();
    assertThat(store.holderOf(IpAddress.parse("10.96.0.11"))).as("api was added: looked at")
        .get().extracting(Holder::name).isEqualTo("api");
    assertThat(store.holderOf(web)).isEmpty();
    assertThat(metrics.passes("full")).isEqualTo(1);
    assertThat(metrics.passes("changes")).isEqualTo(2);

    clock.advance(Duration.ofMinutes(3));
    reconciler.compare();
    assertThat(store.holderOf(web)).as("the full comparison finds it").get().extracting(Holder::name)
        .isEqualTo("web");
    assertThat(metrics.passes("full")).isEqualTo(2);
  }

  /**
   * The informer can change a Service between the pass taking it from the cache and asking the
   * index who carries its values: then nobody does, and the pass goes on without it. It failed
   * whole before ("Index 0 out of bounds for length 0", again and again in the load harness).
   */
  @Test
  void aPassOverChangesGoesOnWhenAServiceChangedUnderIt() {
    IpAddress moved = IpAddress.parse("10.96.0.10");
    ClusterObjects changing = new ClusterObjects(client) {
      @Override
      public List<Service> carrying(IpAddress address) {
        // as if web were updated away from its address after the pass took it from the cache
        return address.equals(moved) ? List.of() : super.carrying(address);
      }
    };
    try {
      AllocationReconciler reconciling = new AllocationReconciler(store, rebuildable, changing,
          new RepairEvents(client), metrics, PORTS, Duration.ofSeconds(60), Duration.ofMinutes(3), clock, () -> true,
          client, IpFamily.IPV4);
      changing.start();
      await().atMost(Duration.ofSeconds(10)).until(changing::synced);
      reconciling.rebuildMissing();
      reconciling.compare();  // the full comparison: later passes look at what changed
      service("default", "web", "10.96.0.10", 30010);
      service("default", "api", "10.96.0.11", null);
      await().atMost(Duration.ofSeconds(10)).until(() -> changing.services().size() == 2);
      clock.advance(Duration.ofSeconds(10));

      reconciling.compare();

      assertThat(metrics.passes("changes")).isEqualTo(1);
      assertThat(store.holderOf(IpAddress.parse("10.96.0.11"))).as("the rest of the pass happened")
          .get().extracting(Holder::name).isEqualTo("api");
      assertThat(store.holderOfNodePort(30010)).as("web's NodePort, which the index still shows")
          .get().extracting(Holder::name).isEqualTo("web");
      assertThat(store.holderOf(moved)).as("nobody carries it now, as far as the pass can tell").isEmpty();
    } finally {
      changing.close();
    }
  }

  /** A release that failed (the API server unavailable, say) is tried again by the next pass. */
  @Test
  void aReleaseThatFailedIsTriedAgainByTheNextPass() {
    AtomicBoolean failed = new AtomicBoolean();
    AllocationStore failingOnce = (AllocationStore) Proxy.newProxyInstance(AllocationStore.class.getClassLoader(),
        new Class<?>[] {AllocationStore.class}, (proxy, method, args) -> {
          if (method.getName().equals("releaseIp") && failed.compareAndSet(false, true)) {
            return CompletableFuture.failedFuture(new IllegalStateException("the API server is unavailable"));
          }
          try {
            return method.invoke(store, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
    ClusterObjects own = new ClusterObjects(client);  // no other reconciler to release for it
    try {
      AllocationReconciler reconciling = new AllocationReconciler(failingOnce, rebuildable, own,
          new RepairEvents(client), metrics, PORTS, Duration.ofSeconds(60), Duration.ofMinutes(3), clock, () -> true,
          client, IpFamily.IPV4);
      own.start();
      await().atMost(Duration.ofSeconds(10)).until(own::synced);
      reconciling.rebuildMissing();
      Service web = service("default", "web", "10.96.0.10", null);
      await().atMost(Duration.ofSeconds(10)).until(() -> own.services().size() == 1);
      reconciling.compare();
      assertThat(store.holderOf(IpAddress.parse("10.96.0.10"))).isPresent();

      client.resource(web).delete();
      await().atMost(Duration.ofSeconds(10)).until(failed::get);
      assertThat(store.holderOf(IpAddress.parse("10.96.0.10"))).as("its release failed").isPresent();

      clock.advance(Duration.ofSeconds(10));
      reconciling.compare();
      assertThat(store.holderOf(IpAddress.parse("10.96.0.10"))).as("tried again").isEmpty();
    } finally {
      own.close();
    }
  }

  /**
   * A pass compares a snapshot of the Services. One deleted while the pass runs has its values
   * freed by its delete's event, maybe just before the pass stores them again for it: seen under
   * load with three replicas, where every such Service got a Warning event and its values stayed
   * held for a Service that no longer existed until the next pass after the grace freed them.
   */
  @Test
  void aServiceDeletedWhileThePassRepairsItKeepsNothingAndIsNotReported() {
    startWatching();
    reconciler.rebuildMissing();
    Service gone = service("default", "gone", "10.96.0.20", 30020);
    await().atMost(Duration.ofSeconds(10)).until(() -> cluster.services().size() == 1);
    // The store takes the pass's repairs only after the Service is deleted and its informer
    // delivered the delete: the delete's release, which found nothing to free, came first.
    AllocationStore racing = beforeFirstReserve(store, () -> {
      client.resource(gone).delete();
      await().atMost(Duration.ofSeconds(10)).until(() -> cluster.services().isEmpty());
    });
    AllocationReconciler reconciling = new AllocationReconciler(racing, rebuildable, cluster,
        new RepairEvents(client), metrics, PORTS, Duration.ofSeconds(60), Duration.ofMinutes(3), clock, () -> true,
        client, IpFamily.IPV4);

    reconciling.compare();

    assertThat(store.holderOf(IpAddress.parse("10.96.0.20"))).as("given back").isEmpty();
    assertThat(store.holderOfNodePort(30020)).as("given back").isEmpty();
    assertThat(events(gone)).isEmpty();
    assertThat(metrics.repairs("clusterip", "not_allocated")).isZero();
    assertThat(metrics.repairs("nodeport", "not_allocated")).isZero();
  }

  /**
   * The same race, with the Service deleted after the pass stored its repair and a new Service of
   * the same name created at once with the same ClusterIP (kubectl replace --force): the value is
   * recorded for the new one without a uid, as at any create, and taking the repair back must not
   * free it.
   */
  @Test
  void takingARepairBackLeavesTheValueToANewServiceOfTheSameName() {
    startWatching();
    reconciler.rebuildMissing();
    Service gone = service("default", "web", "10.96.0.30", null);
    await().atMost(Duration.ofSeconds(10)).until(() -> cluster.services().size() == 1);
    AllocationStore racing = afterFirstReserve(store, () -> {
      client.resource(gone).delete();
      await().atMost(Duration.ofSeconds(10)).until(() -> store.holderOf(IpAddress.parse("10.96.0.30")).isEmpty());
      // What the webhook records when the new one is created: its name, no uid yet.
      store.reserve(ReservationRequest.ips(Holder.service("default", "web", ""),
          List.of(IpClaim.specific(IpAddress.parse("10.96.0.30"))), false)).join();
    });
    AllocationReconciler reconciling = new AllocationReconciler(racing, rebuildable, cluster,
        new RepairEvents(client), metrics, PORTS, Duration.ofSeconds(60), Duration.ofMinutes(3), clock, () -> true,
        client, IpFamily.IPV4);

    reconciling.compare();

    assertThat(store.holderOf(IpAddress.parse("10.96.0.30"))).as("the new Service's")
        .contains(Holder.service("default", "web", ""));
    assertThat(events(gone)).isEmpty();
  }

  @Test
  void deletesAndUpdatesFreeWhatTheyGiveUp() {
    Service web = service("default", "web", "10.96.0.10", 30010);
    startWatching();
    reconciler.rebuildMissing();

    client.services().inNamespace("default").withName("web").edit(s -> {
      s.getSpec().setType("ClusterIP");
      s.getSpec().getPorts().get(0).setNodePort(null);
      return s;
    });
    await().atMost(Duration.ofSeconds(10)).until(() -> store.holderOfNodePort(30010).isEmpty());
    assertThat(store.holderOf(IpAddress.parse("10.96.0.10"))).as("kept: the update kept it").isPresent();

    client.resource(web).delete();
    await().atMost(Duration.ofSeconds(10)).until(() -> store.holderOf(IpAddress.parse("10.96.0.10")).isEmpty());
  }

  @Test
  void aNodesBlocksAreFreedOnceTheNodeIsGoneNotWhenItsDeletionStarts() {
    client.nodes().resource(new NodeBuilder().withNewMetadata().withName("n1").addToFinalizers("example.com/hold")
        .endMetadata().withNewSpec().withPodCIDR("10.244.3.0/24").withPodCIDRs("10.244.3.0/24").endSpec().build())
        .create();
    startWatching();
    reconciler.rebuildMissing();
    assertThat(store.clusterCidrInUse("pods")).isTrue();

    client.nodes().withName("n1").delete();  // held by its finalizer: deletion starts
    await().atMost(Duration.ofSeconds(10))
        .until(() -> cluster.node("n1").map(n -> n.getMetadata().getDeletionTimestamp() != null).orElse(false));
    clock.advance(Duration.ofMinutes(5));  // past the grace: only the node's presence keeps its blocks
    reconciler.compare();
    assertThat(store.clusterCidrInUse("pods")).as("still there while it is being deleted").isTrue();

    client.nodes().withName("n1").edit(n -> {
      n.getMetadata().setFinalizers(List.of());
      return n;
    });
    await().atMost(Duration.ofSeconds(10)).until(() -> !store.clusterCidrInUse("pods"));
  }

  /** Nodes that registered while no webhook gave them pod CIDRs get them, as node IPAM would. */
  @Test
  void nodesWithoutPodCidrsGetThemOnThePassAndAsTheyArrive() {
    client.nodes().resource(new NodeBuilder().withNewMetadata().withName("early").endMetadata().build()).create();
    client.nodes().resource(new NodeBuilder().withNewMetadata().withName("preset").endMetadata()
        .withNewSpec().withPodCIDR("10.244.7.0/24").withPodCIDRs("10.244.7.0/24").endSpec().build()).create();
    startWatching();
    reconciler.rebuildMissing();
    reconciler.compare();

    Node early = client.nodes().withName("early").get();
    assertThat(early.getSpec().getPodCIDR()).as("spec.podCIDR").matches("10\\.244\\.\\d+\\.0/24");
    assertThat(early.getSpec().getPodCIDRs()).containsExactly(early.getSpec().getPodCIDR());
    assertThat(client.nodes().withName("preset").get().getSpec().getPodCIDRs())
        .as("a node's own pod CIDRs are never replaced").containsExactly("10.244.7.0/24");

    // One that registers now gets another block from its add event, without waiting for a pass.
    client.nodes().resource(new NodeBuilder().withNewMetadata().withName("late").endMetadata().build()).create();
    await().atMost(Duration.ofSeconds(10))
        .until(() -> client.nodes().withName("late").get().getSpec().getPodCIDR() != null);
    assertThat(List.of(early.getSpec().getPodCIDR(), "10.244.7.0/24"))
        .doesNotContain(client.nodes().withName("late").get().getSpec().getPodCIDR());

    // What they were given is held for them: the next pass records nothing new and frees nothing.
    clock.advance(Duration.ofMinutes(5));
    reconciler.compare();
    assertThat(client.nodes().withName("early").get().getSpec().getPodCIDR()).isEqualTo(early.getSpec().getPodCIDR());
    assertThat(metrics.repairs("podcidr", "assigned")).isEqualTo(2.0);
  }

  /**
   * A node that got pod CIDRs elsewhere (webhook down) between our reservation and our write
   * keeps them; the store then holds those for it, not ours.
   */
  @Test
  void podCidrsANodeGotMeanwhileAreRecordedAndOursFreed() {
    startWatching();
    reconciler.rebuildMissing();
    Node stale = new NodeBuilder().withNewMetadata().withName("raced").endMetadata().build();
    client.nodes().resource(new NodeBuilder(stale).withNewSpec().withPodCIDR("10.244.9.0/24")
        .withPodCIDRs("10.244.9.0/24").endSpec().build()).create();

    try (PodCidrAssignment assignment = new PodCidrAssignment(store, client, new RepairEvents(client), metrics,
        IpFamily.IPV4)) {
      assertThat(assignment.assign(stale).join()).as("nothing written over the node's own").isFalse();
    }
    assertThat(store.allocations()).filteredOn(a -> a.kind() == RangeKey.Kind.POD_CIDRS)
        .singleElement().satisfies(a -> {
          assertThat(a.holder().name()).isEqualTo("raced");
          assertThat(a.value()).isEqualTo("10.244.9.0/24");
        });
    assertThat(client.nodes().withName("raced").get().getSpec().getPodCIDRs()).containsExactly("10.244.9.0/24");
  }

  /** The store, with {@code first} run once, before the first reservation is passed on. */
  private static AllocationStore beforeFirstReserve(AllocationStore store, Runnable first) {
    AtomicBoolean ran = new AtomicBoolean();
    return (AllocationStore) Proxy.newProxyInstance(AllocationStore.class.getClassLoader(),
        new Class<?>[] {AllocationStore.class}, (proxy, method, args) -> {
          if (method.getName().equals("reserve") && ran.compareAndSet(false, true)) {
            first.run();
          }
          try {
            return method.invoke(store, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  /** The store, with {@code then} run once, after the first reservation was stored. */
  private static AllocationStore afterFirstReserve(AllocationStore store, Runnable then) {
    AtomicBoolean ran = new AtomicBoolean();
    return (AllocationStore) Proxy.newProxyInstance(AllocationStore.class.getClassLoader(),
        new Class<?>[] {AllocationStore.class}, (proxy, method, args) -> {
          Object result;
          try {
            result = method.invoke(store, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
          if (method.getName().equals("reserve") && ran.compareAndSet(false, true)) {
            ((CompletableFuture<?>) result).join();
            then.run();
          }
          return result;
        });
  }

  private Service service(String namespace, String name, String clusterIp, Integer nodePort) {
    return TestServices.create(client, namespace, name, clusterIp, nodePort);
  }


  private List<String> events(Service service) {
    return client.v1().events().inNamespace(service.getMetadata().getNamespace()).list().getItems().stream()
        .filter(e -> service.getMetadata().getName().equals(e.getInvolvedObject().getName()))
        .map(Event::getReason).toList();
  }

  /** A clock tests move forward. */
  static final class MovableClock extends Clock {
    private Instant now;

    MovableClock(Instant start) {
      this.now = start;
    }

    void advance(Duration duration) {
      now = now.plus(duration);
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }
  }
}
