package io.subrange.webhook.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.subrange.allocator.band.StartStrategy;
import io.subrange.allocator.band.ThreadLocalRandomGenerator;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.port.PortRange;
import io.subrange.allocator.store.AllocationEngine;
import io.subrange.allocator.store.Holder;
import io.subrange.allocator.store.PortClaim;
import io.subrange.allocator.store.RangeKey;
import io.subrange.allocator.store.Reservation;
import io.subrange.allocator.store.ReservationRequest;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a commit sends for a shard when its writes lose (409): after the first loss a plain read,
 * from the second failed attempt on a turn (a merge patch), and the write that follows drops the
 * turn's stamp; that a loss holds back only the requests that changed the shard lost, and the
 * other requests of their objects, not the rest of its range; and what is left of a commit still losing when the store closes, or asked of
 * it after. fabric8's mock API server stores the shards; the 409s are its expectations, since a real
 * API server loses a race only when another writer makes it.
 */
@EnableKubernetesMockClient(crud = true)
class CommitRetryTest {

  private static final String NS = "subrange-state";
  private static final PortRange PORTS = PortRange.parse("30000-32767");
  private static final int PORT = 31000;
  /** In the NodePorts' first shard; {@link #PORT} is in the second (512 ports each). */
  private static final int PORT_IN_ANOTHER_SHARD = 30100;
  /**
   * Dynamic NodePorts start at the dynamic band's first port, in the first shard, so a test knows
   * where one falls; the other tests ask for specific ports.
   */
  private static final StartStrategy FROM_THE_BAND_START = new StartStrategy() {
    @Override
    public int startIn(int bandSize) {
      return 0;
    }

    @Override
    public long startInUnsigned(long bandSize) {
      return 0;
    }
  };

  KubernetesClient client;
  KubernetesMockServer server;

  private ConfigMapAllocationStore store;
  private final StoreMetrics metrics = StoreMetrics.unregistered();
  private String shardPath;

  @BeforeEach
  void store() {
    AllocationEngine engine = new AllocationEngine(PORTS, FROM_THE_BAND_START, ThreadLocalRandomGenerator.INSTANCE,
        Clock.systemUTC());
    store = new ConfigMapAllocationStore(engine, client, NS, Duration.ofSeconds(3), metrics);
    store.start(Duration.ofSeconds(10));
    store.addServiceRange("kubernetes", Cidr.parse("10.96.0.0/24"));
    for (RangeKey key : store.rangesToRebuild().keySet()) {
      store.install(store.emptyCopyOf(key).export(key)).join();
    }
    shardPath = pathOfShardHolding(PORT);
  }

  @AfterEach
  void close() {
    store.close();
  }

  @Test
  void oneLossIsFollowedByAPlainRead() throws Exception {
    loses(1);

    assertThat(requestsForTheShardWhile(this::reservePort)).containsExactly("PUT", "GET", "PUT");
    assertThat(metrics.turnsTaken()).isZero();
  }

  @Test
  void aSecondLossIsFollowedByATurnWhichTheNextWriteEnds() throws Exception {
    loses(2);

    assertThat(requestsForTheShardWhile(this::reservePort)).containsExactly("PUT", "GET", "PUT", "PATCH", "PUT");
    assertThat(metrics.turnsTaken()).isEqualTo(1);
    assertThat(client.configMaps().inNamespace(NS).withName(shardPath.substring(shardPath.lastIndexOf('/') + 1))
        .get().getMetadata().getAnnotations()).doesNotContainKey(RangeConfigMaps.WRITE_TURN_ANNOTATION);
    assertThat(store.holderOfNodePort(PORT)).contains(Holder.service("default", "web", ""));
  }

