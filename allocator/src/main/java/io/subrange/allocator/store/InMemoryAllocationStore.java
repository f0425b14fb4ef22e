package io.subrange.allocator.store;

import io.subrange.allocator.ip.ServiceIpPool;
import io.subrange.allocator.ip.ServiceIpRange;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.podcidr.ClusterCidr;
import io.subrange.allocator.podcidr.ClusterCidrAllocator;
import io.subrange.allocator.podcidr.ClusterCidrUsage;
import io.subrange.allocator.podcidr.Node;
import io.subrange.allocator.podcidr.PodCidrAllocation;
import io.subrange.allocator.podcidr.PodCidrAllocationException;
import io.subrange.allocator.port.PortAllocator;
import io.subrange.allocator.port.PortRange;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.random.RandomGenerator;

/**
 * An {@link AllocationStore} held in this process: one {@link ServiceIpPool} per family, one
 * {@link PortAllocator}, one {@link ClusterCidrAllocator}, plus who holds each address and
 * port. Every operation runs under the store's lock, which is what makes a request atomic
 * across pools; an allocation takes well under a microsecond, so the lock is never held long.
 */
public final class InMemoryAllocationStore implements AllocationStore {

  /** The name {@link #describeRanges} gives the NodePort range. */
  public static final String NODE_PORTS_NAME = "nodeports";

  private final RandomGenerator random;
  private final Map<IpFamily, ServiceIpPool> pools = new EnumMap<>(IpFamily.class);
  private final PortAllocator nodePorts;
  private final ClusterCidrAllocator podCidrs = new ClusterCidrAllocator();
  private final Map<IpAddress, Holder> addressHolders = new HashMap<>();
  private final Map<String, Map<IpFamily, IpAddress>> addressesByHolder = new HashMap<>();
  private final Map<Integer, Holder> portHolders = new HashMap<>();

  /**
   * @param nodePortRange the NodePort range (kube-apiserver's --service-node-port-range)
   * @param random the source of dynamic start offsets and range choice
   */
  public InMemoryAllocationStore(PortRange nodePortRange, RandomGenerator random) {
    this.random = random;
    this.nodePorts = new PortAllocator(nodePortRange, random);
  }

  /** A store serving the given named Service ranges and the default NodePort range. */
  public static InMemoryAllocationStore withRanges(Map<String, Cidr> ranges, RandomGenerator random) {
    InMemoryAllocationStore store = new InMemoryAllocationStore(PortRange.parse("30000-32767"), random);
    ranges.forEach(store::addServiceRange);
    return store;
  }

  // ---- Service ranges and ClusterCIDRs -----------------------------------------------------

  @Override
  public synchronized void addServiceRange(String name, Cidr cidr) {
    pools.computeIfAbsent(cidr.family(), family -> new ServiceIpPool(family, random)).add(name, cidr);
  }

  @Override
  public synchronized void markServiceRangeTerminating(String name) {
    poolsOf(name).forEach(p -> p.markTerminating(name));
  }

  @Override
  public synchronized long serviceRangeInUseOnlyBy(String name) {
    return poolsOf(name).stream().mapToLong(p -> p.inUseOnlyBy(name)).sum();
  }

  @Override
  public synchronized void removeServiceRange(String name) {
    long stranded = serviceRangeInUseOnlyBy(name);
    if (stranded > 0) {
      throw new IllegalStateException("Service range " + name + " still holds " + stranded
          + " addresses no other range covers");
    }
    poolsOf(name).forEach(p -> p.remove(name));
  }

  @Override
  public synchronized Map<String, List<Cidr>> serviceRanges() {
    Map<String, List<Cidr>> ranges = new TreeMap<>();
    pools.values().forEach(p -> p.ranges().forEach((name, cidr) ->
        ranges.computeIfAbsent(name, n -> new ArrayList<>()).add(cidr)));
    return ranges;
  }

  /** A dual-stack ServiceCIDR is one name in both family pools. */
  private List<ServiceIpPool> poolsOf(String name) {
    List<ServiceIpPool> found = pools.values().stream().filter(p -> p.ranges().containsKey(name)).toList();
    if (found.isEmpty()) {
      throw new IllegalArgumentException("no Service range named " + name);
    }
    return found;
  }

  @Override
  public synchronized void addClusterCidr(ClusterCidr clusterCidr) {
    podCidrs.add(clusterCidr);
  }

  @Override
  public synchronized void markClusterCidrTerminating(String name) {
    podCidrs.markTerminating(name);
  }

  @Override
  public synchronized List<String> clusterCidrNames() {
    return podCidrs.usage().stream().map(ClusterCidrUsage::name).toList();
  }

  @Override
  public synchronized boolean clusterCidrInUse(String name) {
    return podCidrs.isInUse(name);
  }

