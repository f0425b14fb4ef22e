package io.subrange.webhook.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubeapitest.junit.KubeConfig;
import io.subrange.allocator.band.AnchoredStart;
import io.subrange.allocator.band.ThreadLocalRandomGenerator;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.podcidr.ClusterCidr;
import io.subrange.allocator.podcidr.NodeView;
import io.subrange.allocator.port.PortRange;
import io.subrange.allocator.store.Allocation;
import io.subrange.allocator.store.AllocationEngine;
import io.subrange.allocator.store.Holder;
import io.subrange.allocator.store.IpClaim;
import io.subrange.allocator.store.PortClaim;
import io.subrange.allocator.store.RangeFullException;
import io.subrange.allocator.store.RangeKey;
import io.subrange.allocator.store.RangeState;
import io.subrange.allocator.store.Reservation;
import io.subrange.allocator.store.ReservationRequest;
import io.subrange.allocator.store.StoreUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The ConfigMap store against a real kube-apiserver and etcd: two stores in one namespace stand
 * for two replicas.
 */
@EnableKubeAPIServer(kubeAPIVersion = "1.20.2")
class ConfigMapAllocationStoreIT {

  private static final PortRange PORTS = PortRange.parse("30000-32767");
  private static final RangeKey V4 = RangeKey.serviceIps("kubernetes", IpFamily.IPV4);

  @KubeConfig
  static String kubeConfigYaml;

  private KubernetesClient admin;
  private String namespace;
  private final List<ConfigMapAllocationStore> stores = new ArrayList<>();

  @BeforeEach
  void namespace() {
    admin = client();
    namespace = "subrange-" + UUID.randomUUID().toString().substring(0, 8);
    admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
        .create();
  }

  @AfterEach
  void close() {
    stores.forEach(ConfigMapAllocationStore::close);
    admin.close();
  }

  private static KubernetesClient client() {
    return new KubernetesClientBuilder().withConfig(Config.fromKubeconfig(kubeConfigYaml)).build();
  }

  private ConfigMapAllocationStore replica(String cidr) {
    return replica(cidr, StoreMetrics.unregistered());
  }

  private ConfigMapAllocationStore replica(String cidr, StoreMetrics metrics) {
    return replica(cidr, metrics, false);
  }

  /** @param loadWhenNeeded as the reconciler: others' writes load before a commit, not as they arrive */
  private ConfigMapAllocationStore replica(String cidr, StoreMetrics metrics, boolean loadWhenNeeded) {
    AllocationEngine engine = new AllocationEngine(PORTS, ThreadLocalRandomGenerator.INSTANCE);
    ConfigMapAllocationStore store = new ConfigMapAllocationStore(engine, client(), namespace, Duration.ofSeconds(3),
        metrics);
    if (loadWhenNeeded) {
      store.loadOthersWritesWhenNeeded();
    }
    store.start(Duration.ofSeconds(10));
    store.addServiceRange("kubernetes", Cidr.parse(cidr));
    stores.add(store);
    return store;
  }

  /** A store on {@code engine} with its own budget, serving {@code cidr}, started (and closed after the test). */
  private ConfigMapAllocationStore started(AllocationEngine engine, String cidr, Duration budget, StoreMetrics metrics) {
    ConfigMapAllocationStore store = new ConfigMapAllocationStore(engine, client(), namespace, budget, metrics);
    store.start(Duration.ofSeconds(10));
    store.addServiceRange("kubernetes", Cidr.parse(cidr));
    stores.add(store);
    return store;
  }

  /** What the reconciler does for a range nobody stored yet: an empty state. */
  private static void initialize(ConfigMapAllocationStore store) {
    for (RangeKey key : store.rangesToRebuild().keySet()) {
      store.install(store.emptyCopyOf(key).export(key)).join();
    }
  }

  private static ReservationRequest service(String name, boolean nodePort) {
    return new ReservationRequest(Holder.service("default", name, ""), List.of(IpClaim.dynamic(IpFamily.IPV4)),
        nodePort ? List.of(PortClaim.dynamic()) : List.of(), false);
  }

  @Test
  void nothingIsHandedOutUntilTheStateIsStoredThenEveryAnswerIsStored() {
    ConfigMapAllocationStore store = replica("10.96.0.0/20");
    assertThat(store.rangesToRebuild()).containsKeys(V4, RangeKey.nodePorts());
    assertThat(store.rangesToRebuild().get(V4)).contains("subrange-service-ips-kubernetes-ipv4-0 is missing");
    assertThatThrownBy(() -> store.reserve(service("early", true)).join())
        .hasCauseInstanceOf(StoreUnavailableException.class).hasMessageContaining("not loaded yet");
    assertThat(store.loadedOnce()).isFalse();

    initialize(store);
    assertThat(store.rangesToRebuild()).isEmpty();
    assertThat(store.loadedOnce()).isTrue();
    Reservation web = store.reserve(service("web", true)).join();

    RangeState stored = RangeConfigMaps.decode(V4, admin.configMaps().inNamespace(namespace).list().getItems());
    assertThat(stored.entries()).singleElement().satisfies(e -> {
      assertThat(e.value()).isEqualTo(web.ips().get(0).address().toString());
      assertThat(e.holder()).isEqualTo(Holder.service("default", "web", ""));
    });
    RangeState ports = RangeConfigMaps.decode(RangeKey.nodePorts(),
        admin.configMaps().inNamespace(namespace).list().getItems());
    assertThat(ports.entries()).extracting(RangeState.Entry::value)
        .containsExactly(String.valueOf(web.ports().get(0).port()));
    ConfigMap head = admin.configMaps().inNamespace(namespace).withName("subrange-service-ips-kubernetes-ipv4-0").get();
    assertThat(head.getMetadata().getLabels()).containsEntry("subrange.io/range-kind", "service-ips")
        .containsEntry("subrange.io/family", "ipv4");
    assertThat(head.getMetadata().getAnnotations()).containsEntry("subrange.io/encoding", "rangeallocation-v1")
        .containsEntry("subrange.io/static-band", "256");
  }

