package io.subrange.webhook.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.store.RangeKey;
import io.subrange.allocator.store.RangeState;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How ranges are cut into shards, and where a bitmap shard sits in its range. */
class ShardLayoutTest {

  private static final RangeKey V4 = RangeKey.serviceIps("kubernetes", IpFamily.IPV4);
  private static final RangeKey V6 = RangeKey.serviceIps("kubernetes", IpFamily.IPV6);

  @Test
  void eachKindIsCutAsStored() {
    assertThat(ShardLayout.of(V4, ShardEncoding.RANGE_ALLOCATION, "10.96.0.0/12"))
        .isEqualTo(new ShardLayout(128, 8192));
    assertThat(ShardLayout.of(V4, ShardEncoding.RANGE_ALLOCATION, "10.96.0.0/16")).isEqualTo(new ShardLayout(128, 512));
    assertThat(ShardLayout.of(V4, ShardEncoding.RANGE_ALLOCATION, "10.96.0.0/24")).isEqualTo(new ShardLayout(1, 512));
    assertThat(ShardLayout.of(RangeKey.nodePorts(), ShardEncoding.RANGE_ALLOCATION, "30000-32767"))
        .isEqualTo(new ShardLayout(6, 512));
    ShardLayout sparse = ShardLayout.of(V6, ShardEncoding.SPARSE, "fd00::/64");
    assertThat(sparse.shards()).isEqualTo(ShardLayout.SPARSE_SHARDS);
    assertThat(sparse.shardOf(-2)).as("unsigned offsets").isEqualTo(15);
    assertThat(ShardLayout.of(RangeKey.podCidrs("pods"), ShardEncoding.NODE_LEDGER, "10.244.0.0/16").shardOf(12345))
        .isZero();
  }

  @Test
  void aBitmapShardKnowsItsPlaceAndOtherShardsHaveNone() {
    RangeState state = new RangeState(V4, "10.96.0.0/16", RangeState.RANGE_ALLOCATION, 256, new byte[0], List.of());
    ConfigMap third = RangeConfigMaps.encode(state, "ns").get(2);
    ShardLayout.Place place = ShardLayout.placeOf(third).orElseThrow();
    assertThat(place).isEqualTo(new ShardLayout.Place(2, 128, 512));
    assertThat(place.from()).isEqualTo(1024);
    assertThat(place.to()).isEqualTo(1536);
    assertThat(place.indexOf(1535)).isEqualTo(2);
    assertThat(place.indexOf(1536)).isEqualTo(3);

    third.getMetadata().getAnnotations().put(RangeConfigMaps.SHARD_ANNOTATION, "2/x");
    assertThat(ShardLayout.placeOf(third)).as("unreadable annotations").isEmpty();
    ConfigMap sparse = RangeConfigMaps.encode(new RangeState(V6, "fd00::/64", RangeState.SPARSE, 256, new byte[] {0},
        List.of()), "ns").get(0);
    assertThat(ShardLayout.placeOf(sparse)).isEmpty();
    ShardLayout told = ShardLayout.of(V6, ShardEncoding.named(RangeConfigMaps.annotation(sparse,
        RangeConfigMaps.ENCODING_ANNOTATION)), RangeConfigMaps.annotation(sparse, RangeConfigMaps.RANGE_ANNOTATION));
    assertThat(told.shards()).as("what a sparse shard's annotations tell of its range").isEqualTo(16);
  }
}