  @Override
  public synchronized void removeClusterCidr(String name) {
    podCidrs.remove(name);
  }

  // ---- Services ---------------------------------------------------------------------------

  @Override
  public synchronized CompletableFuture<Reservation> reserve(ReservationRequest request) {
    List<IpAddress> takenIps = new ArrayList<>();
    List<Integer> takenPorts = new ArrayList<>();
    try {
      List<IpAssignment> ips = new ArrayList<>();
      for (IpClaim claim : request.ips()) {
        try {
          ips.add(reserveIp(request.holder(), claim, request.dryRun(), takenIps));
        } catch (AllocationException e) {
          if (!claim.kept()) {
            throw e.forClaim(claim);
          }
          ips.add(new IpAssignment(claim.requested(), null, Scope.STATIC, true, e.getMessage()));
        }
      }
      List<PortAssignment> ports = new ArrayList<>();
      for (PortClaim claim : request.ports()) {
        try {
          ports.add(reservePort(request.holder(), claim, request.dryRun(), takenPorts));
        } catch (AllocationException e) {
          if (!claim.kept()) {
            throw e.forClaim(claim);
          }
          ports.add(new PortAssignment(claim.requested(), nodePorts.range().toString(), Scope.STATIC, true,
              e.getMessage()));
        }
      }
      return CompletableFuture.completedFuture(new Reservation(ips, ports));
    } catch (AllocationException e) {
      takenIps.forEach(this::freeIp);
      takenPorts.forEach(this::freePort);
      return CompletableFuture.failedFuture(e);
    }
  }

  private IpAssignment reserveIp(Holder holder, IpClaim claim, boolean dryRun, List<IpAddress> taken) {
    ServiceIpPool pool = pools.get(claim.family());
    if (claim.requested() != null) {
      return reserveSpecificIp(pool, holder, claim.requested(), dryRun, taken);
    }
    if (pool == null || !pool.hasLiveRange()) {
      throw new NoRangeForFamilyException(claim.family());
    }
    IpAddress held = holder.isNamed() ? addressesByHolder.getOrDefault(key(holder), Map.of()).get(claim.family()) : null;
    if (held != null) {
      Cidr home = pool.homeOf(held);
      if (home != null) {
        return new IpAssignment(held, home, Scope.DYNAMIC, true);
      }
    }
    ServiceIpPool.Allocated allocated = dryRun ? pool.peekNext() : pool.allocateNext();
    if (allocated == null) {
      throw new RangeFullException(claim.family() + " address", pool.describeLive());
    }
    if (!dryRun) {
      holdIp(allocated.address(), holder);
      taken.add(allocated.address());
    }
    return new IpAssignment(allocated.address(), allocated.range(), Scope.DYNAMIC, false);
  }

  private IpAssignment reserveSpecificIp(ServiceIpPool pool, Holder holder, IpAddress address, boolean dryRun,
      List<IpAddress> taken) {
    if (pool == null) {
      throw new NotInRangeException(address.toString(), address + " is not in any Service range ("
          + describeAllRanges() + ")");
    }
    String why = pool.whyNotAssignable(address);
    if (why != null) {
      throw new NotInRangeException(address.toString(), why);
    }
    Cidr home = pool.homeOf(address);
    if (pool.isAllocated(address)) {
      Holder current = addressHolders.get(address);
      if (current != null && current.isSameObject(holder)) {
        return new IpAssignment(address, home, Scope.STATIC, true);
      }
      throw new AlreadyAllocatedException(address.toString(), home.toString(), current);
    }
    if (!dryRun) {
      pool.allocate(address);
      holdIp(address, holder);
      taken.add(address);
    }
    return new IpAssignment(address, home, Scope.STATIC, false);
  }

  private PortAssignment reservePort(Holder holder, PortClaim claim, boolean dryRun, List<Integer> taken) {
    String range = nodePorts.range().toString();
    if (claim.requested() == 0) {
      int port = dryRun ? nodePorts.peekNext() : nodePorts.allocateNext();
      if (port < 0) {
        throw new RangeFullException("NodePort", range);
      }
      if (!dryRun) {
        portHolders.put(port, holder);
        taken.add(port);
      }
      return new PortAssignment(port, range, Scope.DYNAMIC, false);
    }
    int port = claim.requested();
    if (!nodePorts.range().contains(port)) {
      throw new NotInRangeException(String.valueOf(port), "port " + port + " is not in the NodePort range " + range);
    }
    if (nodePorts.isAllocated(port)) {
      Holder current = portHolders.get(port);
      if (current != null && current.isSameObject(holder)) {
        return new PortAssignment(port, range, Scope.STATIC, true);
      }
      throw new AlreadyAllocatedException("port " + port, range, current);
    }
    if (!dryRun) {
      nodePorts.allocate(port);
      portHolders.put(port, holder);
      taken.add(port);
    }
    return new PortAssignment(port, range, Scope.STATIC, false);
  }

