package io.subrange.webhook.store;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.subrange.allocator.store.Holder;
import io.subrange.allocator.store.RangeState;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.zip.Deflater;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The holder ledger a shard keeps in {@code binaryData.holders.gz}: who holds each of its values
 * and since when, one gzip-compressed text line per value. The line format is part of the stored
 * format (replicas of other versions, and the test harness's own reader, read it), so it must not
 * change.
 *
 * <p>Stateless; {@link LedgerMemo} remembers ledgers between calls. Called on the committer thread
 * (encoding a commit's shards, loading shards, merging a rebuilt state), by the first load on the
 * thread that starts the store, and from tests.
 */
final class LedgerCodec {

  private static final Logger log = LoggerFactory.getLogger(LedgerCodec.class);

  private LedgerCodec() {
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
    return ledger(entries, lines, Map.of(), null);
  }

  /**
   * As {@link #ledger(List, Map)}, taking the line of an entry {@code known} has already made
   * (most of a shard's entries are the same from one write to the next), and noting each
   * entry's line in {@code made} (when not null).
   */
  static byte[] ledger(List<RangeState.Entry> entries, Map<String, RangeState.Entry> lines,
      Map<RangeState.Entry, String> known, Map<RangeState.Entry, String> made) {
    StringBuilder text = new StringBuilder(entries.size() * 96);
    for (RangeState.Entry e : entries) {
      String line = known.get(e);
      if (line == null) {
        line = line(e);
      }
      text.append(line).append('\n');
      if (lines != null) {
        lines.put(line, e);
      }
      if (made != null) {
        made.put(e, line);
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

  /** As {@link #unledger(byte[], String, List)}, logging the lines left out. */
  static List<RangeState.Entry> unledger(byte[] ledger, String where) {
    List<String> skipped = new ArrayList<>();
    List<RangeState.Entry> entries = unledger(ledger, where, skipped);
    skipped.forEach(log::warn);
    return entries;
  }

  /**
   * The holder lines one shard carries, as far as they can be read (none when its ledger is
   * corrupt): for merging into a rebuilt state what was stored while it was being made.
   */
  static List<RangeState.Entry> readableEntries(ConfigMap shard) {
    String name = shard.getMetadata().getName();
    try {
      return unledger(gunzip(RangeConfigMaps.binary(shard, RangeConfigMaps.HOLDERS), name), name);
    } catch (IllegalArgumentException e) {
      return List.of();
    }
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
    if (!needsEscape(field)) {
      return field;
    }
    return field.replace("%", "%25").replace("\t", "%09").replace("\n", "%0A").replace("\r", "%0D");
  }

  /** One pass over the field (this runs for every field of every line a write encodes). */
  private static boolean needsEscape(String field) {
    for (int i = 0; i < field.length(); i++) {
      char c = field.charAt(i);
      if (c == '%' || c == '\t' || c == '\n' || c == '\r') {
        return true;
      }
    }
    return false;
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

  // ---- compression --------------------------------------------------------------------------

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
}
