package io.subrange.webhook.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.podcidr.ClusterCidr;
import io.subrange.allocator.podcidr.NodeView;
import io.subrange.allocator.port.PortRange;
import io.subrange.allocator.store.AllocationEngine;
import io.subrange.allocator.store.Holder;
import io.subrange.allocator.store.IpClaim;
import io.subrange.allocator.store.PortClaim;
import io.subrange.allocator.store.RangeKey;
import io.subrange.allocator.store.ReservationRequest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the store loads into its engine when stored shards change: a bitmap shard another replica
 * wrote (a Service range, the NodePorts) loads alone; the whole kind loads when the shard cannot
 * be read, is gone, belongs to a range that overlaps another or that has a problem, or is a pod
 * CIDR shard; and nothing loads for the echo of this process's own write or for a version no newer
 * than the loaded one.
 *
 * <p>A "writer" engine plays another replica: its ranges are encoded as they would be stored, and
 * the shards are fed to the watch handler by hand. The "reader" engine is this process's, loaded
 * through {@link StoredShards}. The reread and reload paths run against fabric8's mock API server.
 */
@EnableKubernetesMockClient(crud = true)
class StoredShardsTest {

  private static final String NS = "subrange-system";
  private static final PortRange PORTS = PortRange.parse("30000-32767");
  private static final RangeKey V4 = RangeKey.serviceIps("kubernetes", IpFamily.IPV4);
  private static final RangeKey NODE_PORTS = RangeKey.nodePorts();
  private static final RangeKey PODS = RangeKey.podCidrs("pods");
  private static final Holder WEB = Holder.service("default", "web", "uid-web");
  private static final Holder API = Holder.service("default", "api", "uid-api");
  /** Offset 1030 of 10.96.0.0/16 (offsets count from 10.96.0.1): shard 2, of 512 offsets each. */
  private static final IpAddress IN_SHARD_2 = IpAddress.parse("10.96.4.7");

  KubernetesClient client;
  KubernetesMockServer server;

  private final StoreMetrics metrics = StoreMetrics.unregistered();
  private final AllocationEngine writer = new AllocationEngine(PORTS, new SplittableRandom(1));
  private final AllocationEngine reader = new AllocationEngine(PORTS, new SplittableRandom(2));
  /** The shards as stored, by name (the tests that do not use the mock API server). */
  private final Map<String, ConfigMap> stored = new HashMap<>();
  private final AtomicInteger wakes = new AtomicInteger();
  private long version = 100;
  private StoredShards shards;
  private ResourceEventHandler<ConfigMap> watch;
  private long shardLoadsBefore;
  private long kindLoadsBefore;

  @BeforeEach
  void ranges() {
    writer.addServiceRange("kubernetes", Cidr.parse("10.96.0.0/16"));
    reader.addServiceRange("kubernetes", Cidr.parse("10.96.0.0/16"));
    reader.requireLoadedState();  // as ConfigMapAllocationStore does: nothing serves before its first load
    shards = new StoredShards(client, NS, metrics);
    watch = shards.watch(wakes::incrementAndGet);
  }

  // ---- one shard alone ----------------------------------------------------------------------

  @Test
  void aServiceShardAnotherReplicaWroteLoadsAlone() {
    loadEverything();
    writer.reserve(ReservationRequest.ips(WEB, List.of(IpClaim.specific(IN_SHARD_2)), false));
    List<ConfigMap> changed = store(writer, V4);
    assertThat(changed).extracting(StoredShardsTest::nameOf).containsExactly(ShardNames.name(V4, 2));
    ConfigMap shard = changed.get(0);

    watch.onUpdate(shards.loaded(nameOf(shard)), shard);
    assertThat(wakes).as("the committer is told").hasValue(1);
    shards.refresh(reader);

    assertThat(reader.holderOf(IN_SHARD_2)).contains(WEB);
    assertThat(reader.export(V4).allocation()).isEqualTo(writer.export(V4).allocation());
    assertLoads(1, 0);
    assertThat(shards.loaded(nameOf(shard))).isSameAs(shard);
    assertThat(shards.problem(V4)).isNull();

    shards.refresh(reader);
    assertLoads(1, 0);
  }

