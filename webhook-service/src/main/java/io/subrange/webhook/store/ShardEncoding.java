package io.subrange.webhook.store;

import io.subrange.allocator.band.SparseAllocationSet;
import io.subrange.allocator.store.RangeState;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * How a range's allocation bytes are kept ({@link RangeState#encoding}, and each shard's
 * {@code subrange.io/encoding} annotation), and how they are cut into shards and put together
 * again. The text of each constant is what ConfigMaps hold: it must never change, or replicas of
 * another version (and every ConfigMap already stored) would no longer be read.
 *
 * <p>It exists so that what differs between encodings sits in one place, not in string switches
 * spread over the codec. Stateless: called from the committer thread (encoding a commit's shards,
 * loading shards into the engine; the first load runs on the thread that starts the store).
 */
enum ShardEncoding {

  /**
   * Kubernetes' RangeAllocation bitmap (Service ranges up to 2^24 addresses, and NodePorts): each
   * shard holds the bits of its offsets, relative to its first one.
   */
  RANGE_ALLOCATION(RangeState.RANGE_ALLOCATION) {
    @Override
    byte[][] split(byte[] allocation, ShardLayout layout) {
      BitSet bits = bitsOf(allocation);
      byte[][] parts = new byte[layout.shards()][];
      for (int shard = 0; shard < layout.shards(); shard++) {
        parts[shard] = bytesOf(bits.get((int) (shard * layout.span()), (int) ((shard + 1) * layout.span())));
      }
      return parts;
    }

    @Override
    Assembly assemble(ShardLayout layout) {
      return new BitmapAssembly(layout);
    }
  },

  /** Taken offsets as delta varints (IPv6 ranges too large for a bitmap): each shard holds its own offsets. */
  SPARSE(RangeState.SPARSE) {
    @Override
    byte[][] split(byte[] allocation, ShardLayout layout) {
      Map<Integer, List<Long>> byShard = new TreeMap<>();
      for (long offset : SparseAllocationSet.decodeSnapshot(allocation)) {
        byShard.computeIfAbsent(layout.shardOf(offset), s -> new ArrayList<>()).add(offset);
      }
      byte[][] parts = new byte[layout.shards()][];
      for (int shard = 0; shard < layout.shards(); shard++) {
        parts[shard] = SparseAllocationSet.encodeSnapshot(byShard.getOrDefault(shard, List.of()).stream()
            .mapToLong(Long::longValue).toArray());
      }
      return parts;
    }

    @Override
    Assembly assemble(ShardLayout layout) {
      return new SparseAssembly(layout);
    }
  },

  /** Pod CIDRs: the entries (node to its blocks) are the whole state; the allocation bytes are empty. */
  NODE_LEDGER(RangeState.NODE_LEDGER) {
    @Override
    byte[][] split(byte[] allocation, ShardLayout layout) {
      return new byte[][] {new byte[0]};  // one shard, whose entries are the state
    }

    @Override
    Assembly assemble(ShardLayout layout) {
      return new NoAssembly();
    }
  };

  private final String text;

  ShardEncoding(String text) {
    this.text = text;
  }

  /** What ConfigMaps and {@link RangeState#encoding} call it: "rangeallocation-v1", "sparse-v1", "node-ledger-v1". */
  String text() {
    return text;
  }

  /**
   * The encoding a stored name stands for.
   *
   * @throws IllegalArgumentException when it names none ("unknown encoding ...")
   */
  static ShardEncoding named(String text) {
    // The one place that reads the stored names; a switch needs no array per call, as values() would.
    return switch (text) {
      case RangeState.RANGE_ALLOCATION -> RANGE_ALLOCATION;
      case RangeState.SPARSE -> SPARSE;
      case RangeState.NODE_LEDGER -> NODE_LEDGER;
      default -> throw new IllegalArgumentException("unknown encoding " + text);
    };
  }

  /** A range's allocation bytes cut into its shards' parts, indexed by shard. */
  abstract byte[][] split(byte[] allocation, ShardLayout layout);

  /** Something to put the shards' parts together again with, as they are read. */
  abstract Assembly assemble(ShardLayout layout);

  /** The parts of a range's shards, added as they are read, and the range's allocation bytes from them. */
  interface Assembly {

    /**
     * Adds the part shard {@code index} holds.
     *
     * @throws IllegalArgumentException or {@link ArrayIndexOutOfBoundsException} when the part is
     *     corrupt or does not belong in that shard
     */
    void add(int index, byte[] part);

    /** The range's allocation bytes, from every part added. */
    byte[] allocation();
  }

  private static final class BitmapAssembly implements Assembly {
    private final ShardLayout layout;
    private final BitSet bits = new BitSet();

    BitmapAssembly(ShardLayout layout) {
      this.layout = layout;
    }

    @Override
    public void add(int index, byte[] part) {
      BitSet bitsOfPart = bitsOf(part);
      if (bitsOfPart.length() > layout.span()) {
        throw new IllegalArgumentException("its bitmap is longer than its " + layout.span() + " offsets");
      }
      long base = index * layout.span();
      bitsOfPart.stream().forEach(bit -> bits.set((int) (base + bit)));
    }

    @Override
    public byte[] allocation() {
      return bytesOf(bits);
    }
  }

  private static final class SparseAssembly implements Assembly {
    private final ShardLayout layout;
    private final List<Long> offsets = new ArrayList<>();

    SparseAssembly(ShardLayout layout) {
      this.layout = layout;
    }

    @Override
    public void add(int index, byte[] part) {
      for (long offset : SparseAllocationSet.decodeSnapshot(part)) {
        if (layout.shardOf(offset) != index) {
          throw new IllegalArgumentException("offset " + Long.toUnsignedString(offset) + " belongs in shard "
              + layout.shardOf(offset));
        }
        offsets.add(offset);
      }
    }

    @Override
    public byte[] allocation() {
      return SparseAllocationSet.encodeSnapshot(offsets.stream().sorted(Long::compareUnsigned)
          .mapToLong(Long::longValue).toArray());
    }
  }

  /** Node ledgers keep no allocation bytes: the parts are not looked at (only that they are there). */
  private static final class NoAssembly implements Assembly {

    @Override
    public void add(int index, byte[] part) {
    }

    @Override
    public byte[] allocation() {
      return new byte[0];
    }
  }

  // ---- RangeAllocation bytes ----------------------------------------------------------------

  /** RangeAllocation bytes (big-endian number, bit i = offset i) as a BitSet. */
  static BitSet bitsOf(byte[] bigEndian) {
    byte[] littleEndian = bigEndian.clone();
    for (int i = 0, j = littleEndian.length - 1; i < j; i++, j--) {
      byte t = littleEndian[i];
      littleEndian[i] = littleEndian[j];
      littleEndian[j] = t;
    }
    return BitSet.valueOf(littleEndian);
  }

  /** A BitSet as minimal RangeAllocation bytes. */
  static byte[] bytesOf(BitSet bits) {
    byte[] littleEndian = bits.toByteArray();  // already without trailing zero bytes
    byte[] bigEndian = new byte[littleEndian.length];
    for (int i = 0; i < littleEndian.length; i++) {
      bigEndian[i] = littleEndian[littleEndian.length - 1 - i];
    }
    return bigEndian;
  }
}
