package io.subrange.allocator.store;

import java.time.Clock;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * Who holds each value of one kind (the addresses of one IP family, or the NodePorts), since
 * when, and which values each object holds, so that a retried create gets back what its object
 * holds. Every change to a hold goes through here, the same for addresses and ports: taking,
 * re-arming, adopting, releasing and freeing a value, and loading holds another replica stored.
 *
 * <p>What differs between the kinds comes in from outside: a {@link Space} says which allocator
 * hands the values out and which stored ranges (and offsets) a value belongs to, and the index
 * of values by object has one of two shapes: a Service holds one ClusterIP per family
 * ({@link #onePerObject}), but any number of NodePorts ({@link #sortedPerObject}).
 *
 * <p>Not synchronized: {@link AllocationEngine} calls it only under its own lock, which is
 * what makes a request atomic across ledgers.
 *
 * @param <V> the values: {@code IpAddress}, or {@code Integer} for ports (boxed as the maps
 *     always held them; pass a boxed port along rather than boxing it again per call)
 */
final class HolderLedger<V> {

  /** For releases: any time the value was taken. */
  static final long ANY_TIME = Long.MIN_VALUE;

  /**
   * Where a ledger's values come from and go to; called under the engine's lock, like the ledger.
   *
   * @param <V> the values
   */
  interface Space<V> {

    /** Whether the allocator has {@code value} taken (false for a value outside its ranges). */
    boolean isTaken(V value);

    /** Gives {@code value} back to the allocator. */
    void release(V value);

    /** Marks the stored ranges and offsets holding {@code value} changed, to be written. */
    void markChanged(V value);
  }

  private final Map<V, Held> holders = new HashMap<>();
  private final ObjectIndex<V> byObject;
  private final Space<V> space;
  private final Clock clock;

  private HolderLedger(Space<V> space, ObjectIndex<V> byObject, Clock clock) {
    this.space = space;
    this.byObject = byObject;
    this.clock = clock;
  }

  /**
   * A ledger whose objects each hold one value (the addresses of a family: one ClusterIP per
   * family); the index names the value recorded last.
   */
  static <V> HolderLedger<V> onePerObject(Space<V> space, Clock clock) {
    return new HolderLedger<>(space, new OnePerObject<>(), clock);
  }

  /**
   * A ledger whose objects hold any number of values (NodePorts), which a dynamic claim tries in
   * their natural order.
   */
  static <V extends Comparable<? super V>> HolderLedger<V> sortedPerObject(Space<V> space, Clock clock) {
    return new HolderLedger<>(space, new SortedPerObject<>(), clock);
  }

  // ---- lookups ----------------------------------------------------------------------------

  /** Who holds {@code value}, or null when nobody is on record. */
  Held held(V value) {
    return holders.get(value);
  }

  /** True when the object {@code key} names holds a value here. */
  boolean holdsAnythingFor(ObjectKey key) {
    return byObject.holdsAny(key);
  }

  /**
   * The value a dynamic claim of {@code holder} takes back (an admission retried after its first
   * attempt was partly stored): the first one the object holds, in the index's order, whose hold
   * is still its own ({@link Holder#isSameObject}) and that is not in {@code excluded}; null when
   * there is none.
   */
  V heldBy(Holder holder, Set<V> excluded) {
    return holder.isNamed() ? byObject.firstHeldBy(ObjectKey.of(holder), holder, excluded, holders) : null;
  }

  // ---- changes, each marked changed -------------------------------------------------------

  /** Holds {@code value}, just taken from its allocator, for {@code holder} from now on. */
  void hold(V value, Holder holder) {
    record(value, Held.from(holder, now()));
    space.markChanged(value);
  }

  /**
   * A CREATE (no uid yet) that gets back what its object already holds is an admission retried
   * after an attempt whose object was never created: its values have been held with no owner
   * since then, and the reconciler frees such values after its grace period. Holding them anew
   * from now keeps them from being freed under the object about to be created. Not done within
   * {@value AllocationEngine#REARM_AFTER_SECONDS} s of taking them, so the validating
   * webhook's check after the mutating one changes nothing.
   */
  boolean needsRearm(V value, Holder asking) {
    return needsRearm(holders.get(value), asking);
  }

  private boolean needsRearm(Held held, Holder asking) {
    long now = now();
    return held != null && asking.uid().isEmpty() && now - held.since() >= AllocationEngine.REARM_AFTER_SECONDS
        && now - held.first() < AllocationEngine.MAX_REARMED_HOLD_SECONDS;
  }

  /** Re-arms the hold on {@code value} when {@code asking} gets it back and {@link #needsRearm needs it}. */
  void rearm(V value, Holder asking, boolean dryRun) {
    Held held = holders.get(value);
    if (!dryRun && needsRearm(held, asking)) {
      record(value, held.rearmed(now()));
      space.markChanged(value);
    }
  }

  /**
   * Frees {@code value} when it is taken and a release may free it: only from {@code holder} (the
   * same object) when one is given, and, for a leak ({@code heldSince} not {@link #ANY_TIME}),
   * only while the hold is the one the reconciler judged: a create retried meanwhile re-armed it
   * (a later since) and keeps it.
   *
   * @return whether it was freed
   */
  boolean release(V value, Holder holder, long heldSince) {
    return freeIf(value, current -> stillHeldAsSeen(current, holder, heldSince));
  }

  /**
   * Frees {@code value} only while {@code holder} itself holds it, uid included: unlike {@link
   * #release}, a record without a uid (made at CREATE, perhaps for a new object of the same name)
   * is not this holder's.
   *
   * @return whether it was freed
   */
  boolean releaseIfHeldExactlyBy(V value, Holder holder) {
    return freeIf(value, current -> current != null && current.holder().equals(holder));
  }

  /** Frees {@code value} when it is taken and its record (null: none) passes {@code mayFree}. */
  private boolean freeIf(V value, Predicate<Held> mayFree) {
    if (!space.isTaken(value) || !mayFree.test(holders.get(value))) {
      return false;
    }
    free(value);
    return true;
  }

  private static boolean stillHeldAsSeen(Held current, Holder holder, long heldSince) {
    if (holder != null && current != null && !current.holder().isSameObject(holder)) {
      return false;
    }
    return heldSince == ANY_TIME || current == null || current.since() == heldSince;
  }

  /** Gives {@code value} back to its allocator and forgets its holder. */
  void free(V value) {
    space.release(value);
    forget(value);
    space.markChanged(value);
  }

  /**
   * Names {@code owner} as the holder of a taken value {@code recorded} holds on record (null:
   * held without a known holder), keeping its times.
   *
   * @return whether the record changed
   */
  boolean adopt(V value, Holder recorded, Holder owner) {
    Held held = holders.get(value);
    if (!space.isTaken(value) || !Objects.equals(held == null ? null : held.holder(), recorded)) {
      return false;
    }
    record(value, held == null ? Held.from(owner, now()) : held.heldBy(owner));
    space.markChanged(value);
    return true;
  }

  /**
   * Gives {@code value}, held by a reservation ahead ({@code reserved}), to {@code owner}, held
   * from now.
   *
   * @return whether it changed hands; false when {@code reserved} no longer holds it
   */
  boolean handOver(V value, Holder reserved, Holder owner) {
    Held held = holders.get(value);
    if (!space.isTaken(value) || held == null || !held.holder().equals(reserved)) {
      return false;
    }
    record(value, Held.from(owner, now()));
    space.markChanged(value);
    return true;
  }

  // ---- loading: nothing marked changed ----------------------------------------------------

  /**
   * Puts {@code held} on record for {@code value}, as it is; a holder on record before stops
   * holding it. Not marked changed (a hold loaded from a stored state is stored already).
   */
  void record(V value, Held held) {
    Held before = holders.put(value, held);
    Holder holder = held.holder();
    // The same object holding it again keeps its index entry (a re-arm, a uid filled in).
    if (before != null && !ObjectKey.same(before.holder(), holder)) {
      unindex(value, before);
    }
    if (holder.isNamed()) {
      byObject.add(ObjectKey.of(holder), value);
    }
  }

  /** Forgets who holds {@code value}; its allocator's bits are the caller's. Not marked changed. */
  void forget(V value) {
    Held held = holders.remove(value);
    if (held != null) {
      unindex(value, held);
    }
  }

  /** Forgets every hold: the stored state of the whole kind is about to be loaded. */
  void clear() {
    holders.clear();
    byObject.clear();
  }

  /**
   * Replaces the holds of one window of a range with those stored for it, as another replica left
   * them: {@code before} are the values the window had taken, {@code incoming} the holds stored
   * for the values it takes now (consumed). Not marked changed.
   */
  void replaceWindow(Collection<V> before, Map<V, Held> incoming) {
    // Only what changed is touched: most of a shard is the same as before another replica's write.
    for (V value : before) {
      Held was = holders.get(value);
      if (was != null && was.equals(incoming.get(value))) {
        incoming.remove(value);
      } else {
        forget(value);
      }
    }
    incoming.forEach(this::record);
  }

  private void unindex(V value, Held held) {
    if (held.holder().isNamed()) {
      byObject.remove(ObjectKey.of(held.holder()), value);
    }
  }

  private long now() {
    return clock.instant().getEpochSecond();
  }

  private static boolean isHeldBy(Held held, Holder asking) {
    return held != null && held.holder().isSameObject(asking);
  }

  // ---- the index of values by object -------------------------------------------------------

  /** An object by kind, namespace and name (its uid aside): the same object across a re-create. */
  record ObjectKey(String kind, String namespace, String name) {

    static ObjectKey of(Holder holder) {
      return new ObjectKey(holder.kind(), holder.namespace(), holder.name());
    }

    /** Whether two holders have the same key, without making keys. */
    static boolean same(Holder a, Holder b) {
      return a.kind().equals(b.kind()) && a.namespace().equals(b.namespace()) && a.name().equals(b.name());
    }
  }

  /** Which values each named object holds: where addresses and NodePorts differ. */
  private interface ObjectIndex<V> {

    void add(ObjectKey key, V value);

    /** Removes {@code value} from what {@code key} holds, if it is there. */
    void remove(ObjectKey key, V value);

    boolean holdsAny(ObjectKey key);

    void clear();

    /** See {@link HolderLedger#heldBy}. */
    V firstHeldBy(ObjectKey key, Holder holder, Set<V> excluded, Map<V, Held> holders);
  }

  /** One value per object: the one recorded last. */
  private static final class OnePerObject<V> implements ObjectIndex<V> {

    private final Map<ObjectKey, V> values = new HashMap<>();

    @Override
    public void add(ObjectKey key, V value) {
      values.put(key, value);
    }

    @Override
    public void remove(ObjectKey key, V value) {
      values.remove(key, value);  // only while it is the one the object is on record with
    }

    @Override
    public boolean holdsAny(ObjectKey key) {
      return values.containsKey(key);
    }

    @Override
    public void clear() {
      values.clear();
    }

    @Override
    public V firstHeldBy(ObjectKey key, Holder holder, Set<V> excluded, Map<V, Held> holders) {
      V value = values.get(key);
      return value != null && !excluded.contains(value) && isHeldBy(holders.get(value), holder) ? value : null;
    }
  }

  /** Any number of values per object, in their natural order. */
  private static final class SortedPerObject<V extends Comparable<? super V>> implements ObjectIndex<V> {

    private final Map<ObjectKey, Set<V>> values = new HashMap<>();

    @Override
    public void add(ObjectKey key, V value) {
      values.computeIfAbsent(key, k -> new TreeSet<>()).add(value);
    }

    @Override
    public void remove(ObjectKey key, V value) {
      Set<V> held = values.get(key);
      if (held != null) {
        held.remove(value);
        if (held.isEmpty()) {
          values.remove(key);
        }
      }
    }

    @Override
    public boolean holdsAny(ObjectKey key) {
      return values.containsKey(key);
    }

    @Override
    public void clear() {
      values.clear();
    }

    @Override
    public V firstHeldBy(ObjectKey key, Holder holder, Set<V> excluded, Map<V, Held> holders) {
      Set<V> held = values.get(key);
      if (held != null) {
        for (V value : held) {
          if (!excluded.contains(value) && isHeldBy(holders.get(value), holder)) {
            return value;
          }
        }
      }
      return null;
    }
  }
}