  @Test
  void aNodePortShardAnotherReplicaWroteLoadsAlone() {
    loadEverything();
    writer.reserve(new ReservationRequest(WEB, List.of(), List.of(PortClaim.specific(31000)), false));
    List<ConfigMap> changed = store(writer, NODE_PORTS);
    // Port 31000 is offset 1000 of 30000-32767: shard 1, of 512 ports each.
    assertThat(changed).extracting(StoredShardsTest::nameOf).containsExactly(ShardNames.name(NODE_PORTS, 1));
    ConfigMap shard = changed.get(0);

    watch.onUpdate(shards.loaded(nameOf(shard)), shard);
    assertThat(wakes).hasValue(1);
    shards.refresh(reader);

    assertThat(reader.holderOfNodePort(31000)).contains(WEB);
    assertThat(reader.export(NODE_PORTS).allocation()).isEqualTo(writer.export(NODE_PORTS).allocation());
    assertLoads(1, 0);
    assertThat(shards.loaded(nameOf(shard))).isSameAs(shard);
  }

  // ---- nothing to load ----------------------------------------------------------------------

  @Test
  void theEchoOfOurOwnWriteLoadsNothingWhetherItComesBeforeOrAfterTheAnswer() {
    loadEverything();
    String name = ShardNames.name(V4, 2);

    // The watch event comes before the API server's answer.
    reader.reserve(ReservationRequest.ips(WEB, List.of(IpClaim.specific(IN_SHARD_2)), false));
    ConfigMap first = writeShard2(nextVersion(), false);
    assertThat(wakes).as("no news").hasValue(0);
    shards.refresh(reader);
    assertLoads(0, 0);
    shards.written(first);
    assertThat(shards.loaded(name)).isSameAs(first);

    // The answer comes first, then the watch event.
    reader.reserve(ReservationRequest.ips(API, List.of(IpClaim.specific(IpAddress.parse("10.96.4.8"))), false));
    ConfigMap second = writeShard2(nextVersion(), true);
    assertThat(wakes).hasValue(0);
    shards.refresh(reader);
    assertLoads(0, 0);
    assertThat(shards.loaded(name)).isSameAs(second);
    assertThat(reader.holderOf(IN_SHARD_2)).contains(WEB);
    assertThat(reader.holderOf(IpAddress.parse("10.96.4.8"))).contains(API);
  }

  /**
   * Writes shard 2 of the reader's Service range as the committer does (compare-and-swap on the
   * loaded version, {@code writing} first) and has the watch bring the stored version; returns it.
   */
  private ConfigMap writeShard2(String storedVersion, boolean answerFirst) {
    String name = ShardNames.name(V4, 2);
    ConfigMap base = shards.loaded(name);
    ConfigMap desired = RangeConfigMaps.encodeWindow(base, reader.exportWindow(V4, 2 * 512, 3 * 512),
        LedgerMemo.NONE);
    desired.getMetadata().setResourceVersion(base.getMetadata().getResourceVersion());
    assertThat(RangeConfigMaps.sameContent(base, desired)).as("the write changes the shard").isFalse();
    shards.writing(desired);
    ConfigMap written = withVersion(desired, storedVersion);
    if (answerFirst) {
      shards.written(written);
    }
    watch.onUpdate(base, withVersion(written, storedVersion));
    return written;
  }

  @Test
  void anEventNoNewerThanTheLoadedVersionLoadsNothing() {
    loadEverything();
    String name = ShardNames.name(V4, 2);
    String loadedVersion = shards.loaded(name).getMetadata().getResourceVersion();
    writer.reserve(ReservationRequest.ips(WEB, List.of(IpClaim.specific(IN_SHARD_2)), false));
    List<ConfigMap> changed = store(writer, V4);
    assertThat(changed).hasSize(1);
    ConfigMap newer = changed.get(0);
    // Versions compare as numbers: "99" sorts after the loaded version as text, yet is older.
    assertThat("99".compareTo(loadedVersion)).as("99 after %s as text", loadedVersion).isPositive();
    assertThat(Long.parseLong(loadedVersion)).isGreaterThan(99);

    watch.onUpdate(shards.loaded(name), withVersion(newer, loadedVersion));  // a resync
    watch.onUpdate(shards.loaded(name), withVersion(newer, "99"));  // an old event, late
    shards.refresh(reader);

    assertThat(wakes).hasValue(0);
    assertLoads(0, 0);
    assertThat(reader.holderOf(IN_SHARD_2)).isEmpty();
    assertThat(shards.latest(name).getMetadata().getResourceVersion()).isEqualTo(loadedVersion);
    assertThat(shards.loaded(name).getMetadata().getResourceVersion()).isEqualTo(loadedVersion);

    // The version that is newer loads.
    watch.onUpdate(shards.loaded(name), newer);
    shards.refresh(reader);
    assertThat(wakes).hasValue(1);
    assertLoads(1, 0);
    assertThat(reader.holderOf(IN_SHARD_2)).contains(WEB);
  }

