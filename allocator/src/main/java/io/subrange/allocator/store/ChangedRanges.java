package io.subrange.allocator.store;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * The ranges, and for Service and NodePort ranges the offsets, that changed since the persisting
 * store last drained them: what its next commit has to write. One for the whole engine, so the
 * ranges come out in the order they first changed, whichever kind they are.
 *
 * <p>Not synchronized: {@link AllocationEngine} calls it only under its own lock.
 */
final class ChangedRanges {

  private final Set<RangeKey> changed = new LinkedHashSet<>();
  /** Which offsets of the changed Service and NodePort ranges changed (see {@link #drainOffsets}). */
  private final Map<RangeKey, Set<Long>> changedOffsets = new LinkedHashMap<>();

  /** A range changed as a whole (pod CIDR states are stored whole). */
  void mark(RangeKey key) {
    changed.add(key);
  }

  /** One offset of a Service or NodePort range changed. */
  void mark(RangeKey key, long offset) {
    changed.add(key);
    changedOffsets.computeIfAbsent(key, k -> new HashSet<>()).add(offset);
  }

  /** The ranges changed since the last call (and forgets them, and their changed offsets). */
  Set<RangeKey> drain() {
    Set<RangeKey> drained = new LinkedHashSet<>(changed);
    changed.clear();
    changedOffsets.clear();
    return drained;
  }

  /**
   * The offsets of Service and NodePort ranges changed since the last call (and forgets them),
   * by range; call before {@link #drain}. A commit writes the stored shards holding them.
   */
  Map<RangeKey, Set<Long>> drainOffsets() {
    Map<RangeKey, Set<Long>> drained = new LinkedHashMap<>(changedOffsets);
    changedOffsets.clear();
    return drained;
  }
}
