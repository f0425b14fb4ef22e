package io.subrange.allocator.ip;

import io.subrange.allocator.band.BandedAllocator;
import io.subrange.allocator.band.BandedAllocators;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.band.RangeUsage;
import io.subrange.allocator.band.StartStrategy;
import io.subrange.allocator.band.UniformStart;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.random.RandomGenerator;
import java.util.stream.Collectors;

/**
 * All Service ranges of one IP family, merged as KEP-1880 merges ServiceCIDRs.
 *
 * <p>Ranges are named (after their ServiceCIDR) and may be added, marked terminating and removed
 * while the pool is in use. An address belongs to every range that covers it: taking or
 * releasing it marks every covering range, so each range's bands and counts stay true even
 * when ranges overlap. An address can be taken when at least one live (not terminating) range
 * covers it; a terminating range hands out nothing new.
 *
 * <p>Dynamic allocation keeps KEP-3070's bands across ranges: every live range's dynamic band
 * is used before any static band. Among ranges with room the pool picks one at random,
 * weighted by its free addresses, so load spreads in proportion to size. That choice is always
 * uniform; only where allocation starts inside the chosen range's band follows the
 * {@link StartStrategy}.
 *
 * <p>Thread-safe: every method holds the pool's lock.
 */
public final class ServiceIpPool {

  private final IpFamily family;
  private final StartStrategy starts;
  /** Picks among ranges with room; uniform, whatever the start strategy. */
  private final RandomGenerator choices;
  private final Map<String, Member> members = new TreeMap<>();

  /** Starts and choices both uniform, drawn from {@code random} (tests pass a seeded one). */
  public ServiceIpPool(IpFamily family, RandomGenerator random) {
    this(family, new UniformStart(random), random);
  }

  /**
   * @param starts where dynamic allocation starts inside a range's band
   * @param choices picks among ranges with room, weighted by free addresses; must be uniform
   */
  public ServiceIpPool(IpFamily family, StartStrategy starts, RandomGenerator choices) {
    this.family = family;
    this.starts = starts;
    this.choices = choices;
  }

  /** The outcome of taking a specific address. */
  public enum Take { TAKEN, ALREADY_ALLOCATED }

  /** An address taken dynamically and the range that chose it. */
  public record Allocated(IpAddress address, Cidr range) {
  }

  public IpFamily family() {
    return family;
  }

  /**
   * Adds a range. Addresses already taken in overlapping ranges are taken in it too. Adding the
   * same name with the same CIDR again is a no-op, and revives it if it was terminating.
   *
   * @throws IllegalArgumentException for another family, an unusable block, or a name already
   *     used for another CIDR
   */
  public synchronized void add(String name, Cidr cidr) {
    if (cidr.family() != family) {
      throw new IllegalArgumentException(cidr + " is not " + family);
    }
    Member existing = members.get(name);
    if (existing != null) {
      if (!existing.range.cidr().equals(cidr)) {
        throw new IllegalArgumentException("Service range " + name + " is " + existing.range.cidr()
            + "; it cannot become " + cidr);
      }
      existing.terminating = false;
      return;
    }
    ServiceIpRange range = ServiceIpRange.of(cidr);
    Member added = new Member(range, BandedAllocators.create(range.size(), range.staticBandSize(), starts));
    for (Member other : members.values()) {
      if (other.range.overlaps(range)) {
        other.forEachAllocated(address -> added.mark(address));
      }
    }
    members.put(name, added);
  }

  /** Stops a range from handing out addresses; what it holds stays held. */
  public synchronized void markTerminating(String name) {
    member(name).terminating = true;
  }

  /**
   * How many taken addresses only {@code name} covers among live ranges: while this is not 0,
   * deleting the range would leave them in no range (KEP-1880 holds the deletion).
   */
  public synchronized long inUseOnlyBy(String name) {
    Member target = member(name);
    long[] count = {0};
    target.forEachAllocated(address -> {
      boolean coveredElsewhere = members.values().stream()
          .anyMatch(m -> m != target && !m.terminating && m.range.canAssign(address));
      if (!coveredElsewhere) {
        count[0]++;
      }
    });
    return count[0];
  }

  /**
   * Removes a range.
   *
   * @throws IllegalStateException while addresses only it covers are taken
   */
  public synchronized void remove(String name) {
    long stranded = inUseOnlyBy(name);
    if (stranded > 0) {
      throw new IllegalStateException("Service range " + name + " (" + member(name).range.cidr() + ") still holds "
          + stranded + " addresses no other range covers");
    }
    members.remove(name);
  }