  @Test
  void resourceVersionsCompareAsNumbersAndOtherwiseAnyDifferenceIsNews() {
    assertThat(StoredShards.newer(withVersion("100"), withVersion("99"))).isTrue();
    assertThat(StoredShards.newer(withVersion("99"), withVersion("100"))).isFalse();
    assertThat(StoredShards.newer(withVersion("100"), withVersion("100"))).isFalse();
    assertThat(StoredShards.newer(withVersion("abc"), withVersion("abd"))).isTrue();
    assertThat(StoredShards.newer(withVersion("abc"), withVersion("abc"))).isFalse();
    assertThat(StoredShards.newer(withVersion("7"), withVersion(null))).isTrue();
  }

  // ---- the whole kind -----------------------------------------------------------------------

  @Test
  void aShardWhoseDataIsNotBase64LoadsItsWholeKindWhichReportsAProblem() {
    aCorruptShardLoadsItsWholeKind("not base64!", "not base64");
  }

  @Test
  void aShardWhoseBitmapIsLongerThanItsSpanLoadsItsWholeKindWhichReportsAProblem() {
    byte[] bits = new byte[ShardLayout.MIN_SHARD_SPAN / 8 + 1];
    bits[0] = 1;  // big-endian: offset 512 of a shard of 512
    aCorruptShardLoadsItsWholeKind(Base64.getEncoder().encodeToString(bits), "longer than its 512 offsets");
  }

  private void aCorruptShardLoadsItsWholeKind(String allocation, String why) {
    loadEverything();
    String name = ShardNames.name(V4, 3);
    ConfigMap good = shards.loaded(name);
    ConfigMap corrupt = new ConfigMapBuilder(withVersion(good, nextVersion()))
        .addToBinaryData(RangeConfigMaps.ALLOCATION, allocation).build();
    assertThatThrownBy(() -> RangeConfigMaps.decodeWindow(V4, corrupt, LedgerMemo.NONE))
        .as("no window can be read from it").hasMessageContaining(why);

    watch.onUpdate(good, corrupt);
    shards.refresh(reader);

    assertLoads(0, 1);
    assertThat(shards.problem(V4)).contains(why);
    assertThat(reader.unknownRanges()).as("the range hands out nothing").containsExactly(V4);
    assertThat(shards.problem(NODE_PORTS)).isNull();

    // A range with a problem loads whole again, never a shard alone: a good version clears it.
    ConfigMap repaired = withVersion(good, nextVersion());
    watch.onUpdate(corrupt, repaired);
    shards.refresh(reader);
    assertLoads(0, 2);
    assertThat(shards.problem(V4)).isNull();
    assertThat(reader.unknownRanges()).isEmpty();
    assertThat(shards.loaded(name)).isSameAs(repaired);
  }

  @Test
  void aDeletedShardLoadsItsWholeKindWhichFindsItMissing() {
    loadEverything();
    String name = ShardNames.name(V4, 5);

    watch.onDelete(shards.latest(name), false);
    assertThat(wakes).hasValue(1);
    assertThat(shards.latest(name)).isNull();
    shards.refresh(reader);

    assertLoads(0, 1);
    assertThat(shards.problem(V4)).contains(name + " is missing");
    assertThat(reader.unknownRanges()).containsExactly(V4);
  }

  @Test
  void aShardOfARangeThatOverlapsAnotherLoadsWithItsWholeKind() {
    writer.addServiceRange("inner", Cidr.parse("10.96.8.0/24"));
    reader.addServiceRange("inner", Cidr.parse("10.96.8.0/24"));
    loadEverything();
    writer.reserve(ReservationRequest.ips(WEB, List.of(IpClaim.specific(IN_SHARD_2)), false));
    List<ConfigMap> changed = store(writer, V4);
    assertThat(changed).as("10.96.4.7 is outside the inner range").hasSize(1);
    ConfigMap shard = changed.get(0);

    watch.onUpdate(shards.loaded(nameOf(shard)), shard);
    shards.refresh(reader);

    assertLoads(0, 1);
    assertThat(reader.holderOf(IN_SHARD_2)).contains(WEB);
    assertThat(shards.problem(V4)).isNull();
    assertThat(shards.problem(RangeKey.serviceIps("inner", IpFamily.IPV4))).isNull();
    assertThat(shards.loaded(nameOf(shard))).isSameAs(shard);
  }