  @Test
  void aReleaseWhoseShardWasWrittenSaysItFreedTheValueWhenAnotherShardOfItsRangeLoses() throws Exception {
    Holder db = Holder.service("default", "db", "");
    store.reserve(new ReservationRequest(db, List.of(), List.of(PortClaim.specific(PORT_IN_ANOTHER_SHARD)), false))
        .join();
    loses(1);
    store.lingerBeforeCommit(Duration.ofMillis(500));  // so the release and the reservation share a commit

    // Both queued from this thread at once (not through a pool, which on a busy machine took
    // longer than the linger to start the second).
    CompletableFuture<Boolean> freed = store.releaseNodePort(PORT_IN_ANOTHER_SHARD, db);
    CompletableFuture<Reservation> reserved = store.reserve(new ReservationRequest(
        Holder.service("default", "web", ""), List.of(), List.of(PortClaim.specific(PORT)), false));
    reserved.get(10, TimeUnit.SECONDS);

    // Its shard is written on the first attempt. Held back for the reservation's lost shard, it
    // would be applied again to a value already free and answer false: the reconciler would not
    // count the release.
    assertThat(freed.get(1, TimeUnit.SECONDS)).as("the release freed the port").isTrue();
    // A commit is counted just after it answers its requests: wait for the count, then see that
    // no third commit follows (the reservation for db, then one for the release and the reservation).
    for (long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2); metrics.commits() < 2
        && System.nanoTime() < until; ) {
      Thread.sleep(10);
    }
    Thread.sleep(200);
    assertThat(metrics.commits()).as("commits: db's reservation, then the release with the reservation").isEqualTo(2);
    assertThat(metrics.conflicts()).isEqualTo(1);
    assertThat(store.holderOfNodePort(PORT_IN_ANOTHER_SHARD)).isEmpty();
    assertThat(store.holderOfNodePort(PORT)).contains(Holder.service("default", "web", ""));
  }

  @Test
  void requestsOfOneObjectAreAnsweredOnlyOnceAllTheirShardsAreWritten() throws Exception {
    Holder web = Holder.service("default", "web", "");
    loses(pathOfShardHolding(PORT_IN_ANOTHER_SHARD), 1);  // the first shard, where dynamic ports start
    store.lingerBeforeCommit(Duration.ofMillis(500));  // so both requests share a commit

    // The first takes a dynamic port in the first shard, which loses. The second gets that port
    // back (changing nothing there) and takes PORT, whose shard is written: answered then, it would
    // name a port that is not stored, since the first, applied again, gets PORT back instead.
    CompletableFuture<Reservation> first = store.reserve(new ReservationRequest(web, List.of(),
        List.of(PortClaim.dynamic()), false));
    CompletableFuture<Reservation> second = store.reserve(new ReservationRequest(web, List.of(),
        List.of(PortClaim.dynamic(), PortClaim.specific(PORT)), false));
    List<Integer> answered = new ArrayList<>();
    for (Reservation reservation : List.of(first.get(10, TimeUnit.SECONDS), second.get(10, TimeUnit.SECONDS))) {
      reservation.ports().forEach(assignment -> answered.add(assignment.port()));
    }

    assertThat(metrics.conflicts()).as("the first shard's write lost").isEqualTo(1);
    for (int port : answered) {
      assertThat(store.holderOfNodePort(port)).as("port %d, answered to %s", port, web).contains(web);
    }
  }

  @Test
  void workThatArrivedDuringACommitIsAnsweredWhenTheStoreClosesMidCommit() throws Exception {
    loses(1000);
    drainRequests();
    CompletableFuture<Void> reservation = CompletableFuture.runAsync(this::reservePort);
    // By the fifth lost write the commit backs off for 40 ms or more between attempts, so what
    // arrives now is taken in by its next attempt (to run after it) rather than left queued.
    awaitWritesOfTheShard(5);
    CompletableFuture<Void> between = store.deleteStateOfRangesNotServed();
    awaitWritesOfTheShard(2);

    store.close();

    assertThatThrownBy(() -> between.get(2, TimeUnit.SECONDS)).hasMessageContaining("shutting down");
    assertThatThrownBy(reservation::join).isInstanceOf(CompletionException.class)
        .hasMessageContaining("could not store");
  }

  @Test
  void workAskedOfAClosedStoreIsAnsweredAtOnce() throws InterruptedException {
    // Closed only once its start's requests are over, as after the other tests: a watch closed
    // while the mock server still set it up held the server's shutdown for its 10 s timeout.
    drainRequests();
    store.close();

    assertThatThrownBy(() -> store.deleteStateOfRangesNotServed().get(1, TimeUnit.SECONDS))
        .hasMessageContaining("store is not running");
  }

  /** The shard's next {@code times} writes lose to "another writer". */
  private void loses(int times) {
    loses(shardPath, times);
  }

  /** The next {@code times} writes of the shard at {@code path} lose to "another writer". */
  private void loses(String path, int times) {
    server.expect().put().withPath(path).andReturn(409, new StatusBuilder().withCode(409).withReason("Conflict")
        .withMessage("Operation cannot be fulfilled on configmaps: the object has been modified").build()).times(times);
  }

  /** The API path of the NodePort shard holding {@code port}. */
  private static String pathOfShardHolding(int port) {
    ShardLayout layout = ShardLayout.of(RangeKey.nodePorts(), ShardEncoding.RANGE_ALLOCATION, PORTS.toString());
    int shard = (int) ((port - PORTS.first()) / layout.span());
    return "/api/v1/namespaces/" + NS + "/configmaps/" + ShardNames.name(RangeKey.nodePorts(), shard);
  }

  private void reservePort() {
    store.reserve(new ReservationRequest(Holder.service("default", "web", ""), List.of(),
        List.of(PortClaim.specific(PORT)), false)).join();
  }

  private void drainRequests() throws InterruptedException {
    while (server.takeRequest(100, TimeUnit.MILLISECONDS) != null) {
      // what the store's start and the ranges' installation sent
    }
  }

  /** Waits until the shard has been written {@code count} more times (each lost, here). */
  private void awaitWritesOfTheShard(int count) throws InterruptedException {
    for (int seen = 0; seen < count; ) {
      RecordedRequest request = server.takeRequest(5, TimeUnit.SECONDS);
      assertThat(request).as("write %d of the shard", seen + 1).isNotNull();
      if (request.getPath().equals(shardPath) && request.getMethod().equals("PUT")) {
        seen++;
      }
    }
  }

  /** The methods of the requests for the shard itself (not lists or watches) while {@code action} ran. */
  private List<String> requestsForTheShardWhile(Runnable action) throws InterruptedException {
    drainRequests();
    action.run();
    List<String> methods = new ArrayList<>();
    for (RecordedRequest request; (request = server.takeRequest(100, TimeUnit.MILLISECONDS)) != null;) {
      if (request.getPath().equals(shardPath)) {
        methods.add(request.getMethod());
      }
    }
    return methods;
  }
}
