package io.subrange.webhook.store;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.subrange.allocator.store.RangeKey;
import io.subrange.allocator.store.RangeState;
import io.subrange.allocator.store.RangeWindow;
import java.util.ArrayList;
import java.util.Base64;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * How a range's {@link RangeState} is kept in ConfigMaps, and read back: the codec between a
 * state (or one bitmap shard's {@link RangeWindow}) and its shards.
 *
 * <p>A range is split into a fixed number of shards of consecutive offsets ({@link ShardLayout}),
 * each a ConfigMap named and labelled after its range ({@link ShardNames}). Every shard of a range
 * exists once its state is known, so a missing one means the state is lost and must be rebuilt,
 * never that it was empty.
 * Each shard holds:
 * <ul>
 *   <li>{@code binaryData.allocation}: the allocator's bytes for its part (RangeAllocation data
 *       relative to the shard's first offset; the sparse encoding for sparse ranges; see
 *       {@link ShardEncoding});
 *   <li>{@code binaryData.holders.gz}: who holds each value and since when, one line per value
 *       ({@link LedgerCodec});
 *   <li>labels naming the kind, range and family (to list and watch them), and annotations with
 *       the range, encoding, static band and shard.
 * </ul>
 * What it writes is read by replicas of other versions: not a byte of it may change.
 *
 * <p>Stateless; called on the committer thread (encoding a commit's shards, loading shards into
 * the engine, writing a rebuilt state; the first load runs on the thread that starts the store)
 * and, for {@link #sameContent}, on the informer thread.
 */
public final class RangeConfigMaps {

  static final String RANGE_ANNOTATION = "subrange.io/range";
  static final String ENCODING_ANNOTATION = "subrange.io/encoding";
  static final String STATIC_BAND_ANNOTATION = "subrange.io/static-band";
  static final String SHARD_ANNOTATION = "subrange.io/shard";
  static final String SHARD_SPAN_ANNOTATION = "subrange.io/shard-span";
  /**
   * When a replica whose writes of a shard kept losing took its turn at it (see
   * {@link StoredShards#rereadTakingTurn}). Not content: {@link #sameContent} leaves it out, and
   * {@link #encodeWindow} and {@link #encode} do not write it, so it goes with the next write of
   * this version.
   */
  static final String WRITE_TURN_ANNOTATION = "subrange.io/write-turn";
  static final String ALLOCATION = "allocation";
  static final String HOLDERS = "holders.gz";

  private RangeConfigMaps() {
  }

  /**
   * Whether a shard already says what {@code desired} says (labels, annotations, data); a turn
   * taken at it ({@link #WRITE_TURN_ANNOTATION}) is no reason to write.
   */
  public static boolean sameContent(ConfigMap stored, ConfigMap desired) {
    return Objects.equals(stored.getBinaryData(), desired.getBinaryData())
        && Objects.equals(withoutTurn(stored.getMetadata().getAnnotations()),
            withoutTurn(desired.getMetadata().getAnnotations()))
        && Objects.equals(stored.getMetadata().getLabels(), desired.getMetadata().getLabels());
  }

  /** A shard's annotations but a turn taken at it; the same map when it has none. */
  private static Map<String, String> withoutTurn(Map<String, String> annotations) {
    if (annotations == null || !annotations.containsKey(WRITE_TURN_ANNOTATION)) {
      return annotations;
    }
    Map<String, String> without = new HashMap<>(annotations);
    without.remove(WRITE_TURN_ANNOTATION);
    return without;
  }

  // ---- writing ----------------------------------------------------------------------------

  /** Every shard of a state, by shard index. */
  public static Map<Integer, ConfigMap> encode(RangeState state, String namespace) {
    return encode(state, namespace, LedgerMemo.NONE);
  }

  /** As {@link #encode(RangeState, String)}, reusing ledgers {@code memo} has seen. */
  public static Map<Integer, ConfigMap> encode(RangeState state, String namespace, LedgerMemo memo) {
    ShardEncoding encoding = ShardEncoding.named(state.encoding());
    ShardLayout layout = ShardLayout.of(state.key(), encoding, state.range());
    byte[][] allocations = encoding.split(state.allocation(), layout);
    Map<Integer, List<RangeState.Entry>> entries = new TreeMap<>();
    ShardLayout.ValueShards valueShards = ShardLayout.ValueShards.of(state, layout);
    for (RangeState.Entry entry : state.entries()) {
      entries.computeIfAbsent(valueShards.shardOf(entry.value()), s -> new ArrayList<>()).add(entry);
    }
    Map<Integer, ConfigMap> shards = new TreeMap<>();
    for (int shard = 0; shard < layout.shards(); shard++) {
      shards.put(shard, configMap(state, encoding, namespace, layout, shard, allocations[shard],
          memo.encode(ShardNames.name(state.key(), shard), entries.getOrDefault(shard, List.of()))));
    }
    return shards;
  }

  private static ConfigMap configMap(RangeState state, ShardEncoding encoding, String namespace, ShardLayout layout,
      int shard, byte[] allocation, String holders) {
    return new ConfigMapBuilder()
        .withNewMetadata()
        .withName(ShardNames.name(state.key(), shard))
        .withNamespace(namespace)
        .withLabels(ShardNames.selector(state.key()))
        .addToAnnotations(ShardNames.NAME_ANNOTATION, state.key().name())
        .addToAnnotations(RANGE_ANNOTATION, state.range())
        .addToAnnotations(ENCODING_ANNOTATION, encoding.text())
        .addToAnnotations(STATIC_BAND_ANNOTATION, Long.toString(state.staticBandSize()))
        .addToAnnotations(SHARD_ANNOTATION, shard + "/" + layout.shards())
        .addToAnnotations(SHARD_SPAN_ANNOTATION, Long.toString(layout.span()))
        .endMetadata()
        .addToBinaryData(ALLOCATION, Base64.getEncoder().encodeToString(allocation))
        .addToBinaryData(HOLDERS, holders)
        .build();
  }

  // ---- reading ----------------------------------------------------------------------------

  /**
   * The state of a range from its shards (other ConfigMaps in the list are ignored).
   *
   * @throws IllegalArgumentException when a shard is missing, corrupt, or disagrees with the
   *     others about the range, encoding or layout; the state must then be rebuilt
   */
  public static RangeState decode(RangeKey key, List<ConfigMap> configMaps) {
    Map<String, ConfigMap> byName = new HashMap<>();
    configMaps.forEach(c -> byName.put(c.getMetadata().getName(), c));
    return decode(key, byName::get);
  }

  /** As {@link #decode(RangeKey, List)}, looking shards up by name. */
  public static RangeState decode(RangeKey key, Function<String, ConfigMap> byName) {
    return decode(key, byName, LedgerMemo.NONE);
  }

  /** As {@link #decode(RangeKey, Function)}, reusing ledgers {@code memo} has seen. */
  public static RangeState decode(RangeKey key, Function<String, ConfigMap> byName, LedgerMemo memo) {
    String headName = ShardNames.name(key, 0);
    ConfigMap head = byName.apply(headName);
    if (head == null) {
      throw new IllegalArgumentException("ConfigMap " + headName + " is missing");
    }
    String range = annotation(head, RANGE_ANNOTATION);
    String encodingText = annotation(head, ENCODING_ANNOTATION);
    String staticBand = annotation(head, STATIC_BAND_ANNOTATION);
    ShardEncoding encoding;
    ShardLayout layout;
    try {
      encoding = ShardEncoding.named(encodingText);
      layout = ShardLayout.of(key, encoding, range);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("ConfigMap " + headName + ": " + e.getMessage(), e);
    }
    ShardEncoding.Assembly assembly = encoding.assemble(layout);
    List<RangeState.Entry> entries = new ArrayList<>();
    for (int index = 0; index < layout.shards(); index++) {
      String name = ShardNames.name(key, index);
      ConfigMap shard = byName.apply(name);
      if (shard == null) {
        throw new IllegalArgumentException("ConfigMap " + name + " is missing (shard " + index + " of "
            + layout.shards() + ")");
      }
      String expectedShard = index + "/" + layout.shards();
      if (!range.equals(annotation(shard, RANGE_ANNOTATION))
          || !encodingText.equals(annotation(shard, ENCODING_ANNOTATION))
          || !staticBand.equals(annotation(shard, STATIC_BAND_ANNOTATION))
          || !expectedShard.equals(annotation(shard, SHARD_ANNOTATION))
          || !Long.toString(layout.span()).equals(annotation(shard, SHARD_SPAN_ANNOTATION))) {
        throw new IllegalArgumentException("ConfigMap " + name + " does not belong with " + headName + " (range "
            + annotation(shard, RANGE_ANNOTATION) + ", shard " + annotation(shard, SHARD_ANNOTATION) + "; expected "
            + range + ", shard " + expectedShard + ")");
      }
      byte[] allocation = binary(shard, ALLOCATION);
      try {
        assembly.add(index, allocation);
      } catch (IllegalArgumentException | ArrayIndexOutOfBoundsException e) {
        throw new IllegalArgumentException("ConfigMap " + name + ": allocation data is corrupt: " + e.getMessage(), e);
      }
      entries.addAll(memo.decode(shard));
    }
    byte[] allocation = assembly.allocation();
    long band;
    try {
      band = Long.parseLong(staticBand);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("ConfigMap " + headName + ": static band " + staticBand + " is not a number");
    }
    return new RangeState(key, range, encodingText, band, allocation, entries);
  }

  // ---- one bitmap shard at a time -----------------------------------------------------------

  /** The range text a shard was made for (as {@link RangeState#range}). */
  static String rangeOf(ConfigMap shard) {
    return annotation(shard, RANGE_ANNOTATION);
  }

  /**
   * One bitmap shard's window, as {@link #decode} would read that part of the range.
   *
   * @throws IllegalArgumentException when the shard is not a bitmap shard of {@code key} laid out
   *     as its range is, or its data is corrupt
   */
  static RangeWindow decodeWindow(RangeKey key, ConfigMap shard, LedgerMemo memo) {
    String name = shard.getMetadata().getName();
    ShardLayout.Place place = ShardLayout.placeOf(shard).orElseThrow(() -> new IllegalArgumentException("ConfigMap "
        + name + " is not a readable bitmap shard"));
    ShardLayout layout = ShardLayout.of(key, ShardEncoding.RANGE_ALLOCATION, rangeOf(shard));
    if (layout.shards() != place.count() || layout.span() != place.span()
        || !name.equals(ShardNames.name(key, place.index()))) {
      throw new IllegalArgumentException("ConfigMap " + name + " does not fit the layout of its range");
    }
    BitSet part = ShardEncoding.bitsOf(binary(shard, ALLOCATION));
    if (part.length() > place.span()) {
      throw new IllegalArgumentException("ConfigMap " + shard.getMetadata().getName() + ": allocation data is corrupt:"
          + " its bitmap is longer than its " + place.span() + " offsets");
    }
    return new RangeWindow(place.from(), place.to(), part, memo.decode(shard));
  }

  /**
   * The shard {@code stored} with its data replaced by {@code window}: its name, labels and
   * annotations stay (but a turn taken, which this write ends), so the result is what
   * {@link #encode} would make of the whole range.
   */
  static ConfigMap encodeWindow(ConfigMap stored, RangeWindow window, LedgerMemo memo) {
    String name = stored.getMetadata().getName();
    return new ConfigMapBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(stored.getMetadata().getNamespace())
        .withLabels(stored.getMetadata().getLabels())
        .withAnnotations(withoutTurn(stored.getMetadata().getAnnotations()))
        .endMetadata()
        .addToBinaryData(ALLOCATION, Base64.getEncoder().encodeToString(ShardEncoding.bytesOf(window.taken())))
        .addToBinaryData(HOLDERS, memo.encode(name, window.entries()))
        .build();
  }

  // ---- fields of a shard --------------------------------------------------------------------

  /**
   * An annotation a shard must have.
   *
   * @throws IllegalArgumentException when it has not
   */
  static String annotation(ConfigMap map, String name) {
    String value = map.getMetadata().getAnnotations() == null ? null : map.getMetadata().getAnnotations().get(name);
    if (value == null) {
      throw new IllegalArgumentException("ConfigMap " + map.getMetadata().getName() + " has no " + name
          + " annotation");
    }
    return value;
  }

  /**
   * A binaryData entry a shard must have, decoded.
   *
   * @throws IllegalArgumentException when it has not, or it is not base64
   */
  static byte[] binary(ConfigMap map, String key) {
    String value = map.getBinaryData() == null ? null : map.getBinaryData().get(key);
    if (value == null) {
      throw new IllegalArgumentException("ConfigMap " + map.getMetadata().getName() + " has no binaryData " + key);
    }
    try {
      return Base64.getDecoder().decode(value);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("ConfigMap " + map.getMetadata().getName() + ": binaryData " + key
          + " is not base64", e);
    }
  }
}