  @Test
  void aShardOfAKindThatLoadsWholeAnywayIsNotAlsoLoadedAlone() {
    loadEverything();
    writer.reserve(ReservationRequest.ips(WEB, List.of(IpClaim.specific(IN_SHARD_2)), false));
    List<ConfigMap> changed = store(writer, V4);
    assertThat(changed).hasSize(1);
    ConfigMap shard = changed.get(0);

    assertThat(shards.markStale(V4)).isTrue();
    watch.onUpdate(shards.loaded(nameOf(shard)), shard);
    shards.refresh(reader);

    assertLoads(0, 1);
    assertThat(reader.holderOf(IN_SHARD_2)).contains(WEB);
    assertThat(shards.loaded(nameOf(shard))).isSameAs(shard);
  }

  @Test
  void podCidrShardsAlwaysLoadWithTheirWholeKind() {
    writer.addClusterCidr(ClusterCidr.ipv4("pods", null, 8, "10.244.0.0/16"));
    reader.addClusterCidr(ClusterCidr.ipv4("pods", null, 8, "10.244.0.0/16"));
    loadEverything();
    writer.reservePodCidrs(NodeView.named("n1"), List.of(), false);
    List<ConfigMap> changed = store(writer, PODS);
    assertThat(changed).extracting(StoredShardsTest::nameOf).containsExactly(ShardNames.name(PODS, 0));
    ConfigMap shard = changed.get(0);
    assertThat(ShardLayout.placeOf(shard)).as("not a bitmap shard").isEmpty();

    watch.onUpdate(shards.loaded(nameOf(shard)), shard);
    assertThat(wakes).hasValue(1);
    shards.refresh(reader);

    assertLoads(0, 1);
    assertThat(reader.allocations()).filteredOn(a -> a.kind() == RangeKey.Kind.POD_CIDRS).singleElement()
        .satisfies(a -> assertThat(a.holder().name()).isEqualTo("n1"));
    assertThat(shards.loaded(nameOf(shard))).isSameAs(shard);
    assertThat(shards.problem(PODS)).isNull();
  }

  // ---- read again from the API (a write lost or failed) -------------------------------------

  @Test
  void aShardReadAgainAfterALostWriteLoadsAlone() {
    loadEverythingFromTheApi();
    ConfigMap theirs = anotherReplicaWritesShard2ToTheApi();
    String name = nameOf(theirs);

    shards.reread(Set.of(name));
    assertThat(shards.latest(name).getMetadata().getResourceVersion())
        .isEqualTo(theirs.getMetadata().getResourceVersion());

    assertShard2LoadsAloneAt(theirs);
  }

  @Test
  void aTurnTakenAtAShardStampsItAndLoadsItAloneAtTheStampedVersion() {
    loadEverythingFromTheApi();
    ConfigMap theirs = anotherReplicaWritesShard2ToTheApi();
    String name = nameOf(theirs);

    shards.rereadTakingTurn(Set.of(name));
    ConfigMap stamped = client.configMaps().inNamespace(NS).withName(name).get();
    assertThat(stamped.getMetadata().getAnnotations()).containsKey(RangeConfigMaps.WRITE_TURN_ANNOTATION);
    assertThat(StoredShards.newer(stamped, theirs)).as("the turn moved the version on").isTrue();
    assertThat(stamped.getBinaryData()).isEqualTo(theirs.getBinaryData());
    assertThat(shards.latest(name).getMetadata().getResourceVersion())
        .isEqualTo(stamped.getMetadata().getResourceVersion());
    assertThat(metrics.turnsTaken()).isEqualTo(1);

    assertShard2LoadsAloneAt(stamped);
  }

