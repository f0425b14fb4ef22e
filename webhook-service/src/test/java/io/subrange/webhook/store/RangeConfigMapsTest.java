package io.subrange.webhook.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.subrange.allocator.band.ThreadLocalRandomGenerator;
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
import io.subrange.allocator.store.RangeState;
import io.subrange.allocator.store.ReservationRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class RangeConfigMapsTest {

  private static final RangeKey V4 = RangeKey.serviceIps("kubernetes", IpFamily.IPV4);
  private static final RangeKey V6 = RangeKey.serviceIps("kubernetes", IpFamily.IPV6);

  @Test
  void rememberedLedgersGiveWhatFreshOnesGive() {
    AllocationEngine engine = new AllocationEngine(PortRange.parse("30000-32767"),
        ThreadLocalRandomGenerator.INSTANCE);
    engine.addServiceRange("kubernetes", Cidr.parse("10.96.0.0/16"));
    LedgerMemo memo = LedgerMemo.create();
    for (int round = 0; round < 3; round++) {
      for (int i = 0; i < 40; i++) {
        engine.reserve(ReservationRequest.ips(Holder.service("ns", "r" + round + "-" + i, UUID.randomUUID().toString()),
            List.of(IpClaim.dynamic(IpFamily.IPV4)), false));
      }
      RangeState.Entry released = engine.export(V4).entries().get(round);
      engine.releaseIp(IpAddress.parse(released.value()), released.holder());
      RangeState state = engine.export(V4);
      Map<Integer, ConfigMap> remembered = RangeConfigMaps.encode(state, "ns", memo);
      assertThat(remembered).as("round " + round).isEqualTo(RangeConfigMaps.encode(state, "ns"));
      Map<String, ConfigMap> byName = new HashMap<>();
      remembered.values().forEach(c -> byName.put(c.getMetadata().getName(), c));
      RangeState back = RangeConfigMaps.decode(V4, byName::get, memo);
      assertThat(back.entries()).containsExactlyInAnyOrderElementsOf(state.entries());
    }
    // Bytes another writer stored are read afresh, whatever the memo knew of that shard.
    RangeState state = engine.export(V4);
    Map<Integer, ConfigMap> shards = RangeConfigMaps.encode(state, "ns", memo);
    RangeState.Entry first = state.entries().get(0);
    int shardOfFirst = shards.entrySet().stream().filter(e -> LedgerCodec.unledger(LedgerCodec.gunzip(
        Base64.getDecoder().decode(e.getValue().getBinaryData().get("holders.gz")), "test"), "test").contains(first))
        .findFirst().orElseThrow().getKey();
    ConfigMap other = RangeConfigMaps.encode(new RangeState(V4, state.range(), state.encoding(), state.staticBandSize(),
        state.allocation(), state.entries().subList(1, state.entries().size())), "ns").get(shardOfFirst);
    Map<String, ConfigMap> byName = new HashMap<>();
    shards.values().forEach(c -> byName.put(c.getMetadata().getName(), c));
    byName.put(other.getMetadata().getName(), other);
    assertThat(RangeConfigMaps.decode(V4, byName::get, memo).entries()).doesNotContain(first)
        .hasSize(state.entries().size() - 1);
  }

  @Test
  void anotherWritersVersionOfAShardParsesOnlyTheLinesThatChanged() {
    AllocationEngine writer = new AllocationEngine(PortRange.parse("30000-32767"),
        ThreadLocalRandomGenerator.INSTANCE);
    writer.addServiceRange("kubernetes", Cidr.parse("10.96.0.0/24"));  // one shard
    for (int i = 0; i < 20; i++) {
      writer.reserve(ReservationRequest.ips(Holder.service("ns", "svc-" + i, ""), List.of(IpClaim.dynamic(IpFamily.IPV4)),
          false));
    }
    LedgerMemo reader = LedgerMemo.create();
    List<RangeState.Entry> before = reader.decode(RangeConfigMaps.encode(writer.export(V4), "ns").get(0));

    RangeState.Entry gone = before.get(3);
    writer.releaseIp(IpAddress.parse(gone.value()), gone.holder());
    writer.reserve(ReservationRequest.ips(Holder.service("ns", "new", ""), List.of(IpClaim.dynamic(IpFamily.IPV4)),
        false));
    RangeState now = writer.export(V4);
    List<RangeState.Entry> after = reader.decode(RangeConfigMaps.encode(now, "ns").get(0));

    assertThat(after).containsExactlyElementsOf(now.entries()).doesNotContain(gone);
    // Unchanged lines come back as the very entries read before: they were not parsed again.
    for (RangeState.Entry entry : after) {
      before.stream().filter(entry::equals).findFirst().ifPresent(same -> assertThat(entry).isSameAs(same));
    }
    assertThat(after.stream().filter(e -> before.stream().anyMatch(b -> b == e)).count()).isEqualTo(19);
  }

  @Test
  void aTurnTakenAtAShardIsNoContentAndItsNextWriteEndsIt() {
    AllocationEngine engine = new AllocationEngine(PortRange.parse("30000-32767"), ThreadLocalRandomGenerator.INSTANCE);
    engine.addServiceRange("kubernetes", Cidr.parse("10.96.0.0/24"));  // one shard
    ConfigMap stored = RangeConfigMaps.encode(engine.export(V4), "ns").get(0);
    ConfigMap unstamped = RangeConfigMaps.encode(engine.export(V4), "ns").get(0);
    Map<String, String> before = Map.copyOf(stored.getMetadata().getAnnotations());
    stored.getMetadata().getAnnotations().put(RangeConfigMaps.WRITE_TURN_ANNOTATION, "2026-11-28T13:30:00.123456Z");
    assertThat(RangeConfigMaps.sameContent(stored, unstamped)).as("a turn alone is no reason to write").isTrue();
    assertThat(RangeConfigMaps.sameContent(unstamped, stored)).isTrue();
    engine.reserve(ReservationRequest.ips(Holder.service("ns", "svc", ""), List.of(IpClaim.dynamic(IpFamily.IPV4)),
        false));

    ConfigMap written = RangeConfigMaps.encodeWindow(stored, engine.exportWindow(V4, 0, 256), LedgerMemo.NONE);

    assertThat(written.getMetadata().getAnnotations()).isEqualTo(before);
    assertThat(written).isEqualTo(RangeConfigMaps.encode(engine.export(V4), "ns").get(0));
    assertThat(stored.getMetadata().getAnnotations()).as("the version read is left as read")
        .containsKey(RangeConfigMaps.WRITE_TURN_ANNOTATION);
  }

  @Test
  void aRangeRoundTripsThroughItsShards() {
    AllocationEngine engine = new AllocationEngine(PortRange.parse("30000-32767"),
        ThreadLocalRandomGenerator.INSTANCE);
    engine.addServiceRange("kubernetes", Cidr.parse("10.96.0.0/12"));
    engine.addServiceRange("kubernetes", Cidr.parse("fd00::/64"));
    engine.addClusterCidr(ClusterCidr.ipv4("pods", null, 8, "10.244.0.0/16"));
    for (int i = 0; i < 500; i++) {
      engine.reserve(new ReservationRequest(Holder.service("ns", "s" + i, "uid-" + i),
          List.of(IpClaim.dynamic(IpFamily.IPV4), IpClaim.dynamic(IpFamily.IPV6)), List.of(PortClaim.dynamic()), false));
    }
    engine.reserve(ReservationRequest.ips(Holder.service("kube-system", "dns", ""),
        List.of(IpClaim.specific(IpAddress.parse("10.96.0.10"))), false));
    engine.reservePodCidrs(NodeView.named("n1"), List.of(), false);

    for (RangeKey key : List.of(V4, V6, RangeKey.nodePorts(), RangeKey.podCidrs("pods"))) {
      RangeState state = engine.export(key);
      Map<Integer, ConfigMap> shards = RangeConfigMaps.encode(state, "subrange-system");
      assertThat(shards).containsKey(0);
      shards.values().forEach(c -> assertThat(c.getMetadata().getLabels())
          .containsAllEntriesOf(ShardNames.selector(key)));
      RangeState back = RangeConfigMaps.decode(key, new ArrayList<>(shards.values()));
      assertThat(back.allocation()).as(key + " allocation").isEqualTo(state.allocation());
      assertThat(back.entries()).as(key + " holders").containsExactlyInAnyOrderElementsOf(state.entries());
    }
    assertThat(RangeConfigMaps.encode(engine.export(V4), "ns")).as("a /12 in 128 blocks of 8192").hasSize(128);
    assertThat(RangeConfigMaps.encode(engine.export(V6), "ns")).hasSize(ShardLayout.SPARSE_SHARDS);
    assertThat(RangeConfigMaps.encode(engine.export(RangeKey.nodePorts()), "ns")).as("2768 ports in blocks of 512")
        .hasSize(6);
    assertThat(ShardNames.name(V4, 0)).isEqualTo("subrange-service-ips-kubernetes-ipv4-0");
  }

  @Test
  void aFullShardOfTheDefaultRangeWithLongNamesStaysBelowTheConfigMapLimit() {
    // The default 10.96.0.0/12 is 128 shards of 8,192 addresses: the largest shard it can have.
    int span = 8192;
    List<RangeState.Entry> entries = new ArrayList<>();
    for (int i = 0; i < span; i++) {
      IpAddress address = IpAddress.ipv4(0x0A00_0001L + i);
      entries.add(new RangeState.Entry(address.toString(), Holder.service("team-" + (i % 97) + "-namespace",
          "service-with-a-rather-long-name-" + i, UUID.randomUUID().toString()), 1_700_000_000L + i));
    }
    byte[] allBits = new byte[span / 8];
    Arrays.fill(allBits, (byte) 0xFF);
    RangeState full = new RangeState(V4, "10.0.0.0/12", RangeState.RANGE_ALLOCATION, 256, allBits, entries);
    ConfigMap shard = RangeConfigMaps.encode(full, "ns").get(0);
    assertThat(shard.getMetadata().getAnnotations()).containsEntry("subrange.io/shard-span", String.valueOf(span));
    long size = shard.getBinaryData().values().stream().mapToLong(String::length).sum();  // base64, as stored
    assertThat(size).as("bytes in the fullest shard of a /12").isLessThan(1024 * 1024);
    System.out.printf("fullest /12 shard: %d holders, %d KiB as stored%n", entries.size(), size / 1024);
  }

  @Test
  void aMissingShardOrCorruptDataIsRefused() {
    RangeState state = new RangeState(V4, "10.96.0.0/16", RangeState.RANGE_ALLOCATION, 256, new byte[] {1},
        List.of(new RangeState.Entry("10.96.0.1", Holder.service("a", "b", ""), 1)));
    Map<Integer, ConfigMap> shards = RangeConfigMaps.encode(state, "ns");
    assertThat(shards).hasSize(128);
    assertThatThrownBy(() -> RangeConfigMaps.decode(V4, List.of()))
        .hasMessageContaining("subrange-service-ips-kubernetes-ipv4-0 is missing");
    List<ConfigMap> withoutOne = new ArrayList<>(shards.values());
    withoutOne.remove(5);
    assertThatThrownBy(() -> RangeConfigMaps.decode(V4, withoutOne))
        .hasMessageContaining("subrange-service-ips-kubernetes-ipv4-5 is missing (shard 5 of 128)");

    List<ConfigMap> mixed = new ArrayList<>(shards.values());
    mixed.set(3, RangeConfigMaps.encode(new RangeState(V4, "10.97.0.0/16", RangeState.RANGE_ALLOCATION, 256,
        new byte[0], List.of()), "ns").get(3));
    assertThatThrownBy(() -> RangeConfigMaps.decode(V4, mixed)).hasMessageContaining("does not belong with");

    List<ConfigMap> corrupt = new ArrayList<>(shards.values());
    corrupt.get(0).getBinaryData().put(RangeConfigMaps.HOLDERS, Base64.getEncoder().encodeToString(new byte[] {1, 2, 3}));
    assertThatThrownBy(() -> RangeConfigMaps.decode(V4, corrupt)).hasMessageContaining("not gzip");

    List<ConfigMap> overlong = new ArrayList<>(RangeConfigMaps.encode(state, "ns").values());
    byte[] bits = new byte[ShardLayout.MIN_SHARD_SPAN / 8 + 1];
    bits[0] = 1;
    overlong.get(1).getBinaryData().put(RangeConfigMaps.ALLOCATION, Base64.getEncoder().encodeToString(bits));
    assertThatThrownBy(() -> RangeConfigMaps.decode(V4, overlong)).hasMessageContaining("longer than its 512 offsets");
  }

  /**
   * Holder fields are escaped, so even a name admission would refuse cannot break a ledger line;
   * and a line that cannot be read is left out, never fatal: its value stays taken.
   */
  @Test
  void holderLinesSurviveHostileNamesAndABadLineNeverTakesTheRangeDown() {
    Holder hostile = new Holder("Service", "ten\tant", "web\nsvc%09", "uid\r1");
    RangeState state = new RangeState(V4, "10.96.0.0/16", RangeState.RANGE_ALLOCATION, 256, new byte[] {3},
        List.of(new RangeState.Entry("10.96.0.1", hostile, 5, 2),
            new RangeState.Entry("10.96.0.2", Holder.service("a", "b", ""), 7)));
    RangeState decoded = RangeConfigMaps.decode(V4, List.copyOf(RangeConfigMaps.encode(state, "ns").values()));
    assertThat(decoded.entries()).containsExactlyElementsOf(state.entries());

    byte[] ledger = ("10.96.0.1\tService\ta\tb\t\t5\n"            // written before "first": six fields
        + "10.96.0.2\tService\tc\td\te\tnot-a-number\t1\n"     // malformed: left out
        + "10.96.0.3\tService\tc\t%zz\t\t5\t5\n"               // a bad escape: left out
        + "garbage\n").getBytes(java.nio.charset.StandardCharsets.UTF_8);
    List<String> skipped = new ArrayList<>();
    List<RangeState.Entry> entries = LedgerCodec.unledger(ledger, "shard-0", skipped);
    assertThat(entries).containsExactly(new RangeState.Entry("10.96.0.1", Holder.service("a", "b", ""), 5, 5));
    assertThat(skipped).hasSize(3).allSatisfy(why -> assertThat(why).contains("shard-0").contains("stays taken"));
  }

  @Test
  void everyShardNamesItsRange() {
    Map<Integer, ConfigMap> shards = RangeConfigMaps.encode(new RangeState(V6, "fd00::/64", RangeState.SPARSE, 256,
        new byte[] {0}, List.of()), "ns");
    assertThat(shards.values()).allSatisfy(c -> assertThat(ShardNames.keyOf(c)).contains(V6));
    assertThat(shards.values()).extracting(c -> c.getMetadata().getName()).hasSize(16)
        .contains("subrange-service-ips-kubernetes-ipv6-0", "subrange-service-ips-kubernetes-ipv6-15");
    ConfigMap ports = RangeConfigMaps.encode(new RangeState(RangeKey.nodePorts(), "30000-32767",
        RangeState.RANGE_ALLOCATION, 86, new byte[0], List.of()), "ns").get(0);
    assertThat(ShardNames.keyOf(ports)).contains(RangeKey.nodePorts());
    assertThat(ports.getMetadata().getName()).isEqualTo("subrange-node-ports-nodeports-0");
  }

  @Test
  void longRangeNamesMakeValidLabelsAndNames() {
    String longName = "a-service-cidr-with-a-name-much-longer-than-a-label-value-may-be-in-kubernetes";
    RangeKey key = RangeKey.serviceIps(longName, IpFamily.IPV4);
    String id = ShardNames.selector(key).get(ShardNames.RANGE_LABEL);
    assertThat(id.length()).isLessThanOrEqualTo(63);
    assertThat(id).matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
    assertThat(ShardNames.rangeId(longName + "-other")).isNotEqualTo(id);
  }
}