  /** True when a live range covers the address and it can be assigned there. */
  public synchronized boolean isAssignable(IpAddress address) {
    return members.values().stream().anyMatch(m -> !m.terminating && m.range.canAssign(address));
  }

  /**
   * Why {@code address} cannot be taken (no live range covers it), for messages; null when it can.
   */
  public synchronized String whyNotAssignable(IpAddress address) {
    if (isAssignable(address)) {
      return null;
    }
    List<String> reasons = new ArrayList<>();
    for (Member m : members.values()) {
      if (m.range.cidr().contains(address)) {
        reasons.add(m.terminating ? "Service range " + m.range.cidr() + " is being deleted"
            : m.range.whyNotAssignable(address));
      }
    }
    if (reasons.isEmpty()) {
      return address + " is not in any Service range (" + describe() + ")";
    }
    return String.join("; ", reasons) + " (Service ranges: " + describe() + ")";
  }

  /**
   * Takes a specific address in every range that covers it.
   *
   * @throws IllegalArgumentException when no live range can assign it (see {@link #whyNotAssignable})
   */
  public synchronized Take allocate(IpAddress address) {
    String why = whyNotAssignable(address);
    if (why != null) {
      throw new IllegalArgumentException(why);
    }
    if (isAllocated(address)) {
      return Take.ALREADY_ALLOCATED;
    }
    markEverywhere(address);
    return Take.TAKEN;
  }

  /** Takes a free address, dynamic bands first; null when every live range is full. */
  public synchronized Allocated allocateNext() {
    Member chosen = chooseMemberWithRoom();
    if (chosen == null) {
      return null;
    }
    IpAddress address = chosen.range.addressAt(chosen.bits.allocateNext());
    markEverywhere(address);
    return new Allocated(address, chosen.range.cidr());
  }

  /** An address {@link #allocateNext} could take now, without taking it; null when full. */
  public synchronized Allocated peekNext() {
    Member chosen = chooseMemberWithRoom();
    return chosen == null ? null : new Allocated(chosen.range.addressAt(chosen.bits.peekNext()), chosen.range.cidr());
  }

  /** The first live range (in name order) that can assign {@code address}, or null. */
  public synchronized Cidr homeOf(IpAddress address) {
    return members.values().stream().filter(m -> !m.terminating && m.range.canAssign(address))
        .map(m -> m.range.cidr()).findFirst().orElse(null);
  }

  /** The live ranges, as text, for messages: "10.96.0.0/12, 10.100.0.0/16". */
  public synchronized String describeLive() {
    return members.values().stream().filter(m -> !m.terminating).map(m -> m.range.cidr().toString())
        .collect(Collectors.joining(", "));
  }

  /** True when some live range can still hand out an address. */
  public synchronized boolean hasLiveRange() {
    return members.values().stream().anyMatch(m -> !m.terminating);
  }

  /** Frees an address in every range that covers it; false when it was not taken. */
  public synchronized boolean release(IpAddress address) {
    boolean released = false;
    for (Member m : members.values()) {
      long offset = m.range.offsetOf(address);
      if (offset != ServiceIpRange.NOT_ASSIGNABLE) {
        released |= m.bits.release(offset);
      }
    }
    return released;
  }

  public synchronized boolean isAllocated(IpAddress address) {
    for (Member m : members.values()) {
      long offset = m.range.offsetOf(address);
      if (offset != ServiceIpRange.NOT_ASSIGNABLE && m.bits.isAllocated(offset)) {
        return true;
      }
    }
    return false;
  }

  /** The live range with room that dynamic allocation should use, or null. */
  private Member chooseMemberWithRoom() {
    Member dynamic = weightedChoice(true);
    return dynamic != null ? dynamic : weightedChoice(false);
  }

  private Member weightedChoice(boolean dynamicBand) {
    List<Member> candidates = new ArrayList<>();
    double total = 0;
    for (Member m : members.values()) {
      double room = RangeUsage.asDouble(dynamicBand ? m.freeInDynamicBand() : m.bits.free());
      if (!m.terminating && room > 0) {
        candidates.add(m);
        total += room;
      }
    }
    if (candidates.size() <= 1) {
      return candidates.isEmpty() ? null : candidates.get(0);
    }
    double pick = choices.nextDouble() * total;
    for (Member m : candidates) {
      pick -= RangeUsage.asDouble(dynamicBand ? m.freeInDynamicBand() : m.bits.free());
      if (pick < 0) {
        return m;
      }
    }
    return candidates.get(candidates.size() - 1);
  }