  @Test
  void twoReplicasWritingAtOnceNeverHandOutAValueTwice() throws Exception {
    ConfigMapAllocationStore one = replica("10.96.0.0/20");
    initialize(one);
    ConfigMapAllocationStore two = replica("10.96.0.0/20");
    assertThat(two.rangesToRebuild()).as("the second replica loads what the first stored").isEmpty();

    ExecutorService clients = Executors.newFixedThreadPool(16);
    List<CompletableFuture<Reservation>> answers = new ArrayList<>();
    for (int i = 0; i < 600; i++) {
      ConfigMapAllocationStore replica = i % 2 == 0 ? one : two;
      ReservationRequest request = service("s" + i, i % 2 == 1);
      answers.add(CompletableFuture.supplyAsync(() -> replica.reserve(request).join(), clients));
    }
    Set<String> addresses = new HashSet<>();
    Set<Integer> ports = new HashSet<>();
    for (CompletableFuture<Reservation> answer : answers) {
      Reservation reservation = answer.get(30, TimeUnit.SECONDS);
      assertThat(addresses.add(reservation.ips().get(0).address().toString())).as("distinct addresses").isTrue();
      reservation.ports().forEach(p -> assertThat(ports.add(p.port())).as("distinct ports").isTrue());
    }
    clients.shutdown();
    assertThat(addresses).hasSize(600);
    assertThat(ports).hasSize(300);

    List<ConfigMap> stored = admin.configMaps().inNamespace(namespace).list().getItems();
    assertThat(RangeConfigMaps.decode(V4, stored).entries()).extracting(RangeState.Entry::value)
        .containsExactlyInAnyOrderElementsOf(addresses);
    assertThat(RangeConfigMaps.decode(RangeKey.nodePorts(), stored).entries()).hasSize(300);
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      assertThat(one.allocations()).hasSize(900);
      assertThat(two.allocations()).hasSize(900);
    });
  }

  /**
   * A request whose value lives in a shard another replica writes all the time (a retried create
   * that gets back the port it already holds, in the shard where the other replica allocates)
   * must still get through: a retry writes on the version it has just read, not on one read
   * before its backoff, and after its second failed attempt it takes a turn at the shard, so the
   * busy writer's next write usually loses instead.
   *
   * <p>The busy replica's 8 streams take and free ports of the shard as fast as they are answered.
   * Without turns (the busy streams then paused 20 ms after each operation, so that this test
   * could pass) a compare-and-swap that must read first lost to that writer, which never needs to,
   * until it ran out of budget: unpaced, in rounds of 20 requests, 1 of 100 and 1 of 200 refused
   * after 17 attempts, and 6 of 15 rounds had a request waiting 1.4 to 2.3 s, while the busy
   * streams made 180 to 300 operations a second. With turns: none of 400 refused, none waited more
   * than 265 ms, and the busy streams made 53 to 174 a second meanwhile, as they lose too.
   */
  @Test
  void aShardAnotherReplicaKeepsWritingStillTakesOurWrites() throws Exception {
    ConfigMapAllocationStore busy = replica("10.96.0.0/24");
    initialize(busy);
    StoreMetrics metrics = StoreMetrics.unregistered();
    AllocationEngine engine = new AllocationEngine(PORTS, ThreadLocalRandomGenerator.INSTANCE);
    ConfigMapAllocationStore quiet = started(engine, "10.96.0.0/24", Duration.ofSeconds(3), metrics);

    ShardLayout layout = ShardLayout.of(RangeKey.nodePorts(), ShardEncoding.RANGE_ALLOCATION,
        PORTS.toString());
    int hotShard = layout.shards() / 2;
    int first = PORTS.first() + (int) (hotShard * layout.span());
    int quietPorts = 40;
    int hotPorts = (int) layout.span() - quietPorts;  // the quiet replica's first, the busy one's after them
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger next = new AtomicInteger();
    ExecutorService writers = Executors.newFixedThreadPool(8);
    List<CompletableFuture<Void>> streams = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      streams.add(CompletableFuture.runAsync(() -> {
        // Take a port of the hot shard and give it back, over and over: every answer is a write.
        while (!stop.get()) {
          int port = first + quietPorts + Math.floorMod(next.getAndIncrement(), hotPorts);
          Holder holder = Holder.service("busy", "b" + port, "");
          try {
            busy.reserve(new ReservationRequest(holder, List.of(), List.of(PortClaim.specific(port)), false)).join();
            busy.releaseNodePort(port, holder).join();
          } catch (CompletionException e) {
            // the port is another stream's for a moment, or busy lost a race: the stream goes on
          }
        }
      }, writers));
    }
    // Until the busy replica writes the hot shard at its pace (its client and JIT warm up first).
    await().atMost(Duration.ofSeconds(30)).until(() -> next.get() >= 150);
    List<String> refused = new ArrayList<>();
    long started = System.nanoTime();
    int busyBefore = next.get();
    try {
      for (int port = first; port < first + quietPorts; port++) {
        try {
          quiet.reserve(new ReservationRequest(Holder.service("quiet", "q" + port, ""), List.of(),
              List.of(PortClaim.specific(port)), false)).join();
        } catch (CompletionException e) {
          refused.add(port + ": " + e.getCause().getMessage());
        }
      }
    } finally {
      stop.set(true);
      writers.shutdown();
    }
    CompletableFuture.allOf(streams.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
    System.out.printf("hot shard %d: quiet replica %d conflicts, %d turns, %d refused in %d ms; busy %d operations%n",
        hotShard, metrics.conflicts(), metrics.turnsTaken(), refused.size(), (System.nanoTime() - started) / 1_000_000,
        next.get() - busyBefore);
    assertThat(metrics.turnsTaken()).as("the quiet replica lost races for the hot shard twice in a row").isPositive();
    assertThat(refused).as("every request of the quiet replica got through the busy shard").isEmpty();
  }

  /**
   * A request that waits in the committer's queue until too little of its budget is left for a
   * write gets a 503 that says so: no attempt, and where its time went. The committer is held up
   * the way a slow commit holds it up: it waits for the engine's lock, here held by the test.
   */
  @Test
  void aRequestThatSpentItsBudgetInTheQueueIsAnswered503SayingWhereTheTimeWent() throws Exception {
    AllocationEngine engine = new AllocationEngine(PORTS, ThreadLocalRandomGenerator.INSTANCE);
    // A 1 s budget: each ConfigMap request may take 250 ms, so none starts after 750 ms.
    ConfigMapAllocationStore store = started(engine, "10.96.0.0/20", Duration.ofSeconds(1),
        StoreMetrics.unregistered());
    initialize(store);

    CompletableFuture<Reservation> second;
    synchronized (engine) {
      // The first request takes the committer to the lock (to apply it, or to load what changed).
      store.reserve(service("first", false));
      await().atMost(Duration.ofSeconds(10)).until(ConfigMapAllocationStoreIT::committerWaitsForTheEngine);
      second = store.reserve(service("second", false));  // queued behind the commit held up
      Thread.sleep(1000);
    }

    assertThatThrownBy(() -> second.get(10, TimeUnit.SECONDS))
        .hasCauseInstanceOf(StoreUnavailableException.class)
        .cause().hasMessageStartingWith("subrange could not store the allocation for Service default/second within"
            + " 1000 ms (no write was attempted: it reached the store's queue ")
        .hasMessageContaining("nothing was allocated")
        .satisfies(e -> assertThat(waitedInTheQueue(e.getMessage())).isGreaterThanOrEqualTo(750));
    assertThat(store.allocations()).extracting(Allocation::holder)
        .doesNotContain(Holder.service("default", "second", ""));
  }

  /**
   * A create that finds its pool dry waits for the batch on its way. When that batch cannot be
   * stored in time (here: the committer is held up past the batch's last start, as a slow commit
   * on a saturated node holds it up), the create takes the usual path with what is left of the
   * budget it had when it arrived, not a new one: its answer still comes within the budget, as a
   * 503 that says where the time went. The wait is counted, as sent the usual path.
   */
  @Test
  void aCreateThatWaitedForABatchThatCouldNotBeStoredKeepsItsBudgetFromArrival() throws Exception {
    AllocationEngine engine = new AllocationEngine(PORTS, new AnchoredStart());
    StoreMetrics metrics = StoreMetrics.unregistered();
    // A 1 s budget: each ConfigMap request may take 250 ms, so none starts after 750 ms.
    ConfigMapAllocationStore store = started(engine, "10.96.0.0/20", Duration.ofSeconds(1), metrics);
    store.reserveAhead("replica-1", 16, Duration.ofSeconds(30), Duration.ofMillis(200));
    initialize(store);

    CompletableFuture<Reservation> waiting;
    synchronized (engine) {
      // A request naming its value takes the usual path: it takes the committer to the lock.
      store.reserve(new ReservationRequest(Holder.service("default", "named", ""),
          List.of(IpClaim.specific(IpAddress.parse("10.96.0.10"))), List.of(), false));
      await().atMost(Duration.ofSeconds(10)).until(ConfigMapAllocationStoreIT::committerWaitsForTheEngine);
      waiting = store.reserve(service("waiting", false));  // the pool is dry: its batch queues behind
      Thread.sleep(1000);
    }

    assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS))
        .hasCauseInstanceOf(StoreUnavailableException.class)
        .cause().hasMessageStartingWith("subrange could not store the allocation for Service default/waiting within"
            + " 1000 ms (no write was attempted: it reached the store's queue ");
    assertThat(metrics.batchWaits(false)).as("waited for the batch, then sent the usual path").isEqualTo(1);
    assertThat(metrics.batchWaits(true)).isZero();
    assertThat(store.allocations()).extracting(Allocation::holder)
        .doesNotContain(Holder.service("default", "waiting", ""));
  }

  private static long waitedInTheQueue(String message) {
    Matcher waited = Pattern.compile("and waited (\\d+) ms there").matcher(message);
    assertThat(waited.find()).as(message).isTrue();
    return Long.parseLong(waited.group(1));
  }

  /** Whether the committer (one store runs at a time here) waits for the engine's lock. */
  private static boolean committerWaitsForTheEngine() {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(thread -> thread.getName().equals("subrange-store-committer")
            && thread.getState() == Thread.State.BLOCKED);
  }

  /**
   * The reconciler's releases wait for company ({@code release-linger}): releases arriving one by
   * one, as a burst of deletes brings them, share one write; and a release waiting so leaves with
   * the first request that may not wait, however long its own linger.
   */
  @Test
  void releasesArrivingOneByOneShareAWriteAndLeaveWithTheFirstRequestThatMayNotWait() throws Exception {
    StoreMetrics metrics = StoreMetrics.unregistered();
    // Anchored starts, as deployed: the twenty addresses lie side by side, in one shard or two. A
    // 30 s budget, so lingers of seconds are allowed (at most half of its 22.5 s of last start)
    // and a busy machine cannot run a release out of its budget.
    ConfigMapAllocationStore store = started(new AllocationEngine(PORTS, new AnchoredStart()), "10.96.0.0/20",
        Duration.ofSeconds(30), metrics).lingerReleases(Duration.ofSeconds(2));
    initialize(store);
    List<Reservation> held = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      held.add(store.reserve(service("burst-" + i, false)).get(10, TimeUnit.SECONDS));
    }

    long before = metrics.writes();
    List<CompletableFuture<Boolean>> released = new ArrayList<>();
    for (int i = 0; i < held.size(); i++) {
      released.add(store.releaseIp(held.get(i).ips().get(0).address(), Holder.service("default", "burst-" + i, "")));
      Thread.sleep(10);  // one by one, as delete events come
    }
    for (CompletableFuture<Boolean> release : released) {
      assertThat(release.get(10, TimeUnit.SECONDS)).isTrue();
    }
    // Committed as they came, twenty releases would write about twenty times.
    assertThat(metrics.writes() - before).as("one write per shard they touch").isBetween(1L, 2L);

    // With a linger longer than the test waits, a release is written only with an allocation.
    store.lingerReleases(Duration.ofSeconds(10));
    CompletableFuture<Boolean> lingering = store.releaseIp(held.get(0).ips().get(0).address(),
        Holder.service("default", "burst-0", ""));
    Thread.sleep(200);
    assertThat(lingering).as("still waiting for company").isNotDone();
    store.reserve(service("urgent", false)).get(5, TimeUnit.SECONDS);
    assertThat(lingering.get(1, TimeUnit.SECONDS)).as("already freed above, so nothing to free").isFalse();
  }

  /** A release alone lingers at most half of the time its budget leaves for a write, so it still gets one. */
  @Test
  void aReleaseAloneLingersAtMostHalfOfWhatItsBudgetLeavesForAWrite() throws Exception {
    // A 3 s budget: no write starts after 2.25 s, so a release lingers 1.125 s at most, not a minute.
    ConfigMapAllocationStore store = replica("10.96.0.0/20", StoreMetrics.unregistered(), true)
        .lingerReleases(Duration.ofMinutes(1));
    initialize(store);
    Reservation held = store.reserve(service("alone", false)).get(10, TimeUnit.SECONDS);

    assertThat(store.releaseIp(held.ips().get(0).address(), Holder.service("default", "alone", ""))
        .get(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void groupCommitWritesFarLessThanOncePerRequest() throws Exception {
    AllocationEngine engine = new AllocationEngine(PORTS, ThreadLocalRandomGenerator.INSTANCE);
    StoreMetrics metrics = StoreMetrics.unregistered();
    ConfigMapAllocationStore store = started(engine, "10.96.0.0/20", Duration.ofSeconds(3), metrics);
    initialize(store);
    long before = metrics.writes();
    List<CompletableFuture<Reservation>> answers = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      answers.add(store.reserve(service("g" + i, false)));
    }
    CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
    long writes = metrics.writes() - before;
    assertThat(writes).as("400 requests at once share writes").isLessThan(100);
    // A commit is counted once its last request is answered, a moment after the answers.
    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(metrics.writesSaved())
        .as("what 400 single writes would have cost, less what was written")
        .isGreaterThanOrEqualTo(300).isLessThanOrEqualTo(400 - writes));
  }

  @Test
  void aCommitLingerLetsRequestsArrivingCloseTogetherShareOneWrite() throws Exception {
    StoreMetrics metrics = StoreMetrics.unregistered();
    // One shard (a /24 is below the smallest shard span), so a write is a commit.
    ConfigMapAllocationStore store = replica("10.96.0.0/24", metrics);
    initialize(store);

    long alone = writesForTrickle(store, metrics, "alone");
    store.lingerBeforeCommit(Duration.ofSeconds(1));
    long started = System.nanoTime();
    long lingered = writesForTrickle(store, metrics, "lingered");
    long tookMillis = (System.nanoTime() - started) / 1_000_000;

    assertThat(lingered).as("8 requests within 210 ms, each waiting up to 1 s for company").isEqualTo(1);
    assertThat(alone).as("the same without a linger").isGreaterThan(1);
    assertThat(tookMillis).as("the first request waited out the linger").isGreaterThanOrEqualTo(950);
  }

  /** Eight ClusterIP requests 30 ms apart; the ConfigMap writes they took. */
  private static long writesForTrickle(ConfigMapAllocationStore store, StoreMetrics metrics, String prefix)
      throws Exception {
    long before = metrics.writes();
    List<CompletableFuture<Reservation>> answers = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      answers.add(store.reserve(service(prefix + i, false)));
      Thread.sleep(30);
    }
    CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
    return metrics.writes() - before;
  }

  // ---- values reserved ahead ------------------------------------------------------------------

  /** A replica reserving ahead, with anchored starts as deployed (a batch lands in one shard or two). */
  private ConfigMapAllocationStore reservingAhead(String cidr, StoreMetrics metrics, int batch, Duration freshFor,
      Duration flush) {
    return started(new AllocationEngine(PORTS, new AnchoredStart()), cidr, Duration.ofSeconds(3), metrics)
        .reserveAhead("replica-" + stores.size(), batch, freshFor, flush);
  }

  /** A replica reserving ahead on a freshly stored range, values fresh for 30 s, and its metrics. */
  private record Ahead(ConfigMapAllocationStore store, StoreMetrics metrics) {
  }

  private Ahead initializedReservingAhead(String cidr, int batch, Duration flush) {
    StoreMetrics metrics = StoreMetrics.unregistered();
    ConfigMapAllocationStore store = reservingAhead(cidr, metrics, batch, Duration.ofSeconds(30), flush);
    initialize(store);
    return new Ahead(store, metrics);
  }

  /**
   * Sends a first create, which finds its pools empty: it asks for a batch for each and is
   * answered from them once they are stored. Waits until {@code values} are reserved.
   */
  private static void firstCreateFillsThePools(ConfigMapAllocationStore store, StoreMetrics metrics, String name,
      boolean nodePort, long values) {
    store.reserve(service(name, nodePort)).join();
    await().atMost(Duration.ofSeconds(10)).until(() -> metrics.reservedAhead("reserved") >= values);
  }

  private RangeState stored(RangeKey key) {
    return RangeConfigMaps.decode(key, admin.configMaps().inNamespace(namespace).list().getItems());
  }

  private static Optional<Holder> holderIn(RangeState state, String value) {
    return state.entries().stream().filter(e -> e.value().equals(value)).map(RangeState.Entry::holder).findFirst();
  }

  @Test
  void createsAskingOnlyForDynamicValuesWriteNothingOfTheirOwnAndTheirHoldersAreNamedInOneLaterWrite() {
    Ahead ahead = initializedReservingAhead("10.96.0.0/20", 16, Duration.ofSeconds(2));
    ConfigMapAllocationStore store = ahead.store();
    StoreMetrics metrics = ahead.metrics();
    firstCreateFillsThePools(store, metrics, "first", true, 32);  // a batch for the addresses, one for the ports
    assertThat(metrics.reservedAhead("reserved")).isEqualTo(32);
    assertThat(metrics.reservedAhead("handed_out")).as("the first create waited for the batches and got its"
        + " address and port from them").isEqualTo(2);
    assertThat(metrics.batchWaits(true)).as("the first create's wait for the batches").isEqualTo(1);
    RangeState reservedIps = stored(V4);
    assertThat(reservedIps.entries()).filteredOn(e -> e.holder() != null && e.holder().isReservedAhead()).hasSize(16);

    long before = metrics.writes();
    List<Reservation> answers = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      CompletableFuture<Reservation> answer = store.reserve(service("r" + i, true));
      assertThat(answer).as("answered at once: its values' reservations are stored already").isCompleted();
      answers.add(answer.join());
    }
    assertThat(metrics.writes() - before).as("no write of their own").isZero();
    assertThat(metrics.batchWaits(true) + metrics.batchWaits(false)).as("only the first create's wait, none of"
        + " theirs").isEqualTo(1);
    assertThat(answers).extracting(r -> r.ips().get(0).address()).doesNotHaveDuplicates()
        .allSatisfy(ip -> assertThat(holderIn(reservedIps, ip.toString()).map(Holder::isReservedAhead)).contains(true));
    assertThat(answers).extracting(r -> r.ports().get(0).port()).doesNotHaveDuplicates();
    assertThat(store.holdsAnythingFor(Holder.service("default", "r0", ""))).isTrue();

    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      RangeState ips = stored(V4);
      RangeState ports = stored(RangeKey.nodePorts());
      for (int i = 0; i < answers.size(); i++) {
        Holder service = Holder.service("default", "r" + i, "");
        assertThat(holderIn(ips, answers.get(i).ips().get(0).address().toString())).contains(service);
        assertThat(holderIn(ports, String.valueOf(answers.get(i).ports().get(0).port()))).contains(service);
      }
    });
    // Six creates one by one would write twelve times (an address and a port each).
    assertThat(metrics.writes() - before).as("the holders of all six, in one write per shard they touch")
        .isLessThanOrEqualTo(4);
    await().atMost(Duration.ofSeconds(5)).until(() -> metrics.reservedAhead("recorded") == 14);
    assertThat(metrics.reservedAhead("handed_out")).isEqualTo(14);
  }

  /**
   * A pool's next batch names the holders of what the pool handed out before it, in the same
   * commit: those values were reserved near the same anchor, so the names go to the shard the batch
   * writes, without a write of their own.
   */
  @Test
  void aPoolsNextBatchNamesTheHoldersOfWhatItHandedOut() {
    Ahead ahead = initializedReservingAhead("10.96.0.0/20", 16, Duration.ofMinutes(5));  // no flush meanwhile
    ConfigMapAllocationStore store = ahead.store();
    StoreMetrics metrics = ahead.metrics();
    firstCreateFillsThePools(store, metrics, "first", false, 16);
    long commits = metrics.commits();
    long writes = metrics.writes();
    List<Reservation> answers = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      answers.add(store.reserve(service("r" + i, false)).join());  // r6 leaves 8 of 16: the next batch goes
    }

    // first and r0-r5, named by the batch r6 set off (r6 was handed out after it went)
    await().atMost(Duration.ofSeconds(10)).until(() -> metrics.reservedAhead("reserved") == 32
        && metrics.reservedAhead("recorded") == 7 && metrics.commits() > commits);
    RangeState ips = stored(V4);
    for (int i = 0; i < 6; i++) {
      assertThat(holderIn(ips, answers.get(i).ips().get(0).address().toString()))
          .contains(Holder.service("default", "r" + i, ""));
    }
    assertThat(metrics.commits() - commits).as("the batch and the names in one commit").isEqualTo(1);
    assertThat(metrics.writes() - writes).as("one write per shard they touch: one, or two where the batch"
        + " crossed into the next shard").isBetween(1L, 2L);
  }

  /**
   * Names due that no batch of their pool carried wait for company: here a NodePort's, queued
   * while the creates after it take only addresses, leaves with the addresses' next batch rather
   * than in a commit of its own.
   */
  @Test
  void namesDueWithoutABatchOfTheirPoolGoWithTheNextCommit() throws Exception {
    // Names are due 4 s after their values are handed out (looked for every 2 s), then wait for
    // company for up to 1.125 s (half of what a request may still get a write with a 3 s budget).
    Ahead ahead = initializedReservingAhead("10.96.0.0/20", 16, Duration.ofSeconds(4));
    ConfigMapAllocationStore store = ahead.store();
    StoreMetrics metrics = ahead.metrics();
    store.reserve(service("first", true)).join();  // an address and a port, once both batches are in
    long handedOut = System.nanoTime();  // no earlier than first's values were handed out
    await().atMost(Duration.ofSeconds(10)).until(() -> metrics.reservedAhead("reserved") == 32);
    for (int i = 0; i < 6; i++) {
      store.reserve(service("r" + i, false)).join();  // 9 addresses of 16 left: no batch yet
    }
    long commits = metrics.commits();

    // first's names are due, and waiting for company, from 4 s to 5.125 s after it was handed out.
    Thread.sleep(Math.max(0, 4500 - (System.nanoTime() - handedOut) / 1_000_000));
    assertThat(metrics.reservedAhead("recorded")).as("the due names wait for company").isZero();
    store.reserve(service("r6", false)).join();  // 8 left: the addresses' next batch goes

    await().atMost(Duration.ofSeconds(10)).until(() -> metrics.reservedAhead("recorded") == 8
        && metrics.commits() > commits);
    assertThat(metrics.commits() - commits).as("the batch and the due names, the port's too, in one commit")
        .isEqualTo(1);
    assertThat(stored(RangeKey.nodePorts()).entries()).as("first's port, named")
        .filteredOn(e -> Holder.service("default", "first", "").equals(e.holder())).hasSize(1);
  }

  @Test
  void aTightRangeGetsSmallerBatches() {
    // A /23 has 478 addresses in its dynamic band: batches of a 64th of that, 7, not 32.
    Ahead tight = initializedReservingAhead("10.96.0.0/23", 32, Duration.ofMinutes(5));
    firstCreateFillsThePools(tight.store(), tight.metrics(), "first", false, 7);
    assertThat(tight.metrics().reservedAhead("reserved")).isEqualTo(7);
    // All seven stay held by their reservations on record until the flush names the first create's.
    assertThat(stored(V4).entries()).filteredOn(e -> e.holder() != null && e.holder().isReservedAhead())
        .hasSize(7);
  }

  @Test
  void aRangeWithFewerThan64FreeInItsDynamicBandIsNeverHeldInPools() {
    Ahead small = initializedReservingAhead("10.96.0.0/26", 32, Duration.ofMinutes(5));
    Reservation answer = small.store().reserve(service("small", false)).join();
    assertThat(small.metrics().reservedAhead("reserved")).isZero();
    assertThat(holderIn(stored(V4), answer.ips().get(0).address().toString()))
        .as("written under its own name at once").contains(Holder.service("default", "small", ""));
  }

  @Test
  void anotherReplicaNeverGivesAValueReservedAheadYetItsValidatingCheckAcceptsIt() throws Exception {
    // A /23 has 478 addresses in its dynamic band: room for 64 batches of 4, so batches of 4.
    Ahead reserving = initializedReservingAhead("10.96.0.0/23", 4, Duration.ofMinutes(5));
    ConfigMapAllocationStore ahead = reserving.store();
    StoreMetrics metrics = reserving.metrics();
    ConfigMapAllocationStore other = replica("10.96.0.0/23");
    firstCreateFillsThePools(ahead, metrics, "warm", false, 4);
    IpAddress given = ahead.reserve(service("web", false)).join().ips().get(0).address();
    assertThat(metrics.reservedAhead("handed_out")).isEqualTo(2);  // warm's, then web's
    await().atMost(Duration.ofSeconds(10)).until(() -> other.holderOf(given).map(Holder::isReservedAhead).orElse(false));

    // The validating webhook on the other replica, for the Service that was given it: accepted, nothing written.
    Reservation checked = other.reserve(ReservationRequest.ips(Holder.service("default", "web", "uid-1"),
        List.of(IpClaim.specific(given)), false).withReservedAheadAsHeld()).get(5, TimeUnit.SECONDS);
    assertThat(checked.ips()).singleElement().satisfies(ip -> assertThat(ip.alreadyHeld()).isTrue());
    // Its mutating webhook, for a Service naming it: refused.
    assertThatThrownBy(() -> other.reserve(ReservationRequest.ips(Holder.service("default", "thief", ""),
        List.of(IpClaim.specific(given)), false)).join()).hasMessageContaining("already allocated");

    // The other replica fills the range and never gives a value reserved ahead.
    Set<String> reserved = new HashSet<>();
    stored(V4).entries().stream().filter(e -> e.holder() != null && e.holder().isReservedAhead())
        .forEach(e -> reserved.add(e.value()));
    assertThat(reserved).contains(given.toString());
    List<CompletableFuture<Reservation>> fill = new ArrayList<>();
    for (int i = 0; i < 520; i++) {
      fill.add(other.reserve(service("fill" + i, false)));
    }
    Set<String> givenByOther = new HashSet<>();
    for (CompletableFuture<Reservation> answer : fill) {
      try {
        givenByOther.add(answer.get(30, TimeUnit.SECONDS).ips().get(0).address().toString());
      } catch (java.util.concurrent.ExecutionException full) {
        assertThat(full).hasCauseInstanceOf(RangeFullException.class);
      }
    }
    assertThat(givenByOther).hasSizeGreaterThan(400).doesNotContainAnyElementsOf(reserved);
  }

  @Test
  void aRetriedCreateGetsTheSameValuesAndAValueTooOldIsNeverHandedOut() {
    Ahead ahead = initializedReservingAhead("10.96.0.0/20", 8, Duration.ofMinutes(5));
    ConfigMapAllocationStore store = ahead.store();
    StoreMetrics metrics = ahead.metrics();
    firstCreateFillsThePools(store, metrics, "warm", false, 8);
    Reservation first = store.reserve(service("web", false)).join();
    assertThat(store.reserve(service("web", false)).join()).isEqualTo(first);
    assertThat(metrics.reservedAhead("handed_out")).as("warm's, then web's once").isEqualTo(2);

    StoreMetrics staleMetrics = StoreMetrics.unregistered();
    ConfigMapAllocationStore stale = reservingAhead("10.96.0.0/20", staleMetrics, 8, Duration.ofMillis(1),
        Duration.ofMinutes(5));
    // stale-warm waits for a first batch, finds it too old and asks for a second, which frees the
    // first in its write: the stored reservations are the second batch once it is in.
    firstCreateFillsThePools(stale, staleMetrics, "stale-warm", false, 16);
    Set<Holder> tooOld = new HashSet<>();
    stored(V4).entries().stream().map(RangeState.Entry::holder)
        .filter(h -> h != null && h.isReservedAhead() && h.name().startsWith("replica-2-")).forEach(tooOld::add);
    assertThat(tooOld).hasSize(8);
    Reservation late = stale.reserve(service("late", false)).join();
    assertThat(staleMetrics.reservedAhead("handed_out")).as("every value it reserved is too old by now").isZero();
    assertThat(staleMetrics.reservedAhead("dropped")).isGreaterThanOrEqualTo(8);
    // The next batch frees them, in the same write.
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(stored(V4).entries())
        .extracting(RangeState.Entry::holder).doesNotContainAnyElementsOf(tooOld));
    assertThat(holderIn(stored(V4), late.ips().get(0).address().toString()))
        .contains(Holder.service("default", "late", ""));
  }

  @Test
  void releasesOnOneReplicaFreeTheValueForTheOther() {
    ConfigMapAllocationStore one = replica("10.96.0.0/24");
    initialize(one);
    ConfigMapAllocationStore two = replica("10.96.0.0/24");
    IpAddress address = IpAddress.parse("10.96.0.10");
    Holder dns = Holder.service("kube-system", "dns", "uid-1");
    one.reserve(ReservationRequest.ips(dns, List.of(IpClaim.specific(address)), false)).join();
    await().atMost(Duration.ofSeconds(10)).until(() -> two.holderOf(address).isPresent());
    assertThatThrownBy(() -> two.reserve(ReservationRequest.ips(Holder.service("a", "b", ""),
        List.of(IpClaim.specific(address)), false)).join()).hasMessageContaining("kube-system/dns");

    assertThat(one.releaseIp(address, dns).join()).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> two.holderOf(address).isEmpty());
    assertThat(two.reserve(ReservationRequest.ips(Holder.service("a", "b", ""), List.of(IpClaim.specific(address)),
        false)).join().ips()).hasSize(1);
  }

  @Test
  void aStoreThatLoadsOthersWritesWhenNeededLoadsFarLessYetNeverGrantsWhatTheyHold() {
    ConfigMapAllocationStore writer = replica("10.96.0.0/20");
    initialize(writer);
    StoreMetrics eagerMetrics = StoreMetrics.unregistered();
    ConfigMapAllocationStore eager = replica("10.96.0.0/20", eagerMetrics);
    StoreMetrics lazyMetrics = StoreMetrics.unregistered();
    ConfigMapAllocationStore lazy = replica("10.96.0.0/20", lazyMetrics, true);
    await().atMost(Duration.ofSeconds(10)).until(() -> eager.loadedOnce() && lazy.loadedOnce());
    long eagerLoads = eagerMetrics.shardLoads();
    long lazyLoads = lazyMetrics.shardLoads();

    // 40 writes to one shard, one after another: the eager store loads (nearly) each one.
    List<IpAddress> taken = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      taken.add(writer.reserve(service("web-" + i, false)).join().ips().get(0).address());
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> taken.stream().allMatch(a -> lazy.holderOf(a).isPresent()
        && eager.holderOf(a).isPresent()));
    long eagerLoaded = eagerMetrics.shardLoads() - eagerLoads;
    long lazyLoaded = lazyMetrics.shardLoads() - lazyLoads;
    assertThat(lazyLoaded).as("loads of the 40 writes: lazy %d, eager %d", lazyLoaded, eagerLoaded)
        .isLessThan(eagerLoaded / 2);

    // A change is applied to what is stored now, however recent: the writer's newest address is
    // refused at once, before the lazy store's idle load could have run (a static-band
    // address: the dynamic ones above never take it).
    IpAddress newest = writer.reserve(ReservationRequest.ips(Holder.service("default", "newest", ""),
        List.of(IpClaim.specific(IpAddress.parse("10.96.0.100"))), false)).join().ips().get(0).address();
    assertThatThrownBy(() -> lazy.reserve(ReservationRequest.ips(Holder.service("a", "b", ""),
        List.of(IpClaim.specific(newest)), false)).join()).hasMessageContaining("default/newest");
    assertThat(lazy.serviceRangeInUseOnlyBy("kubernetes")).as("a range check reads what is stored").isEqualTo(41);

    // So does the reconciler's comparison (else a value stored a moment ago looks unrecorded).
    IpAddress latest = writer.reserve(ReservationRequest.ips(Holder.service("default", "latest", ""),
        List.of(IpClaim.specific(IpAddress.parse("10.96.0.101"))), false)).join().ips().get(0).address();
    // Once its watch has brought the write (it may not have loaded it: it loads when needed).
    await().atMost(Duration.ofSeconds(10)).until(() -> admin.configMaps().inNamespace(namespace).list().getItems()
        .stream().allMatch(c -> c.getMetadata().getResourceVersion().equals(lazy.seenVersion(c.getMetadata().getName()))));
    assertThat(lazy.allocations()).extracting(Allocation::value).contains(latest.toString());
  }

  @Test
  void anotherReplicasWritesLoadOneShardEachNotTheWholeRange() {
    ConfigMapAllocationStore one = replica("10.96.0.0/16");
    initialize(one);
    StoreMetrics metrics = StoreMetrics.unregistered();
    ConfigMapAllocationStore two = replica("10.96.0.0/16", metrics);
    await().atMost(Duration.ofSeconds(10)).until(two::loadedOnce);
    long kindLoads = metrics.kindLoads();

    // Three addresses in three of the /16's shards (512 addresses each), and a NodePort.
    List<IpAddress> addresses = List.of(IpAddress.parse("10.96.0.10"), IpAddress.parse("10.96.100.10"),
        IpAddress.parse("10.96.200.10"));
    for (int i = 0; i < addresses.size(); i++) {
      one.reserve(new ReservationRequest(Holder.service("default", "web-" + i, ""),
          List.of(IpClaim.specific(addresses.get(i))), i == 0 ? List.of(PortClaim.specific(30100)) : List.of(), false))
          .join();
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> addresses.stream().allMatch(a -> two.holderOf(a).isPresent())
        && two.holderOfNodePort(30100).isPresent());
    assertThat(two.holderOf(addresses.get(1))).contains(Holder.service("default", "web-1", ""));
    assertThatThrownBy(() -> two.reserve(ReservationRequest.ips(Holder.service("a", "b", ""),
        List.of(IpClaim.specific(addresses.get(2))), false)).join()).hasMessageContaining("default/web-2");

    // A release loads one shard too, and writes from the second replica reach the first.
    assertThat(one.releaseIp(addresses.get(0), Holder.service("default", "web-0", "")).join()).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> two.holderOf(addresses.get(0)).isEmpty());
    Reservation api = two.reserve(service("api", true)).join();
    await().atMost(Duration.ofSeconds(10)).until(() -> one.holderOf(api.ips().get(0).address()).isPresent()
        && one.holderOfNodePort(api.ports().get(0).port()).isPresent());

    assertThat(metrics.shardLoads()).as("shards loaded one at a time").isGreaterThanOrEqualTo(4);
    assertThat(metrics.kindLoads()).as("whole loads after the first").isEqualTo(kindLoads);
    RangeState stored = RangeConfigMaps.decode(V4, admin.configMaps().inNamespace(namespace).list().getItems());
    assertThat(stored.entries()).extracting(RangeState.Entry::value).containsExactlyInAnyOrder("10.96.100.10",
        "10.96.200.10", api.ips().get(0).address().toString());
  }

  @Test
  void aDeletedOrCorruptShardStopsTheRangeUntilItIsRebuilt() {
    ConfigMapAllocationStore store = replica("10.96.0.0/16");
    initialize(store);
    // Stored in shard 0; the cluster's picture below never shows its object (it was created
    // after the reconciler's informers last looked).
    IpAddress before = IpAddress.parse("10.96.0.5");
    store.reserve(ReservationRequest.ips(Holder.service("default", "before", ""), List.of(IpClaim.specific(before)),
        false)).join();
    assertThat(admin.configMaps().inNamespace(namespace).withLabels(ShardNames.selector(V4)).list().getItems())
        .as("a /16 in 128 shards of 512").hasSize(128);

    admin.configMaps().inNamespace(namespace).withName("subrange-service-ips-kubernetes-ipv4-3").delete();
    await().atMost(Duration.ofSeconds(10)).until(() -> store.rangesToRebuild().containsKey(V4));
    assertThat(store.rangesToRebuild().get(V4)).contains("subrange-service-ips-kubernetes-ipv4-3 is missing");
    assertThatThrownBy(() -> store.reserve(service("during", false)).join()).hasMessageContaining("not loaded yet");

    AllocationEngine rebuilt = store.emptyCopyOf(V4);
    rebuilt.reserve(ReservationRequest.ips(Holder.service("default", "kept", "u"),
        List.of(IpClaim.kept(IpAddress.parse("10.96.7.7"))), false));
    RangeState picture = rebuilt.export(V4);
    store.install(picture).join();
    assertThat(store.rangesToRebuild()).isEmpty();
    assertThat(store.holderOf(IpAddress.parse("10.96.7.7"))).contains(Holder.service("default", "kept", "u"));
    assertThat(store.holderOf(before)).as("stored while the picture was made: kept, never handed out again")
        .contains(Holder.service("default", "before", ""));

    // A second install of the same (now stale) picture, as a retried rebuild would queue, must not
    // write over what was stored since.
    IpAddress since = store.reserve(service("after", false)).join().ips().get(0).address();
    store.install(picture).join();
    assertThat(store.holderOf(since)).as("stored after the rebuild").isPresent();
    assertThat(RangeConfigMaps.decode(V4, admin.configMaps().inNamespace(namespace).withLabels(
        ShardNames.selector(V4)).list().getItems()).entries()).extracting(RangeState.Entry::value)
        .contains(since.toString());

    ConfigMap head = admin.configMaps().inNamespace(namespace).withName("subrange-service-ips-kubernetes-ipv4-0").get();
    head.getBinaryData().put("holders.gz", "bm90IGd6aXA=");
    admin.configMaps().inNamespace(namespace).resource(head).update();
    await().atMost(Duration.ofSeconds(10)).until(() -> store.rangesToRebuild().containsKey(V4));
    assertThat(store.rangesToRebuild().get(V4)).contains("not gzip");
  }

  @Test
  void podCidrsAndDualStackRangesAreStoredToo() {
    ConfigMapAllocationStore store = replica("10.96.0.0/20");
    store.addServiceRange("kubernetes", Cidr.parse("fd00:96::/64"));
    store.addClusterCidr(ClusterCidr.ipv4("pods", null, 8, "10.244.0.0/16"));
    initialize(store);
    Reservation dual = store.reserve(new ReservationRequest(Holder.service("default", "dual", ""),
        List.of(IpClaim.dynamic(IpFamily.IPV4), IpClaim.dynamic(IpFamily.IPV6)), List.of(), false)).join();
    String blocks = store.reservePodCidrs(NodeView.named("n1"), List.of(), false).join().podCidrs().toString();

    ConfigMapAllocationStore other = replica("10.96.0.0/20");
    other.addServiceRange("kubernetes", Cidr.parse("fd00:96::/64"));
    other.addClusterCidr(ClusterCidr.ipv4("pods", null, 8, "10.244.0.0/16"));
    assertThat(other.rangesToRebuild()).isEmpty();
    assertThat(other.holderOf(dual.ips().get(1).address())).contains(Holder.service("default", "dual", ""));
    assertThat(other.allocations()).anySatisfy(a -> assertThat("[" + a.value() + "]").isEqualTo(blocks));
    assertThat(admin.configMaps().inNamespace(namespace).withLabels(Map.of("subrange.io/range-kind", "service-ips",
        "subrange.io/family", "ipv6")).list().getItems()).as("a /64 in 16 hash shards").hasSize(16);
  }
}
