package io.subrange.allocator.podcidr;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * A set of non-negative longs held as sorted, disjoint closed intervals. Touching intervals are
 * merged, so {@code [0,4]} and {@code [5,9]} are kept as {@code [0,9]}: a set filled in order
 * stays one entry however many values it holds, and memory grows with the number of gaps, not
 * with the number of values.
 *
 * <p>Not thread-safe; {@link CidrSet} serializes access.
 */
final class LongIntervalSet {

  /** start -> end (inclusive); entries neither overlap nor touch. */
  private final TreeMap<Long, Long> intervals = new TreeMap<>();
  private long size;

  /** How many values are in the set. */
  long size() {
    return size;
  }

  int intervalCount() {
    return intervals.size();
  }

  boolean contains(long value) {
    Map.Entry<Long, Long> e = intervals.floorEntry(value);
    return e != null && e.getValue() >= value;
  }

  /** Adds {@code [from, to]}; returns how many of those values were not in the set before. */
  long add(long from, long to) {
    checkRange(from, to);
    long start = from;
    long end = to;
    long alreadyIn = 0;
    Map.Entry<Long, Long> before = intervals.floorEntry(from);
    Long scanFrom = before != null && before.getValue() >= from - 1 ? before.getKey() : from;
    var touching = intervals.subMap(scanFrom, true, to == Long.MAX_VALUE ? to : to + 1, true).entrySet().iterator();
    while (touching.hasNext()) {
      Map.Entry<Long, Long> e = touching.next();
      alreadyIn += overlap(e.getKey(), e.getValue(), from, to);
      start = Math.min(start, e.getKey());
      end = Math.max(end, e.getValue());
      touching.remove();
    }
    intervals.put(start, end);
    long added = (to - from + 1) - alreadyIn;
    size += added;
    return added;
  }

  /** Removes {@code [from, to]}; returns how many of those values were in the set. */
  long remove(long from, long to) {
    checkRange(from, to);
    Map.Entry<Long, Long> before = intervals.floorEntry(from);
    Long scanFrom = before != null && before.getValue() >= from ? before.getKey() : from;
    List<Map.Entry<Long, Long>> hit = new ArrayList<>(intervals.subMap(scanFrom, true, to, true).entrySet());
    long removed = 0;
    for (Map.Entry<Long, Long> e : hit) {
      long s = e.getKey();
      long t = e.getValue();
      removed += overlap(s, t, from, to);
      intervals.remove(s);
      if (s < from) {
        intervals.put(s, from - 1);
      }
      if (t > to) {
        intervals.put(to + 1, t);
      }
    }
    size -= removed;
    return removed;
  }

  /** The smallest value at or after {@code from} that is not in the set. */
  long nextAbsent(long from) {
    Map.Entry<Long, Long> e = intervals.floorEntry(from);
    // Intervals never touch, so the value after an interval's end is absent.
    return e != null && e.getValue() >= from ? e.getValue() + 1 : from;
  }

  /** The intervals in order, start -> end inclusive. */
  NavigableMap<Long, Long> intervals() {
    return Collections.unmodifiableNavigableMap(intervals);
  }

  void clear() {
    intervals.clear();
    size = 0;
  }

  private static long overlap(long s, long t, long from, long to) {
    long lo = Math.max(s, from);
    long hi = Math.min(t, to);
    return hi >= lo ? hi - lo + 1 : 0;
  }

  private static void checkRange(long from, long to) {
    if (from < 0 || to < from) {
      throw new IllegalArgumentException("not a range of non-negative values: [" + from + ", " + to + "]");
    }
  }
}
