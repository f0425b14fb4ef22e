package io.subrange.webhook.store;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.subrange.allocator.band.SparseAllocationSet;
import io.subrange.allocator.ip.ServiceIpRange;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.port.PortRange;
import io.subrange.allocator.store.Holder;
import io.subrange.allocator.store.RangeKey;
import io.subrange.allocator.store.RangeState;
import io.subrange.allocator.store.RangeWindow;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.zip.Deflater;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a range's {@link RangeState} is kept in ConfigMaps, and read back.
 *
 * <p>A range is split into a fixed number of shards of consecutive offsets: ranges with a bitmap
 * (up to 2^24 addresses, and NodePorts) in blocks of at least {@value #MIN_SHARD_SPAN} offsets
 * and at most {@value #MAX_BITMAP_SHARDS} blocks, sparse IPv6 ranges in {@value #SPARSE_SHARDS},
 * pod CIDRs in one. Small shards keep each write small (a write carries its whole shard, holders
 * included) and let replicas that allocate in different parts of a range (see AnchoredRandom)
 * write different ConfigMaps; no ConfigMap nears the 1 MiB limit. Every shard of a range exists
 * once its state is known, so a missing one means the state is lost and must be rebuilt, never
 * that it was empty.
 * Each shard holds:
 * <ul>
 *   <li>{@code binaryData.allocation}: the allocator's bytes for its part (RangeAllocation data
 *       relative to the shard's first offset; the sparse encoding for sparse ranges);
 *   <li>{@code binaryData.holders.gz}: who holds each value and since when, one line per value;
 *   <li>labels naming the kind, range and family (to list and watch them), and annotations with
 *       the range, encoding, static band and shard.
 * </ul>
 */
public final class RangeConfigMaps {

  private static final Logger log = LoggerFactory.getLogger(RangeConfigMaps.class);

  public static final String PART_OF = "app.kubernetes.io/part-of";
  public static final String KIND_LABEL = "subrange.io/range-kind";
  public static final String RANGE_LABEL = "subrange.io/range-id";
  public static final String FAMILY_LABEL = "subrange.io/family";
  static final String NAME_ANNOTATION = "subrange.io/range-name";
  static final String RANGE_ANNOTATION = "subrange.io/range";
  static final String ENCODING_ANNOTATION = "subrange.io/encoding";
  static final String STATIC_BAND_ANNOTATION = "subrange.io/static-band";
  static final String SHARD_ANNOTATION = "subrange.io/shard";
  static final String SHARD_SPAN_ANNOTATION = "subrange.io/shard-span";
  static final String ALLOCATION = "allocation";
  static final String HOLDERS = "holders.gz";

  /** Offsets per shard of a bitmap range, at least: 64 bytes of bits, a few KiB of holders. */
  static final int MIN_SHARD_SPAN = 512;
  static final int MAX_BITMAP_SHARDS = 128;
  static final int SPARSE_SHARDS = 16;

  private RangeConfigMaps() {
  }

  // ---- names and labels -------------------------------------------------------------------

  /** The label value for a kind: service-ips, node-ports, pod-cidrs. */
  public static String kindLabel(RangeKey.Kind kind) {
    return kind.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /** The label selector that finds every shard of a range. */
  public static Map<String, String> selector(RangeKey key) {
    Map<String, String> labels = selector(key.kind(), key.family());
    labels.put(RANGE_LABEL, rangeId(key.name()));
    return labels;
  }

  /** The label selector that finds every shard of every range of one kind (and family). */
  public static Map<String, String> selector(RangeKey.Kind kind, IpFamily family) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(PART_OF, "subrange");
    labels.put(KIND_LABEL, kindLabel(kind));
    if (family != null) {
      labels.put(FAMILY_LABEL, family.kubernetesName().toLowerCase(Locale.ROOT));
    }
    return labels;
  }

  /** Whether a shard already says what {@code desired} says (labels, annotations, data). */
  public static boolean sameContent(ConfigMap stored, ConfigMap desired) {
    return Objects.equals(stored.getBinaryData(), desired.getBinaryData())
        && Objects.equals(stored.getMetadata().getAnnotations(), desired.getMetadata().getAnnotations())
        && Objects.equals(stored.getMetadata().getLabels(), desired.getMetadata().getLabels());
  }

  /** The ConfigMap name of a shard: subrange-service-ips-kubernetes-ipv4-0. */
  public static String name(RangeKey key, int shard) {
    String family = key.family() == null ? "" : "-" + key.family().kubernetesName().toLowerCase(Locale.ROOT);
    return "subrange-" + kindLabel(key.kind()) + "-" + rangeId(key.name()) + family + "-" + shard;
  }

  /** A range name as a label value (at most 63 characters): itself, or a prefix and a hash. */
  static String rangeId(String name) {
    if (name.length() <= 40) {
      return name;
    }
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(name.getBytes(StandardCharsets.UTF_8));
      return name.substring(0, 30).replaceAll("[^a-z0-9]$", "x") + "-" + HexFormat.of().formatHex(digest, 0, 5);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  // ---- writing ----------------------------------------------------------------------------

  /** How many shards a range has, and how many offsets each covers (unsigned; 0 for pod CIDRs). */
  record Layout(int shards, long span) {

    /** The shard of an offset. */
    int shardOf(long offset) {
      return span == 0 ? 0 : (int) Long.divideUnsigned(offset, span);
    }

    /** Layouts worked out already: a shard load checks its layout, and parsing the range each time showed. */
    private static final Map<String, Layout> KNOWN = new ConcurrentHashMap<>();

    static Layout of(RangeKey key, String encoding, String range) {
      String id = key.kind() + "|" + encoding + "|" + range;
      Layout known = KNOWN.get(id);
      if (known != null) {
        return known;
      }
      Layout layout = compute(key, encoding, range);
      if (KNOWN.size() > 1024) {
        KNOWN.clear();  // ranges come and go rarely; this only bounds what a stranger's ConfigMaps could add
      }
      KNOWN.put(id, layout);
      return layout;
    }

    private static Layout compute(RangeKey key, String encoding, String range) {
      return switch (encoding) {
        case RangeState.RANGE_ALLOCATION -> {
          long size = key.kind() == RangeKey.Kind.NODE_PORTS ? PortRange.parse(range).size()
              : ServiceIpRange.of(Cidr.parse(range)).size();
          long span = Math.max(MIN_SHARD_SPAN, (size + MAX_BITMAP_SHARDS - 1) / MAX_BITMAP_SHARDS);
          span = (span + 63) / 64 * 64;
          yield new Layout((int) Math.max(1, (size + span - 1) / span), span);
        }
        case RangeState.SPARSE -> {
          long size = ServiceIpRange.of(Cidr.parse(range)).size();  // unsigned, up to 2^64 - 1
          yield new Layout(SPARSE_SHARDS, Long.divideUnsigned(size, SPARSE_SHARDS) + 1);
        }
        case RangeState.NODE_LEDGER -> new Layout(1, 0);
        default -> throw new IllegalArgumentException("unknown encoding " + encoding);
      };
    }
  }

  /**
   * The holder ledgers last written or read, by shard: a commit encodes every shard of the ranges
   * it touched and a reload decodes every shard of a kind, but only a few shards' holders change
   * between them, and compressing or expanding the others again would be most of a write's cost.
   * Not needed for correctness: a ledger is reused only for exactly the same entries, or the same
   * stored bytes.
   */
  public static final class LedgerMemo {

    /** Remembers nothing (one-off encodes and decodes). */
    public static final LedgerMemo NONE = new LedgerMemo(false);

    /**
     * A shard's ledger as last written or read: its entries, its stored form, and each line's
     * entry, so reading a new version parses only the lines that changed.
     */
    private record Ledger(List<RangeState.Entry> entries, String base64, Map<String, RangeState.Entry> lines) {
    }

    private final boolean remembers;
    private final Map<String, Ledger> byShard = new ConcurrentHashMap<>();

    private LedgerMemo(boolean remembers) {
      this.remembers = remembers;
    }

    public static LedgerMemo create() {
      return new LedgerMemo(true);
    }

    String encode(String shard, List<RangeState.Entry> entries) {
      Ledger known = byShard.get(shard);
      if (known != null && known.entries().equals(entries)) {
        return known.base64();
      }
      Map<String, RangeState.Entry> lines = remembers ? new HashMap<>() : null;
      String base64 = Base64.getEncoder().encodeToString(gzip(ledger(entries, lines)));
      remember(shard, new Ledger(List.copyOf(entries), base64, lines));
      return base64;
    }

    List<RangeState.Entry> decode(ConfigMap shard) {
      String name = shard.getMetadata().getName();
      String base64 = shard.getBinaryData() == null ? null : shard.getBinaryData().get(HOLDERS);
      Ledger known = byShard.get(name);
      if (known != null && known.base64().equals(base64)) {
        return known.entries();
      }
      Map<String, RangeState.Entry> lines = new HashMap<>();
      List<String> skipped = new ArrayList<>();
      List<RangeState.Entry> entries = List.copyOf(unledger(gunzip(binary(shard, HOLDERS), name), name, skipped,
          known == null ? Map.of() : known.lines(), remembers ? lines : null));
      skipped.forEach(log::warn);
      remember(name, new Ledger(entries, base64, lines));
      return entries;
    }

    private void remember(String shard, Ledger ledger) {
      if (remembers) {
        byShard.put(shard, ledger);
      }
    }
  }

  /** Every shard of a state, by shard index. */
  public static Map<Integer, ConfigMap> encode(RangeState state, String namespace) {
    return encode(state, namespace, LedgerMemo.NONE);
  }

  /** As {@link #encode(RangeState, String)}, reusing ledgers {@code memo} has seen. */
  public static Map<Integer, ConfigMap> encode(RangeState state, String namespace, LedgerMemo memo) {
    Layout layout = Layout.of(state.key(), state.encoding(), state.range());
    Map<Integer, byte[]> allocations = new TreeMap<>();
    switch (state.encoding()) {
      case RangeState.RANGE_ALLOCATION -> {
        BitSet bits = bitsOf(state.allocation());
        for (int shard = 0; shard < layout.shards(); shard++) {
          allocations.put(shard, bytesOf(bits.get((int) (shard * layout.span()), (int) ((shard + 1) * layout.span()))));
        }
      }
      case RangeState.SPARSE -> {
        Map<Integer, List<Long>> byShard = new TreeMap<>();
        for (long offset : SparseAllocationSet.decodeSnapshot(state.allocation())) {
          byShard.computeIfAbsent(layout.shardOf(offset), s -> new ArrayList<>()).add(offset);
        }
        for (int shard = 0; shard < layout.shards(); shard++) {
          allocations.put(shard, SparseAllocationSet.encodeSnapshot(byShard.getOrDefault(shard, List.of()).stream()
              .mapToLong(Long::longValue).toArray()));
        }
      }
      default -> allocations.put(0, new byte[0]);  // node ledger: the entries are the state
    }
    Map<Integer, List<RangeState.Entry>> entries = new TreeMap<>();
    Offsets offsets = Offsets.of(state, layout);
    for (RangeState.Entry entry : state.entries()) {
      entries.computeIfAbsent(offsets.shardOf(entry.value()), s -> new ArrayList<>()).add(entry);
    }
    Map<Integer, ConfigMap> shards = new TreeMap<>();
    for (int shard = 0; shard < layout.shards(); shard++) {
      shards.put(shard, configMap(state, namespace, layout, shard, allocations.get(shard),
          memo.encode(name(state.key(), shard), entries.getOrDefault(shard, List.of()))));
    }
    return shards;
  }

  private static ConfigMap configMap(RangeState state, String namespace, Layout layout, int shard, byte[] allocation,
      String holders) {
    return new ConfigMapBuilder()
        .withNewMetadata()
        .withName(name(state.key(), shard))
        .withNamespace(namespace)
        .withLabels(selector(state.key()))
        .addToAnnotations(NAME_ANNOTATION, state.key().name())
        .addToAnnotations(RANGE_ANNOTATION, state.range())
        .addToAnnotations(ENCODING_ANNOTATION, state.encoding())
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
    ConfigMap head = byName.apply(name(key, 0));
    if (head == null) {
      throw new IllegalArgumentException("ConfigMap " + name(key, 0) + " is missing");
    }
    String range = annotation(head, RANGE_ANNOTATION);
    String encoding = annotation(head, ENCODING_ANNOTATION);
    String staticBand = annotation(head, STATIC_BAND_ANNOTATION);
    Layout layout;
    try {
      layout = Layout.of(key, encoding, range);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("ConfigMap " + name(key, 0) + ": " + e.getMessage(), e);
    }
    BitSet bits = new BitSet();
    List<Long> sparse = new ArrayList<>();
    List<RangeState.Entry> entries = new ArrayList<>();
    for (int index = 0; index < layout.shards(); index++) {
      String name = name(key, index);
      ConfigMap shard = byName.apply(name);
      if (shard == null) {
        throw new IllegalArgumentException("ConfigMap " + name + " is missing (shard " + index + " of "
            + layout.shards() + ")");
      }
      String expectedShard = index + "/" + layout.shards();
      if (!range.equals(annotation(shard, RANGE_ANNOTATION)) || !encoding.equals(annotation(shard, ENCODING_ANNOTATION))
          || !staticBand.equals(annotation(shard, STATIC_BAND_ANNOTATION))
          || !expectedShard.equals(annotation(shard, SHARD_ANNOTATION))
          || !Long.toString(layout.span()).equals(annotation(shard, SHARD_SPAN_ANNOTATION))) {
        throw new IllegalArgumentException("ConfigMap " + name + " does not belong with " + name(key, 0) + " (range "
            + annotation(shard, RANGE_ANNOTATION) + ", shard " + annotation(shard, SHARD_ANNOTATION) + "; expected "
            + range + ", shard " + expectedShard + ")");
      }
      byte[] allocation = binary(shard, ALLOCATION);
      try {
        switch (encoding) {
          case RangeState.RANGE_ALLOCATION -> {
            BitSet part = bitsOf(allocation);
            if (part.length() > layout.span()) {
              throw new IllegalArgumentException("its bitmap is longer than its " + layout.span() + " offsets");
            }
            long base = index * layout.span();
            part.stream().forEach(bit -> bits.set((int) (base + bit)));
          }
          case RangeState.SPARSE -> {
            for (long offset : SparseAllocationSet.decodeSnapshot(allocation)) {
              if (layout.shardOf(offset) != index) {
                throw new IllegalArgumentException("offset " + Long.toUnsignedString(offset) + " belongs in shard "
                    + layout.shardOf(offset));
              }
              sparse.add(offset);
            }
          }
          default -> { }
        }
      } catch (IllegalArgumentException | ArrayIndexOutOfBoundsException e) {
        throw new IllegalArgumentException("ConfigMap " + name + ": allocation data is corrupt: " + e.getMessage(), e);
      }
      entries.addAll(memo.decode(shard));
    }
    byte[] allocation = switch (encoding) {
      case RangeState.RANGE_ALLOCATION -> bytesOf(bits);
      case RangeState.SPARSE -> SparseAllocationSet.encodeSnapshot(sparse.stream().sorted(Long::compareUnsigned)
          .mapToLong(Long::longValue).toArray());
      default -> new byte[0];
    };
    long band;
    try {
      band = Long.parseLong(staticBand);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("ConfigMap " + name(key, 0) + ": static band " + staticBand + " is not a number");
    }
    return new RangeState(key, range, encoding, band, allocation, entries);
  }

  // ---- one shard at a time ------------------------------------------------------------------

  /**
   * Where a bitmap shard sits in its range: its index and the offsets it covers. Empty for shards
   * of other encodings (sparse ranges and pod CIDRs load and write whole) and for shards whose
   * annotations cannot be read (loading the whole range then says what is wrong).
   */
  static Optional<ShardPlace> placeOf(ConfigMap shard) {
    try {
      if (!RangeState.RANGE_ALLOCATION.equals(annotation(shard, ENCODING_ANNOTATION))) {
        return Optional.empty();
      }
      String[] indexOfCount = annotation(shard, SHARD_ANNOTATION).split("/", 2);
      int index = Integer.parseInt(indexOfCount[0]);
      int count = Integer.parseInt(indexOfCount[1]);
      long span = Long.parseLong(annotation(shard, SHARD_SPAN_ANNOTATION));
      if (index < 0 || index >= count || span <= 0 || span % 64 != 0 || span > Integer.MAX_VALUE) {
        return Optional.empty();
      }
      return Optional.of(new ShardPlace(index, count, span));
    } catch (IllegalArgumentException | ArrayIndexOutOfBoundsException e) {
      return Optional.empty();
    }
  }

  /** A bitmap shard's index among {@code count}, and the {@code span} offsets from {@code index * span} it covers. */
  record ShardPlace(int index, int count, long span) {

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
    ShardPlace place = placeOf(shard).orElseThrow(() -> new IllegalArgumentException("ConfigMap " + name
        + " is not a readable bitmap shard"));
    Layout layout = Layout.of(key, RangeState.RANGE_ALLOCATION, rangeOf(shard));
    if (layout.shards() != place.count() || layout.span() != place.span() || !name.equals(name(key, place.index()))) {
      throw new IllegalArgumentException("ConfigMap " + name + " does not fit the layout of its range");
    }
    BitSet part = bitsOf(binary(shard, ALLOCATION));
    if (part.length() > place.span()) {
      throw new IllegalArgumentException("ConfigMap " + shard.getMetadata().getName() + ": allocation data is corrupt:"
          + " its bitmap is longer than its " + place.span() + " offsets");
    }
    return new RangeWindow(place.from(), place.to(), part, memo.decode(shard));
  }

  /**
   * The shard {@code stored} with its data replaced by {@code window}: its name, labels and
   * annotations stay, so the result is what {@link #encode} would make of the whole range.
   */
  static ConfigMap encodeWindow(ConfigMap stored, RangeWindow window, LedgerMemo memo) {
    String name = stored.getMetadata().getName();
    return new ConfigMapBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(stored.getMetadata().getNamespace())
        .withLabels(stored.getMetadata().getLabels())
        .withAnnotations(stored.getMetadata().getAnnotations())
        .endMetadata()
        .addToBinaryData(ALLOCATION, Base64.getEncoder().encodeToString(bytesOf(window.taken())))
        .addToBinaryData(HOLDERS, memo.encode(name, window.entries()))
        .build();
  }

  /** The names of every shard of a range whose head is {@code head}; empty when it cannot tell. */
  public static List<String> shardNames(RangeKey key, ConfigMap head) {
    try {
      Layout layout = Layout.of(key, annotation(head, ENCODING_ANNOTATION), annotation(head, RANGE_ANNOTATION));
      List<String> names = new ArrayList<>();
      for (int i = 0; i < layout.shards(); i++) {
        names.add(name(key, i));
      }
      return names;
    } catch (IllegalArgumentException e) {
      return List.of();
    }
  }

  /** The range a shard belongs to, from its labels and annotations; empty when it is not one of ours. */
  public static Optional<RangeKey> keyOf(ConfigMap configMap) {
    Map<String, String> labels = configMap.getMetadata().getLabels();
    Map<String, String> annotations = configMap.getMetadata().getAnnotations();
    if (labels == null || annotations == null || annotations.get(NAME_ANNOTATION) == null) {
      return Optional.empty();
    }
    String name = annotations.get(NAME_ANNOTATION);
    String kind = labels.getOrDefault(KIND_LABEL, "");
    try {
      return Optional.of(switch (kind) {
        case "service-ips" -> RangeKey.serviceIps(name, IpFamily.valueOf(labels.getOrDefault(FAMILY_LABEL, "")
            .toUpperCase(Locale.ROOT)));
        case "node-ports" -> RangeKey.nodePorts();
        case "pod-cidrs" -> RangeKey.podCidrs(name);
        default -> null;
      });
    } catch (IllegalArgumentException | NullPointerException e) {
      return Optional.empty();
    }
  }

  private static String annotation(ConfigMap map, String name) {
    String value = map.getMetadata().getAnnotations() == null ? null : map.getMetadata().getAnnotations().get(name);
    if (value == null) {
      throw new IllegalArgumentException("ConfigMap " + map.getMetadata().getName() + " has no " + name + " annotation");
    }
    return value;
  }

  private static byte[] binary(ConfigMap map, String key) {
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

  // ---- the pieces -------------------------------------------------------------------------

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

  /**
   * One line per value: value, holder kind, namespace, name, uid, since, first (see
   * {@link RangeState.Entry}), tab-separated, holder kind "-" for unknown. Fields are
   * percent-escaped ('%', tab, CR and LF), so no holder's name can break a line; admission refuses
   * such names anyway. Lines written before "first" existed have six fields.
   */
  static byte[] ledger(List<RangeState.Entry> entries) {
    return ledger(entries, null);
  }

  /** As {@link #ledger(List)}, noting each line's entry in {@code lines} (when not null). */
  static byte[] ledger(List<RangeState.Entry> entries, Map<String, RangeState.Entry> lines) {
    StringBuilder text = new StringBuilder();
    for (RangeState.Entry e : entries) {
      String line = line(e);
      text.append(line).append('\n');
      if (lines != null) {
        lines.put(line, e);
      }
    }
    return text.toString().getBytes(StandardCharsets.UTF_8);
  }

  private static String line(RangeState.Entry e) {
    Holder h = e.holder();
    return escape(e.value()) + '\t'
        + (h == null ? "-" : escape(h.kind())) + '\t'
        + (h == null ? "" : escape(h.namespace())) + '\t'
        + (h == null ? "" : escape(h.name())) + '\t'
        + (h == null ? "" : escape(h.uid())) + '\t'
        + e.sinceEpochSeconds() + '\t'
        + e.firstEpochSeconds();
  }


  /**
   * The entries of a ledger. A line that cannot be read is left out and counted in
   * {@code skipped}, never fatal: its value stays taken in the shard's allocation (the
   * authority on what is free), only without a holder on record, which the reconciler fills in
   * from the cluster. One bad line must not take a whole range out of service.
   */
  static List<RangeState.Entry> unledger(byte[] ledger, String where, List<String> skipped) {
    return unledger(ledger, where, skipped, Map.of(), null);
  }

  /**
   * As {@link #unledger(byte[], String, List)}, taking the entry of a line {@code known} has
   * already parsed, and noting each line's entry in {@code seen} (when not null).
   */
  static List<RangeState.Entry> unledger(byte[] ledger, String where, List<String> skipped,
      Map<String, RangeState.Entry> known, Map<String, RangeState.Entry> seen) {
    List<RangeState.Entry> entries = new ArrayList<>();
    for (String line : new String(ledger, StandardCharsets.UTF_8).split("\n")) {
      if (line.isEmpty()) {
        continue;
      }
      try {
        RangeState.Entry entry = known.get(line);
        if (entry == null) {
          entry = entryOf(line);
        }
        entries.add(entry);
        if (seen != null) {
          seen.put(line, entry);
        }
      } catch (IllegalArgumentException e) {
        skipped.add("ConfigMap " + where + ": holder line \"" + shorten(line) + "\" is malformed ("
            + e.getMessage() + "); its value stays taken, without a holder on record");
      }
    }
    return entries;
  }

  /**
   * The holder lines one shard carries, as far as they can be read (none when its ledger is
   * corrupt): for merging into a rebuilt state what was stored while it was being made.
   */
  static List<RangeState.Entry> readableEntries(ConfigMap shard) {
    String name = shard.getMetadata().getName();
    try {
      return unledger(gunzip(binary(shard, HOLDERS), name), name);
    } catch (IllegalArgumentException e) {
      return List.of();
    }
  }

  static List<RangeState.Entry> unledger(byte[] ledger, String where) {
    List<String> skipped = new ArrayList<>();
    List<RangeState.Entry> entries = unledger(ledger, where, skipped);
    skipped.forEach(log::warn);
    return entries;
  }

  private static RangeState.Entry entryOf(String line) {
    String[] f = line.split("\t", -1);
    if (f.length != 6 && f.length != 7) {
      throw new IllegalArgumentException(f.length + " fields, not 6 or 7");
    }
    Holder holder = f[1].equals("-") ? null : new Holder(unescape(f[1]), unescape(f[2]), unescape(f[3]),
        unescape(f[4]));
    long since = Long.parseLong(f[5]);
    return new RangeState.Entry(unescape(f[0]), holder, since, f.length == 7 ? Long.parseLong(f[6]) : since);
  }

  private static String shorten(String line) {
    return line.length() <= 200 ? line : line.substring(0, 200) + "...(" + line.length() + " characters)";
  }

  private static String escape(String field) {
    if (field.indexOf('%') < 0 && field.indexOf('\t') < 0 && field.indexOf('\n') < 0 && field.indexOf('\r') < 0) {
      return field;
    }
    return field.replace("%", "%25").replace("\t", "%09").replace("\n", "%0A").replace("\r", "%0D");
  }

  private static String unescape(String field) {
    if (field.indexOf('%') < 0) {
      return field;
    }
    StringBuilder text = new StringBuilder(field.length());
    for (int i = 0; i < field.length(); i++) {
      char c = field.charAt(i);
      if (c == '%' && i + 2 < field.length()) {
        text.append((char) Integer.parseInt(field.substring(i + 1, i + 3), 16));
        i += 2;
      } else if (c == '%') {
        throw new IllegalArgumentException("a '%' without two hex digits");
      } else {
        text.append(c);
      }
    }
    return text.toString();
  }

  /** Fast rather than small: it runs on every write, and the text is repetitive enough either way. */
  static byte[] gzip(byte[] data) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(data.length / 4 + 64);
    try (GZIPOutputStream zip = new GZIPOutputStream(out) {
      {
        def.setLevel(Deflater.BEST_SPEED);
      }
    }) {
      zip.write(data);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  static byte[] gunzip(byte[] data, String where) {
    try (GZIPInputStream zip = new GZIPInputStream(new ByteArrayInputStream(data))) {
      return zip.readAllBytes();
    } catch (IOException e) {
      throw new IllegalArgumentException("ConfigMap " + where + ": holders are not gzip data: " + e.getMessage(), e);
    }
  }

  /** Which shard a value's holder line goes to: the shard of the value's offset. */
  private record Offsets(RangeState state, Layout layout, ServiceIpRange ips, PortRange ports) {

    static Offsets of(RangeState state, Layout layout) {
      return switch (state.key().kind()) {
        case SERVICE_IPS -> new Offsets(state, layout, ServiceIpRange.of(Cidr.parse(state.range())), null);
        case NODE_PORTS -> new Offsets(state, layout, null, PortRange.parse(state.range()));
        case POD_CIDRS -> new Offsets(state, layout, null, null);
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
