package io.subrange.webhook.store;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.subrange.allocator.store.RangeState;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The holder ledgers ({@link LedgerCodec}) last written or read, by shard: a commit encodes every
 * shard of the ranges it touched and a reload decodes every shard of a kind, but only a few
 * shards' holders change between them, and compressing or expanding the others again would be
 * most of a write's cost. Not needed for correctness: a ledger is reused only for exactly the same
 * entries, or the same stored bytes.
 *
 * <p>{@link StoredShards} keeps the one of a store; the committer thread uses it (encoding a
 * commit's shards, loading shards into the engine), and the thread that starts the store for the
 * first load. Its map is concurrent all the same.
 */
public final class LedgerMemo {

  private static final Logger log = LoggerFactory.getLogger(LedgerMemo.class);

  /** Remembers nothing (one-off encodes and decodes). */
  public static final LedgerMemo NONE = new LedgerMemo(false);

  /**
   * A shard's ledger as last written or read: its entries, its stored form, each line's entry, so
   * reading a new version parses only the lines that changed, and each entry's line, so writing a
   * new version formats only the entries that changed.
   */
  private record Ledger(List<RangeState.Entry> entries, String base64, Map<String, RangeState.Entry> lines,
      Map<RangeState.Entry, String> lineOf) {
  }

  private final boolean remembers;
  private final Map<String, Ledger> byShard = new ConcurrentHashMap<>();

  private LedgerMemo(boolean remembers) {
    this.remembers = remembers;
  }

  /** A memo that remembers every shard's ledger it encodes or decodes. */
  public static LedgerMemo create() {
    return new LedgerMemo(true);
  }

  /** The stored form (base64 of gzip) of a shard's ledger of {@code entries}. */
  String encode(String shard, List<RangeState.Entry> entries) {
    Ledger known = byShard.get(shard);
    if (known != null && known.entries().equals(entries)) {
      return known.base64();
    }
    Map<String, RangeState.Entry> lines = remembers ? new HashMap<>() : null;
    Map<RangeState.Entry, String> lineOf = remembers ? new HashMap<>() : null;
    String base64 = Base64.getEncoder().encodeToString(LedgerCodec.gzip(LedgerCodec.ledger(entries, lines,
        known == null ? Map.of() : known.lineOf(), lineOf)));
    remember(shard, new Ledger(List.copyOf(entries), base64, lines, lineOf));
    return base64;
  }

  /**
   * The entries of a shard's ledger; lines that cannot be read are left out and logged.
   *
   * @throws IllegalArgumentException when the shard has no ledger, or it is not base64 or gzip data
   */
  List<RangeState.Entry> decode(ConfigMap shard) {
    String name = shard.getMetadata().getName();
    String base64 = shard.getBinaryData() == null ? null : shard.getBinaryData().get(RangeConfigMaps.HOLDERS);
    Ledger known = byShard.get(name);
    if (known != null && known.base64().equals(base64)) {
      return known.entries();
    }
    Map<String, RangeState.Entry> lines = new HashMap<>();
    List<String> skipped = new ArrayList<>();
    List<RangeState.Entry> entries = List.copyOf(LedgerCodec.unledger(LedgerCodec.gunzip(
        RangeConfigMaps.binary(shard, RangeConfigMaps.HOLDERS), name), name, skipped,
        known == null ? Map.of() : known.lines(), remembers ? lines : null));
    skipped.forEach(log::warn);
    // The lines this replica last wrote stay known for its next write: a line read back is not
    // taken as the line of its entry, since an older replica may have written it another way.
    remember(name, new Ledger(entries, base64, lines, known == null ? Map.of() : known.lineOf()));
    return entries;
  }

  private void remember(String shard, Ledger ledger) {
    if (remembers) {
      byShard.put(shard, ledger);
    }
  }
}