  // ---- Nodes ------------------------------------------------------------------------------

  @Override
  public synchronized CompletableFuture<PodCidrAllocation> reservePodCidrs(Node node, List<Cidr> preset,
      boolean dryRun) {
    try {
      if (preset.isEmpty()) {
        return CompletableFuture.completedFuture(dryRun ? podCidrs.preview(node) : podCidrs.allocate(node));
      }
      if (dryRun) {
        return CompletableFuture.completedFuture(previewOccupy(node, preset));
      }
      return CompletableFuture.completedFuture(podCidrs.occupy(node, preset));
    } catch (PodCidrAllocationException e) {
      return CompletableFuture.failedFuture(new PodCidrUnavailableException(e));
    }
  }

  /** What occupying would answer, undone at once: dry runs keep nothing. */
  private PodCidrAllocation previewOccupy(Node node, List<Cidr> preset) {
    boolean heldBefore = podCidrs.allocationOf(node.name()).isPresent();
    PodCidrAllocation allocation = podCidrs.occupy(node, preset);
    if (!heldBefore) {
      podCidrs.release(node.name());
    }
    return allocation;
  }

  // ---- lookups and usage ------------------------------------------------------------------

  @Override
  public synchronized Optional<Holder> holderOf(IpAddress address) {
    return Optional.ofNullable(addressHolders.get(address));
  }

  @Override
  public synchronized Optional<Holder> holderOfNodePort(int port) {
    return Optional.ofNullable(portHolders.get(port));
  }

  @Override
  public synchronized Set<IpFamily> servedFamilies() {
    Set<IpFamily> families = EnumSet.noneOf(IpFamily.class);
    pools.forEach((family, pool) -> {
      if (pool.hasLiveRange()) {
        families.add(family);
      }
    });
    return families;
  }

  @Override
  public synchronized List<RangeUsage> usage() {
    return pools.values().stream().flatMap(p -> p.usage().stream()).toList();
  }

  @Override
  public synchronized RangeUsage nodePortUsage() {
    return nodePorts.usage();
  }

  @Override
  public synchronized List<ClusterCidrUsage> podCidrUsage() {
    return podCidrs.usage();
  }

  @Override
  public synchronized List<RangeView> describeRanges() {
    List<RangeView> views = new ArrayList<>();
    for (ServiceIpPool pool : pools.values()) {
      for (Map.Entry<String, Cidr> range : pool.ranges().entrySet()) {
        ServiceIpRange ipRange = pool.range(range.getKey());
        List<RangeView.HeldValue> holders = pool.takenInStaticBand(range.getKey()).stream()
            .map(a -> new RangeView.HeldValue(a.toString(), describeHolder(addressHolders.get(a)))).toList();
        RangeUsage usage = pool.usage().stream().filter(u -> u.range().equals(range.getValue().toString()))
            .findFirst().orElseThrow();
        views.add(new RangeView(RangeView.Kind.SERVICE_IPS, range.getKey(), range.getValue().toString(),
            pool.family().kubernetesName(), ipRange.describeStaticBand(), ipRange.describeDynamicBand(), usage,
            pool.isTerminating(range.getKey()), holders));
      }
    }
    PortRange ports = nodePorts.range();
    List<RangeView.HeldValue> portHolders = nodePorts.takenInStaticBand().stream()
        .map(p -> new RangeView.HeldValue(String.valueOf(p), describeHolder(this.portHolders.get(p)))).toList();
    views.add(new RangeView(RangeView.Kind.NODE_PORTS, NODE_PORTS_NAME, ports.toString(), "",
        ports.describeStaticBand(), ports.describeDynamicBand(), nodePorts.usage(), false, portHolders));
    return views;
  }

  private static String describeHolder(Holder holder) {
    return holder == null ? "unknown" : holder.kind() + " " + holder;
  }

  private void holdIp(IpAddress address, Holder holder) {
    addressHolders.put(address, holder);
    if (holder.isNamed()) {
      addressesByHolder.computeIfAbsent(key(holder), k -> new EnumMap<>(IpFamily.class)).put(address.family(), address);
    }
  }

  private void freeIp(IpAddress address) {
    pools.get(address.family()).release(address);
    Holder holder = addressHolders.remove(address);
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

  private void freePort(int port) {
    nodePorts.release(port);
    portHolders.remove(port);
  }

  private String describeAllRanges() {
    return pools.values().stream().map(ServiceIpPool::describeLive).filter(s -> !s.isEmpty())
        .reduce((a, b) -> a + ", " + b).orElse("none");
  }

  private static String key(Holder holder) {
    return holder.kind() + "/" + holder.namespace() + "/" + holder.name();
  }
}
