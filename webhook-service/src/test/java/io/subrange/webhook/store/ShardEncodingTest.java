package io.subrange.webhook.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.subrange.allocator.band.SparseAllocationSet;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.store.RangeKey;
import java.util.BitSet;
import org.junit.jupiter.api.Test;

/** The encodings' stored names, and how each cuts allocation bytes into shards and puts them together. */
class ShardEncodingTest {

  private static final RangeKey NODE_PORTS = RangeKey.nodePorts();

  @Test
  void theStoredNamesNeverChange() {
    // What ConfigMaps already hold, and replicas of other versions write: not RangeState's constants, on purpose.
    assertThat(ShardEncoding.RANGE_ALLOCATION.text()).isEqualTo("rangeallocation-v1");
    assertThat(ShardEncoding.SPARSE.text()).isEqualTo("sparse-v1");
    assertThat(ShardEncoding.NODE_LEDGER.text()).isEqualTo("node-ledger-v1");
    for (ShardEncoding encoding : ShardEncoding.values()) {
      assertThat(ShardEncoding.named(encoding.text())).isSameAs(encoding);
    }
    assertThatThrownBy(() -> ShardEncoding.named("rangeallocation-v2")).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("unknown encoding rangeallocation-v2");
    assertThatThrownBy(() -> ShardEncoding.named("RANGE_ALLOCATION")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void rangeAllocationBytesAreABigEndianNumberWithoutLeadingZeros() {
    BitSet bits = ShardEncoding.bitsOf(new byte[] {0x01, 0x02});
    assertThat(bits.stream().toArray()).containsExactly(1, 8);
    assertThat(ShardEncoding.bytesOf(bits)).containsExactly(0x01, 0x02);
    BitSet low = new BitSet();
    low.set(0);
    assertThat(ShardEncoding.bytesOf(low)).containsExactly(0x01);
    assertThat(ShardEncoding.bytesOf(new BitSet())).isEmpty();
    assertThat(ShardEncoding.bitsOf(new byte[] {0, 0, 0x04}).stream().toArray()).containsExactly(2);
  }

  @Test
  void aBitmapIsCutIntoShardsRelativeToTheirFirstOffsetAndPutTogetherAgain() {
    ShardLayout layout = ShardLayout.of(NODE_PORTS, ShardEncoding.RANGE_ALLOCATION, "30000-32767");  // 6 of 512
    BitSet taken = new BitSet();
    taken.set(0);
    taken.set(511);
    taken.set(512);
    taken.set(2700);
    byte[][] parts = ShardEncoding.RANGE_ALLOCATION.split(ShardEncoding.bytesOf(taken), layout);

    assertThat(parts).hasNumberOfRows(6);
    assertThat(ShardEncoding.bitsOf(parts[0]).stream().toArray()).containsExactly(0, 511);
    assertThat(ShardEncoding.bitsOf(parts[1]).stream().toArray()).containsExactly(0);
    assertThat(parts[2]).isEmpty();
    assertThat(ShardEncoding.bitsOf(parts[5]).stream().toArray()).containsExactly(2700 - 5 * 512);

    ShardEncoding.Assembly assembly = ShardEncoding.RANGE_ALLOCATION.assemble(layout);
    for (int i = 0; i < parts.length; i++) {
      assembly.add(i, parts[i]);
    }
    assertThat(assembly.allocation()).isEqualTo(ShardEncoding.bytesOf(taken));

    BitSet overlong = new BitSet();
    overlong.set(512);
    assertThatThrownBy(() -> ShardEncoding.RANGE_ALLOCATION.assemble(layout).add(0, ShardEncoding.bytesOf(overlong)))
        .hasMessage("its bitmap is longer than its 512 offsets");
  }

  @Test
  void sparseOffsetsGoToTheirShardAndComeBackInUnsignedOrder() {
    ShardLayout layout = ShardLayout.of(RangeKey.serviceIps("v6", IpFamily.IPV6), ShardEncoding.SPARSE, "fd00::/64");
    long last = -2;  // unsigned: near the end of the range, in the last shard
    long[] offsets = {3, 1L << 61, last};
    byte[][] parts = ShardEncoding.SPARSE.split(SparseAllocationSet.encodeSnapshot(offsets), layout);

    assertThat(parts).hasNumberOfRows(ShardLayout.SPARSE_SHARDS);
    assertThat(SparseAllocationSet.decodeSnapshot(parts[0])).containsExactly(3);
    assertThat(SparseAllocationSet.decodeSnapshot(parts[layout.shardOf(1L << 61)])).containsExactly(1L << 61);
    assertThat(SparseAllocationSet.decodeSnapshot(parts[15])).containsExactly(last);

    ShardEncoding.Assembly assembly = ShardEncoding.SPARSE.assemble(layout);
    for (int i = parts.length - 1; i >= 0; i--) {
      assembly.add(i, parts[i]);
    }
    assertThat(SparseAllocationSet.decodeSnapshot(assembly.allocation())).containsExactly(offsets);

    assertThatThrownBy(() -> ShardEncoding.SPARSE.assemble(layout).add(1, parts[0]))
        .hasMessage("offset 3 belongs in shard 0");
  }

  @Test
  void aNodeLedgerKeepsNoAllocationBytes() {
    ShardLayout layout = ShardLayout.of(RangeKey.podCidrs("pods"), ShardEncoding.NODE_LEDGER, "10.244.0.0/16");
    assertThat(layout).isEqualTo(new ShardLayout(1, 0));
    byte[][] parts = ShardEncoding.NODE_LEDGER.split(new byte[0], layout);
    assertThat(parts).hasNumberOfRows(1);
    assertThat(parts[0]).isEmpty();
    ShardEncoding.Assembly assembly = ShardEncoding.NODE_LEDGER.assemble(layout);
    assembly.add(0, new byte[] {1, 2, 3});
    assertThat(assembly.allocation()).isEmpty();
  }
}
