package io.subrange.webhook.store;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.subrange.allocator.ip.ServiceIpRange;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.port.PortRange;
import io.subrange.allocator.store.RangeKey;
import io.subrange.allocator.store.RangeState;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How a range is cut into shards: how many it has, and how many consecutive offsets each covers
 * (unsigned; 0 for pod CIDRs, whose one shard holds everything).
 *
 * <p>Ranges with a bitmap (up to 2^24 addresses, and NodePorts) are cut in blocks of at least
 * {@value #MIN_SHARD_SPAN} offsets and at most {@value #MAX_BITMAP_SHARDS} blocks, sparse IPv6
 * ranges in {@value #SPARSE_SHARDS}, pod CIDRs in one. Small shards keep each write small (a
 * write carries its whole shard, holders included) and let replicas that allocate in different
 * parts of a range (see AnchoredStart) write different ConfigMaps; no ConfigMap nears the 1 MiB
 * limit.
 *
 * <p>A layout follows from a range's kind, encoding and range text alone, so every replica cuts a
 * range the same way. Layouts are cached ({@link #of}); the cache is safe from any thread. Used on
 * the committer thread (encoding, loading) and the informer thread (telling a bitmap shard from
 * another, {@link #placeOf}).
 *
 * @param shards how many shards the range has
 * @param span how many offsets each covers (unsigned; 0 for pod CIDRs)
 */
record ShardLayout(int shards, long span) {

  /** Offsets per shard of a bitmap range, at least: 64 bytes of bits, a few KiB of holders. */
  static final int MIN_SHARD_SPAN = 512;
  static final int MAX_BITMAP_SHARDS = 128;
  static final int SPARSE_SHARDS = 16;

  /** Layouts worked out already: a shard load checks its layout, and parsing the range each time showed. */
  private static final Map<String, ShardLayout> KNOWN = new ConcurrentHashMap<>();

  /** The shard of an offset. */
  int shardOf(long offset) {
    return span == 0 ? 0 : (int) Long.divideUnsigned(offset, span);
  }

  /**
   * The layout of a range of {@code key}'s kind kept in {@code encoding}.
   *
   * @throws IllegalArgumentException when the range text cannot be read
   */
  static ShardLayout of(RangeKey key, ShardEncoding encoding, String range) {
    String id = key.kind() + "|" + encoding.text() + "|" + range;
    ShardLayout known = KNOWN.get(id);
    if (known != null) {
      return known;
    }
    ShardLayout layout = compute(key, encoding, range);
    if (KNOWN.size() > 1024) {
      KNOWN.clear();  // ranges come and go rarely; this only bounds what a stranger's ConfigMaps could add
    }
    KNOWN.put(id, layout);
    return layout;
  }

  private static ShardLayout compute(RangeKey key, ShardEncoding encoding, String range) {
    return switch (encoding) {
      case RANGE_ALLOCATION -> {
        long size = key.kind() == RangeKey.Kind.NODE_PORTS ? PortRange.parse(range).size()
            : ServiceIpRange.of(Cidr.parse(range)).size();
        long span = Math.max(MIN_SHARD_SPAN, (size + MAX_BITMAP_SHARDS - 1) / MAX_BITMAP_SHARDS);
        span = (span + 63) / 64 * 64;
        yield new ShardLayout((int) Math.max(1, (size + span - 1) / span), span);
      }
      case SPARSE -> {
        long size = ServiceIpRange.of(Cidr.parse(range)).size();  // unsigned, up to 2^64 - 1
        yield new ShardLayout(SPARSE_SHARDS, Long.divideUnsigned(size, SPARSE_SHARDS) + 1);
      }
      case NODE_LEDGER -> new ShardLayout(1, 0);
    };
  }

  // ---- one bitmap shard ---------------------------------------------------------------------

  /**
   * Where a bitmap shard sits in its range: its index and the offsets it covers. Empty for shards
   * of other encodings (sparse ranges and pod CIDRs load and write whole) and for shards whose
   * annotations cannot be read (loading the whole range then says what is wrong).
   */
  static Optional<Place> placeOf(ConfigMap shard) {
    try {
      if (!ShardEncoding.RANGE_ALLOCATION.text().equals(RangeConfigMaps.annotation(shard,
          RangeConfigMaps.ENCODING_ANNOTATION))) {
        return Optional.empty();
      }
      String[] indexOfCount = RangeConfigMaps.annotation(shard, RangeConfigMaps.SHARD_ANNOTATION).split("/", 2);
      int index = Integer.parseInt(indexOfCount[0]);
      int count = Integer.parseInt(indexOfCount[1]);
      long span = Long.parseLong(RangeConfigMaps.annotation(shard, RangeConfigMaps.SHARD_SPAN_ANNOTATION));
      if (index < 0 || index >= count || span <= 0 || span % 64 != 0 || span > Integer.MAX_VALUE) {
        return Optional.empty();
      }
      return Optional.of(new Place(index, count, span));
    } catch (IllegalArgumentException | ArrayIndexOutOfBoundsException e) {
      return Optional.empty();
    }
  }

  /** A bitmap shard's index among {@code count}, and the {@code span} offsets from {@code index * span} it covers. */
  record Place(int index, int count, long span) {

    long from() {
      return index * span;
    }

    long to() {
      return from() + span;
    }

    /** The shard index of an offset of the same range. */
    int indexOf(long offset) {
      return (int) (offset / span);
    }
  }

  // ---- values -------------------------------------------------------------------------------

  /** Which shard a value's holder line goes to: the shard of the value's offset. */
  record ValueShards(RangeState state, ShardLayout layout, ServiceIpRange ips, PortRange ports) {

    static ValueShards of(RangeState state, ShardLayout layout) {
      return switch (state.key().kind()) {
        case SERVICE_IPS -> new ValueShards(state, layout, ServiceIpRange.of(Cidr.parse(state.range())), null);
        case NODE_PORTS -> new ValueShards(state, layout, null, PortRange.parse(state.range()));
        case POD_CIDRS -> new ValueShards(state, layout, null, null);
      };
    }

    int shardOf(String value) {
      if (ips != null) {
        long offset = ips.offsetOf(IpAddress.parse(value));
        if (offset == ServiceIpRange.NOT_ASSIGNABLE) {
          throw new IllegalArgumentException(value + " is not in " + state.range());
        }
        return layout.shardOf(offset);
      }
      if (ports != null) {
        return layout.shardOf(Integer.parseInt(value) - ports.first());
      }
      return 0;
    }
  }
}
