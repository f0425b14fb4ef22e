package io.subrange.allocator.store;

import io.subrange.allocator.ip.ServiceIpPool;
import io.subrange.allocator.net.Cidr;
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

/**
 * An {@link AllocationStore} held in this process: one {@link ServiceIpPool} per family, plus
 * who holds each address. Every operation runs under the store's lock, which is what makes a
 * multi-claim request atomic; allocation takes well under a microsecond, so the lock is never
 * held long.
 */
public final class InMemoryAllocationStore implements AllocationStore {

  private final RandomGenerator random;
  private final Map<IpFamily, ServiceIpPool> pools = new EnumMap<>(IpFamily.class);
  private final Map<IpAddress, Holder> holders = new HashMap<>();
  private final Map<String, Map<IpFamily, IpAddress>> addressesByHolder = new HashMap<>();

  /** @param random the source of dynamic start offsets and range choice */
  public InMemoryAllocationStore(RandomGenerator random) {
    this.random = random;
  }

  /** A store serving the given named ranges. */
  public static InMemoryAllocationStore withRanges(Map<String, Cidr> ranges, RandomGenerator random) {
    InMemoryAllocationStore store = new InMemoryAllocationStore(random);
    ranges.forEach(store::addServiceRange);
    return store;
  }

  @Override
  public synchronized void addServiceRange(String name, Cidr cidr) {
    pools.computeIfAbsent(cidr.family(), family -> new ServiceIpPool(family, random)).add(name, cidr);
  }

  @Override
  public synchronized void markServiceRangeTerminating(String name) {
    poolOf(name).markTerminating(name);
  }

  @Override
  public synchronized long serviceRangeInUseOnlyBy(String name) {
    return poolOf(name).inUseOnlyBy(name);
  }

  @Override
  public synchronized void removeServiceRange(String name) {
    poolOf(name).remove(name);
  }

  private ServiceIpPool poolOf(String name) {
    return pools.values().stream().filter(p -> p.ranges().containsKey(name)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no Service range named " + name));
  }

  @Override
  public synchronized CompletableFuture<List<IpAssignment>> reserve(Holder holder, List<IpClaim> claims,
      boolean dryRun) {
    List<IpAddress> taken = new ArrayList<>();
    try {
      List<IpAssignment> assignments = new ArrayList<>(claims.size());
      for (IpClaim claim : claims) {
        assignments.add(reserveOne(holder, claim, dryRun, taken));
      }
      return CompletableFuture.completedFuture(List.copyOf(assignments));
    } catch (AllocationException e) {
      for (IpAddress address : taken) {
        free(address);
      }
      return CompletableFuture.failedFuture(e);
    }
  }

  private IpAssignment reserveOne(Holder holder, IpClaim claim, boolean dryRun, List<IpAddress> taken) {
    ServiceIpPool pool = pools.get(claim.family());
    if (claim.requested() != null) {
      return reserveSpecific(pool, holder, claim.requested(), dryRun, taken);
    }
    if (pool == null || !pool.hasLiveRange()) {
      throw new NoRangeForFamilyException(claim.family());
    }
    IpAddress held = holder.isNamed() ? addressesByHolder.getOrDefault(key(holder), Map.of()).get(claim.family()) : null;
    if (held != null) {
      Cidr home = pool.homeOf(held);
      if (home != null) {
        return new IpAssignment(held, home, Scope.DYNAMIC);
      }
    }
    ServiceIpPool.Allocated allocated = dryRun ? pool.peekNext() : pool.allocateNext();
    if (allocated == null) {
      throw new RangeFullException(claim.family() + " address", pool.describeLive());
    }
    if (!dryRun) {
      hold(allocated.address(), holder);
      taken.add(allocated.address());
    }
    return new IpAssignment(allocated.address(), allocated.range(), Scope.DYNAMIC);
  }

  private IpAssignment reserveSpecific(ServiceIpPool pool, Holder holder, IpAddress address, boolean dryRun,
      List<IpAddress> taken) {
    if (pool == null) {
      throw new NotInRangeException(address.toString(), address + " is not in any Service range ("
          + describeAll() + ")");
    }
    String why = pool.whyNotAssignable(address);
    if (why != null) {
      throw new NotInRangeException(address.toString(), why);
    }
    Cidr home = pool.homeOf(address);
    if (pool.isAllocated(address)) {
      Holder current = holders.get(address);
      if (current != null && current.isSameObject(holder)) {
        return new IpAssignment(address, home, Scope.STATIC);
      }
      throw new AlreadyAllocatedException(address.toString(), home.toString(), current);
    }
    if (!dryRun) {
      pool.allocate(address);
      hold(address, holder);
      taken.add(address);
    }
    return new IpAssignment(address, home, Scope.STATIC);
  }

  @Override
  public synchronized Optional<Holder> holderOf(IpAddress address) {
    return Optional.ofNullable(holders.get(address));
  }

  @Override
  public synchronized List<RangeUsage> usage() {
    return pools.values().stream().flatMap(p -> p.usage().stream()).toList();
  }

  private void hold(IpAddress address, Holder holder) {
    holders.put(address, holder);
    if (holder.isNamed()) {
      addressesByHolder.computeIfAbsent(key(holder), k -> new EnumMap<>(IpFamily.class)).put(address.family(), address);
    }
  }

  private void free(IpAddress address) {
    pools.get(address.family()).release(address);
    Holder holder = holders.remove(address);
    if (holder != null && holder.isNamed()) {
      Map<IpFamily, IpAddress> held = addressesByHolder.get(key(holder));
      if (held != null && address.equals(held.get(address.family()))) {
        held.remove(address.family());
        if (held.isEmpty()) {
          addressesByHolder.remove(key(holder));
        }
      }
    }
  }

  private String describeAll() {
    return pools.values().stream().map(ServiceIpPool::describeLive).filter(s -> !s.isEmpty())
        .reduce((a, b) -> a + ", " + b).orElse("none");
  }

  private static String key(Holder holder) {
    return holder.kind() + "/" + holder.namespace() + "/" + holder.name();
  }
}