  @Test
  void withoutTheRightToPatchATurnIsAPlainRead() {
    loadEverythingFromTheApi();
    ConfigMap theirs = anotherReplicaWritesShard2ToTheApi();
    String name = nameOf(theirs);
    server.expect().patch().withPath("/api/v1/namespaces/" + NS + "/configmaps/" + name)
        .andReturn(403, new StatusBuilder().withCode(403).withReason("Forbidden").withMessage("configmaps \"" + name
            + "\" is forbidden: User cannot patch resource").build()).once();

    shards.rereadTakingTurn(Set.of(name));
    assertThat(metrics.turnsTaken()).isZero();
    assertThat(shards.latest(name).getMetadata().getResourceVersion())
        .isEqualTo(theirs.getMetadata().getResourceVersion());
    assertShard2LoadsAloneAt(theirs);

    // The API server would now take the patch (the refusal was once), but this process no longer tries.
    shards.rereadTakingTurn(Set.of(name));
    assertThat(client.configMaps().inNamespace(NS).withName(name).get().getMetadata().getAnnotations())
        .doesNotContainKey(RangeConfigMaps.WRITE_TURN_ANNOTATION);
    assertThat(metrics.turnsTaken()).isZero();
  }

  @Test
  void aTurnAnotherProcessTookLatelyIsLeftAloneAndAnOlderOneIsNot() {
    loadEverythingFromTheApi();
    ConfigMap theirs = anotherReplicaWritesShard2ToTheApi();
    String name = nameOf(theirs);
    // A little ahead, as another node's clock may be: still within the turn however slow this test runs.
    String recent = Instant.now().plusMillis(100).toString();
    watch.onUpdate(theirs, anotherProcessStamps(name, recent));

    shards.rereadTakingTurn(Set.of(name));
    assertThat(metrics.turnsTaken()).as("its turn is left alone").isZero();
    assertThat(stampOf(name)).isEqualTo(recent);
    assertThat(shards.latest(name).getMetadata().getAnnotations())
        .containsEntry(RangeConfigMaps.WRITE_TURN_ANNOTATION, recent);

    watch.onUpdate(theirs, anotherProcessStamps(name,
        Instant.now().minus(StoredShards.TURN_RESPECTED).minusMillis(50).toString()));
    shards.rereadTakingTurn(Set.of(name));
    assertThat(metrics.turnsTaken()).as("an older turn is over").isEqualTo(1);
    String ours = stampOf(name);
    assertThat(ours).isNotEqualTo(recent);

    // Its own turn does not hold this process back.
    shards.rereadTakingTurn(Set.of(name));
    assertThat(metrics.turnsTaken()).isEqualTo(2);
  }

  /**
   * Shard 2 loads alone into the reader, at {@code version}'s resourceVersion: the one the next
   * write compare-and-swaps on.
   */
  private void assertShard2LoadsAloneAt(ConfigMap version) {
    shards.refresh(reader);
    assertLoads(1, 0);
    assertThat(reader.holderOf(IN_SHARD_2)).contains(WEB);
    assertThat(shards.loaded(nameOf(version)).getMetadata().getResourceVersion())
        .isEqualTo(version.getMetadata().getResourceVersion());
  }