  private void markEverywhere(IpAddress address) {
    for (Member m : members.values()) {
      m.mark(address);
    }
  }

  public synchronized List<RangeUsage> usage() {
    return members.values().stream()
        .map(m -> new RangeUsage(m.range.cidr().toString(), m.range.size(), m.range.staticBandSize(), m.bits.used(),
            m.bits.usedInStaticBand()))
        .toList();
  }

  /** The ranges: name to CIDR, in name order. */
  public synchronized Map<String, Cidr> ranges() {
    Map<String, Cidr> result = new TreeMap<>();
    members.forEach((name, m) -> result.put(name, m.range.cidr()));
    return result;
  }

  public synchronized boolean isTerminating(String name) {
    return member(name).terminating;
  }

  public synchronized ServiceIpRange range(String name) {
    return member(name).range;
  }

  /** Calls {@code action} with every taken address of one range. */
  public synchronized void forEachTaken(String name, Consumer<IpAddress> action) {
    member(name).forEachAllocated(action);
  }

  /**
   * Replaces one range's state with a snapshot, then marks its addresses in the ranges that
   * overlap it, so the pool stays one picture; used to load persisted state.
   *
   * @throws IllegalArgumentException when the snapshot does not fit the range
   */
  public synchronized void restore(String name, byte[] snapshot) {
    Member restored = member(name);
    restored.bits.restore(snapshot);
    restored.forEachAllocated(this::markEverywhere);
  }

  /**
   * Whether another range of the pool shares addresses with this one. Such ranges mark each
   * other's addresses, so their stored state can only be loaded together, not a shard at a time.
   */
  public synchronized boolean overlapsAnother(String name) {
    Member m = member(name);
    return members.values().stream().anyMatch(other -> other != m && other.range.overlaps(m.range));
  }

  /** Calls {@code action} with the taken addresses at offsets {@code [from, to)} of one range, in order. */
  public synchronized void forEachTakenIn(String name, long from, long to, Consumer<IpAddress> action) {
    Member m = member(name);
    m.bits.forEachAllocatedIn(from, to, offset -> action.accept(m.range.addressAt(offset)));
  }

  /**
   * Makes offsets {@code [from, to)} of one range hold exactly {@code taken} (bit i is offset
   * {@code from + i}): one stored shard loaded again. Only for a range that {@link
   * #overlapsAnother overlaps no other}.
   */
  public synchronized void replaceIn(String name, long from, long to, BitSet taken) {
    Member m = member(name);
    if (overlapsAnother(name)) {
      throw new IllegalStateException("range " + name + " overlaps another; load the whole pool");
    }
    m.bits.replaceIn(from, to, taken);
  }

  /** Frees every address in every range (before the whole pool is loaded again). */
  public synchronized void clear() {
    for (Member m : members.values()) {
      m.bits.clear();
    }
  }

  /** The taken addresses of one range's static band, in address order (at most 256). */
  public synchronized List<IpAddress> takenInStaticBand(String name) {
    Member m = member(name);
    List<IpAddress> taken = new ArrayList<>();
    for (long offset = 0; offset < m.range.staticBandSize(); offset++) {
      if (m.bits.isAllocated(offset)) {
        taken.add(m.range.addressAt(offset));
      }
    }
    return taken;
  }

  /** The snapshot of one range's state (see {@link BandedAllocator#snapshot}). */
  public synchronized byte[] snapshot(String name) {
    return member(name).bits.snapshot();
  }

  private String describe() {
    return members.values().stream()
        .map(m -> m.range.cidr() + (m.terminating ? " (terminating)" : ""))
        .collect(Collectors.joining(", "));
  }

  private Member member(String name) {
    Member m = members.get(name);
    if (m == null) {
      throw new IllegalArgumentException("no Service range named " + name);
    }
    return m;
  }

  /** One range of the pool and its allocation state. */
  private static final class Member {
    final ServiceIpRange range;
    final BandedAllocator bits;
    boolean terminating;

    Member(ServiceIpRange range, BandedAllocator bits) {
      this.range = range;
      this.bits = bits;
    }

    void mark(IpAddress address) {
      long offset = range.offsetOf(address);
      if (offset != ServiceIpRange.NOT_ASSIGNABLE) {
        bits.allocate(offset);
      }
    }

    long freeInDynamicBand() {
      long dynamicSize = range.size() - range.staticBandSize();
      return dynamicSize - (bits.used() - bits.usedInStaticBand());
    }

    void forEachAllocated(Consumer<IpAddress> action) {
      bits.forEachAllocated(offset -> action.accept(range.addressAt(offset)));
    }
  }
}
