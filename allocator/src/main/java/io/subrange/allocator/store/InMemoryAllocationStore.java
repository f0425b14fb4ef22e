package io.subrange.allocator.store;

import io.subrange.allocator.band.AllocationBitmap;
import io.subrange.allocator.band.BandedAllocator;
import io.subrange.allocator.ip.ServiceIpRange;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.random.RandomGenerator;
import java.util.stream.Collectors;

/**
 * An {@link AllocationStore} held in this process: one bitmap per range, plus who holds each
 * address. Every operation runs under one lock, which is what makes a multi-claim request
 * atomic; allocation takes well under a microsecond, so the lock is never held long.
 */
public final class InMemoryAllocationStore implements AllocationStore {

  private final Map<IpFamily, RangeState> ranges = new EnumMap<>(IpFamily.class);

  /**
   * @param serviceRanges at most one range per family
   * @param random the source of dynamic start offsets
   */
  public InMemoryAllocationStore(List<ServiceIpRange> serviceRanges, RandomGenerator random) {
    for (ServiceIpRange range : serviceRanges) {
      RangeState previous = ranges.put(range.family(), new RangeState(range, random));
      if (previous != null) {
        throw new IllegalArgumentException("two " + range.family() + " Service ranges: "
            + previous.range + " and " + range);
      }
    }
  }

  @Override
  public synchronized CompletableFuture<List<IpAssignment>> reserve(Holder holder, List<IpClaim> claims,
      boolean dryRun) {
    List<Runnable> undo = new ArrayList<>();
    try {
      List<IpAssignment> assignments = new ArrayList<>(claims.size());
      for (IpClaim claim : claims) {
        assignments.add(reserveOne(holder, claim, dryRun, undo));
      }
      return CompletableFuture.completedFuture(List.copyOf(assignments));
    } catch (AllocationException e) {
      for (int i = undo.size() - 1; i >= 0; i--) {
        undo.get(i).run();
      }
      return CompletableFuture.failedFuture(e);
    }
  }

  private IpAssignment reserveOne(Holder holder, IpClaim claim, boolean dryRun, List<Runnable> undo) {
    RangeState state = ranges.get(claim.family());
    if (claim.requested() != null) {
      return reserveSpecific(state, holder, claim.requested(), dryRun, undo);
    }
    if (state == null) {
      throw new NoRangeForFamilyException(claim.family());
    }
    Long held = holder.isNamed() ? state.offsetsByHolder.get(key(holder)) : null;
    if (held != null) {
      return new IpAssignment(state.range.addressAt(held), state.range.cidr(), Scope.DYNAMIC);
    }
    long offset = dryRun ? state.bits.peekNext() : state.bits.allocateNext();
    if (offset < 0) {
      throw new RangeFullException(state.range.cidr().toString(), state.range.size());
    }
    if (!dryRun) {
      state.hold(offset, holder);
      undo.add(() -> state.free(offset));
    }
    return new IpAssignment(state.range.addressAt(offset), state.range.cidr(), Scope.DYNAMIC);
  }

  private IpAssignment reserveSpecific(RangeState state, Holder holder, IpAddress address, boolean dryRun,
      List<Runnable> undo) {
    if (state == null) {
      throw new NotInRangeException(address.toString(), address + " is not in any Service range ("
          + describeRanges() + ")");
    }
    long offset = state.range.offsetOf(address);
    if (offset < 0) {
      throw new NotInRangeException(address.toString(), state.range.whyNotAssignable(address)
          + " (Service ranges: " + describeRanges() + ")");
    }
    if (state.bits.isAllocated(offset)) {
      Holder current = state.holders.get(offset);
      if (current != null && current.isSameObject(holder)) {
        return new IpAssignment(address, state.range.cidr(), Scope.STATIC);
      }
      throw new AlreadyAllocatedException(address.toString(), state.range.cidr().toString(), current);
    }
    if (!dryRun) {
      state.bits.allocate(offset);
      state.hold(offset, holder);
      undo.add(() -> state.free(offset));
    }
    return new IpAssignment(address, state.range.cidr(), Scope.STATIC);
  }

  @Override
  public synchronized Optional<Holder> holderOf(IpAddress address) {
    RangeState state = ranges.get(address.family());
    if (state == null) {
      return Optional.empty();
    }
    long offset = state.range.offsetOf(address);
    return offset < 0 ? Optional.empty() : Optional.ofNullable(state.holders.get(offset));
  }

  @Override
  public synchronized List<RangeUsage> usage() {
    return ranges.values().stream()
        .map(s -> new RangeUsage(s.range.cidr(), s.range.size(), s.range.staticBandSize(),
            s.bits.used(), s.bits.usedInStaticBand()))
        .toList();
  }

  private String describeRanges() {
    return ranges.values().stream().map(s -> s.range.cidr().toString()).collect(Collectors.joining(", "));
  }

  private static String key(Holder holder) {
    return holder.kind() + "/" + holder.namespace() + "/" + holder.name();
  }

  /** One range: its bits, who holds each taken offset, and each named holder's offset. */
  private static final class RangeState {
    final ServiceIpRange range;
    final BandedAllocator bits;
    final Map<Long, Holder> holders = new HashMap<>();
    final Map<String, Long> offsetsByHolder = new HashMap<>();

    RangeState(ServiceIpRange range, RandomGenerator random) {
      this.range = range;
      this.bits = new AllocationBitmap(range.size(), range.staticBandSize(), random);
    }

    void hold(long offset, Holder holder) {
      holders.put(offset, holder);
      if (holder.isNamed()) {
        offsetsByHolder.put(key(holder), offset);
      }
    }

    void free(long offset) {
      bits.release(offset);
      Holder holder = holders.remove(offset);
      if (holder != null && holder.isNamed()) {
        offsetsByHolder.remove(key(holder), offset);
      }
    }
  }
}