  private ConfigMap anotherProcessStamps(String name, String stamp) {
    return client.configMaps().inNamespace(NS).withName(name).patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"metadata\":{\"annotations\":{\"" + RangeConfigMaps.WRITE_TURN_ANNOTATION + "\":\"" + stamp + "\"}}}");
  }

  private String stampOf(String name) {
    return client.configMaps().inNamespace(NS).withName(name).get().getMetadata().getAnnotations()
        .get(RangeConfigMaps.WRITE_TURN_ANNOTATION);
  }

  @Test
  void aShardReadAgainThatIsGoneLoadsItsWholeKind() {
    loadEverythingFromTheApi();
    String name = ShardNames.name(V4, 5);
    client.configMaps().inNamespace(NS).withName(name).delete();

    shards.reread(Set.of(name));
    assertThat(shards.latest(name)).isNull();
    shards.refresh(reader);

    assertLoads(0, 1);
    assertThat(shards.problem(V4)).contains(name + " is missing");
    assertThat(reader.unknownRanges()).containsExactly(V4);
  }

  @Test
  void reloadingAKindListsItAgainAndLoadsItWhole() {
    loadEverythingFromTheApi();
    ConfigMap theirs = anotherReplicaWritesShard2ToTheApi();
    String name = nameOf(theirs);
    int known = shards.all().size();

    shards.reload(Set.of(V4));
    assertThat(shards.latest(name).getMetadata().getResourceVersion())
        .isEqualTo(theirs.getMetadata().getResourceVersion());
    assertThat(shards.all()).hasSize(known);
    shards.refresh(reader);

    assertLoads(0, 1);
    assertThat(reader.holderOf(IN_SHARD_2)).contains(WEB);
    assertThat(shards.loaded(name).getMetadata().getResourceVersion())
        .isEqualTo(theirs.getMetadata().getResourceVersion());
    assertThat(shards.problem(V4)).isNull();
  }

  // ---- helpers ------------------------------------------------------------------------------

  /** As the store starts: every stored shard seen, then every kind loaded whole. */
  private void loadEverything() {
    for (RangeKey key : writer.rangeKeys()) {
      store(writer, key).forEach(shards::remember);
    }
    loadedWhole();
  }

  /** As {@link #loadEverything}, the shards created in the mock API server (which sets their versions). */
  private void loadEverythingFromTheApi() {
    for (RangeKey key : writer.rangeKeys()) {
      for (ConfigMap shard : RangeConfigMaps.encode(writer.export(key), NS).values()) {
        shards.remember(client.resource(shard).create());
      }
    }
    loadedWhole();
  }

  private void loadedWhole() {
    reader.rangeKeys().forEach(shards::markStale);
    shards.refresh(reader);
    assertThat(reader.unknownRanges()).as("every range loaded").isEmpty();
    for (RangeKey key : reader.rangeKeys()) {
      assertThat(shards.problem(key)).as("problem of %s", key).isNull();
    }
    assertThat(metrics.kindLoads()).as("one load per kind").isEqualTo(reader.rangeKeys().stream()
        .map(StoredShards.LoadScope::of).distinct().count());
    assertThat(metrics.shardLoads()).isZero();
    shardLoadsBefore = metrics.shardLoads();
    kindLoadsBefore = metrics.kindLoads();
  }

  /** Another replica takes 10.96.4.7 and writes shard 2 of the Service range to the API server. */
  private ConfigMap anotherReplicaWritesShard2ToTheApi() {
    writer.reserve(ReservationRequest.ips(WEB, List.of(IpClaim.specific(IN_SHARD_2)), false));
    String name = ShardNames.name(V4, 2);
    ConfigMap shard = RangeConfigMaps.encode(writer.export(V4), NS).get(2);
    shard.getMetadata().setResourceVersion(
        client.configMaps().inNamespace(NS).withName(name).get().getMetadata().getResourceVersion());
    ConfigMap theirs = client.resource(shard).update();
    assertThat(StoredShards.newer(theirs, shards.loaded(name))).as("the API's version is newer").isTrue();
    return theirs;
  }

  /**
   * Stores a range as {@code engine} holds it now, as the API server would: each shard whose content
   * changed gets the next resourceVersion. Returns the shards that changed.
   */
  private List<ConfigMap> store(AllocationEngine engine, RangeKey key) {
    List<ConfigMap> changed = new ArrayList<>();
    for (ConfigMap shard : RangeConfigMaps.encode(engine.export(key), NS).values()) {
      ConfigMap before = stored.get(nameOf(shard));
      if (before == null || !RangeConfigMaps.sameContent(before, shard)) {
        shard.getMetadata().setResourceVersion(nextVersion());
        stored.put(nameOf(shard), shard);
        changed.add(shard);
      }
    }
    return changed;
  }

  private String nextVersion() {
    return Long.toString(++version);
  }

  private void assertLoads(long shard, long kind) {
    assertThat(metrics.shardLoads() - shardLoadsBefore).as("shard loads").isEqualTo(shard);
    assertThat(metrics.kindLoads() - kindLoadsBefore).as("kind loads").isEqualTo(kind);
  }

  private static String nameOf(ConfigMap shard) {
    return shard.getMetadata().getName();
  }

  private static ConfigMap withVersion(ConfigMap shard, String resourceVersion) {
    return new ConfigMapBuilder(shard).editMetadata().withResourceVersion(resourceVersion).endMetadata().build();
  }

  private static ConfigMap withVersion(String resourceVersion) {
    return new ConfigMapBuilder().withNewMetadata().withName("shard").withResourceVersion(resourceVersion)
        .endMetadata().build();
  }
}
