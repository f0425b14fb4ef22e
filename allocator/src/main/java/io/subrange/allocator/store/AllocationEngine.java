package io.subrange.allocator.store;

import io.subrange.allocator.band.RangeUsage;
import io.subrange.allocator.band.StartStrategy;
import io.subrange.allocator.band.ThreadLocalRandomGenerator;
import io.subrange.allocator.band.UniformStart;
import io.subrange.allocator.ip.ServiceIpPool;
import io.subrange.allocator.ip.ServiceIpRange;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.podcidr.ClusterCidr;
import io.subrange.allocator.podcidr.ClusterCidrAllocator;
import io.subrange.allocator.podcidr.ClusterCidrUsage;
import io.subrange.allocator.podcidr.NodeView;
import io.subrange.allocator.podcidr.PodCidrAllocation;
import io.subrange.allocator.podcidr.PodCidrAllocationException;
import io.subrange.allocator.port.PortAllocator;
import io.subrange.allocator.port.PortRange;
import java.time.Clock;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BiPredicate;
import java.util.function.Function;
import java.util.random.RandomGenerator;

/**
 * The allocation engine: one {@link ServiceIpPool} per family, one {@link PortAllocator}, one
 * {@link ClusterCidrAllocator}, plus who holds each value and since when. It decides every
 * allocation, synchronously: a request is granted or refused (an {@link AllocationException},
 * thrown) before the call returns. Every operation runs under the engine's one lock (its monitor),
 * which is what makes a request atomic across pools; an allocation takes well under a microsecond,
 * so the lock is never held long. Callers that need several operations to be one step (apply, then
 * export what changed) hold that same lock around them.
 *
 * <p>It knows nothing of durability. {@link InMemoryAllocationStore} serves it as an
 * {@link AllocationStore} within one process; the persisting store applies requests to it, writes
 * what changed ({@link #drainChanged}, {@link #export}, {@link #exportWindow}) and loads what
 * another replica stored ({@link #restore}, {@link #restoreWindow}). Until a range's state is
 * loaded it serves nothing from it ({@link #requireLoadedState}).
 *
 * <p>This class is the public face and the lock; the parts it is made of are package-private
 * and run only under that lock: a {@link HolderLedger} per IP family and one for NodePorts (who
 * holds what, one path for both kinds), {@link ChangedRanges} (what to write next),
 * {@link UnknownRanges} (which ranges may not serve until loaded) and {@link StoredStates}
 * (export and restore of stored states, whole or a window at a time).
 */
public final class AllocationEngine {

  /** The name {@link #describeRanges} gives the NodePort range. */
  public static final String NODE_PORTS_NAME = "nodeports";
  /** See {@link HolderLedger#needsRearm}. */
  static final long REARM_AFTER_SECONDS = 2;
  /**
   * How long a create that never lands may keep its values by being retried (see
   * {@link HolderLedger#needsRearm}): after this, retries stop re-arming the hold, and the
   * reconciler frees the values one grace period after the last re-arm. Bounds what one Service
   * name retried forever (a create a quota or a later webhook keeps refusing) can hold out of the
   * ranges.
   */
  public static final long MAX_REARMED_HOLD_SECONDS = 600;

  /** Where dynamic allocation starts in a band, in every range of this engine. */
  private final StartStrategy starts;
  /** Picks among Service ranges with room; uniform. */
  private final RandomGenerator choices;
  private final Clock clock;
  private final Map<IpFamily, ServiceIpPool> pools = new EnumMap<>(IpFamily.class);
  private final PortAllocator nodePorts;
  private final ClusterCidrAllocator podCidrs = new ClusterCidrAllocator();
  /**
   * Who holds each address, and each object's address, by family: a reload of one family's
   * stored state (after every write another replica makes) clears its ledger at once.
   */
  private final Map<IpFamily, HolderLedger<IpAddress>> addressHolders = new EnumMap<>(IpFamily.class);
  /** Who holds each NodePort, and each object's NodePorts. */
  private final HolderLedger<Integer> portHolders;
  private final Map<String, Long> nodesSince = new HashMap<>();
  private final ChangedRanges changed = new ChangedRanges();
  /** Ranges whose state must be loaded before they serve (see {@link #requireLoadedState}). */
  private final UnknownRanges unknown;
  private final StoredStates stored;

  /**
   * An engine whose starts and range choices are both uniform, drawn from one generator: tests
   * pass a seeded one, so a run repeats.
   *
   * @param nodePortRange the NodePort range (kube-apiserver's --service-node-port-range)
   * @param random the source of dynamic start offsets and range choice
   */
  public AllocationEngine(PortRange nodePortRange, RandomGenerator random) {
    this(nodePortRange, random, Clock.systemUTC());
  }

  public AllocationEngine(PortRange nodePortRange, RandomGenerator random, Clock clock) {
    this(nodePortRange, new UniformStart(random), random, clock);
  }

  /**
   * An engine for production: dynamic allocation starts where {@code starts} says, range choices
   * are uniform from the calling thread's random.
   *
   * @param nodePortRange the NodePort range (kube-apiserver's --service-node-port-range)
   * @param starts {@link UniformStart#THREAD_LOCAL} alone, an
   *     {@link io.subrange.allocator.band.AnchoredStart} when replicas share stored state
   */
  public AllocationEngine(PortRange nodePortRange, StartStrategy starts) {
    this(nodePortRange, starts, ThreadLocalRandomGenerator.INSTANCE, Clock.systemUTC());
  }

  /**
   * @param starts where dynamic allocation starts in a band
   * @param choices picks among Service ranges with room; must be uniform
   */
  public AllocationEngine(PortRange nodePortRange, StartStrategy starts, RandomGenerator choices,
      Clock clock) {
    this.starts = starts;
    this.choices = choices;
    this.clock = clock;
    this.nodePorts = new PortAllocator(nodePortRange, starts);
    for (IpFamily family : IpFamily.values()) {
      addressHolders.put(family, HolderLedger.onePerObject(new AddressSpace(family), clock));
    }
    this.portHolders = HolderLedger.sortedPerObject(new NodePortSpace(), clock);
    this.unknown = new UnknownRanges(pools, nodePortRange);
    this.stored = new StoredStates(pools, nodePorts, podCidrs, nodesSince, addressHolders, portHolders, unknown,
        this::rangeKeys);
  }

  /** An engine serving the given named Service ranges and the default NodePort range. */
  public static AllocationEngine withRanges(Map<String, Cidr> ranges, RandomGenerator random) {
    AllocationEngine engine = new AllocationEngine(PortRange.parse("30000-32767"), random);
    ranges.forEach(engine::addServiceRange);
    return engine;
  }

  // ---- Service ranges and ClusterCIDRs -----------------------------------------------------

  /** Adds (or revives) a named Service range; see {@link AllocationStore#addServiceRange}. */
  public synchronized void addServiceRange(String name, Cidr cidr) {
    ServiceIpPool pool = pools.computeIfAbsent(cidr.family(), family -> new ServiceIpPool(family, starts, choices));
    boolean added = !pool.ranges().containsKey(name);
    pool.add(name, cidr);
    if (added) {
      unknown.added(RangeKey.serviceIps(name, cidr.family()));
    }
    // A Service range that overlaps a pod range (10.0.0.0/8 for pods, 10.96.0.0/12 for
    // Services) must never be handed to a node, as upstream's node IPAM occupies it.
    podCidrs.reserve(cidr);
  }

  /** Stops a Service range from handing out addresses; it keeps what it holds. */
  public synchronized void markServiceRangeTerminating(String name) {
    poolsOf(name).forEach(p -> p.markTerminating(name));
  }

  /** How many held addresses no other live range covers; the range may go when this is 0. */
  public synchronized long serviceRangeInUseOnlyBy(String name) {
    return poolsOf(name).stream().mapToLong(p -> p.inUseOnlyBy(name)).sum();
  }

  /**
   * Removes a Service range.
   *
   * @throws IllegalStateException while it holds addresses no other range covers
   */
  public synchronized void removeServiceRange(String name) {
    long stranded = serviceRangeInUseOnlyBy(name);
    if (stranded > 0) {
      throw new IllegalStateException("Service range " + name + " still holds " + stranded
          + " addresses no other range covers");
    }
    poolsOf(name).forEach(p -> {
      Cidr cidr = p.ranges().get(name);
      p.remove(name);
      unknown.removed(RangeKey.serviceIps(name, p.family()));
      if (!p.ranges().containsValue(cidr)) {
        podCidrs.unreserve(cidr);  // blocks nodes hold there, and other reserved ranges, stay occupied
      }
    });
  }

  /** The Service ranges by name (a dual-stack ServiceCIDR has two CIDRs under one name). */
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

  /** Adds a ClusterCIDR; see {@link AllocationStore#addClusterCidr}. */
  public synchronized void addClusterCidr(ClusterCidr clusterCidr) {
    boolean added = podCidrs.clusterCidr(clusterCidr.name()).isEmpty();
    podCidrs.add(clusterCidr);
    if (added) {
      unknown.added(RangeKey.podCidrs(clusterCidr.name()));
    }
  }

  /** The names of the ClusterCIDRs. */
  public synchronized List<String> clusterCidrNames() {
    return podCidrs.usage().stream().map(ClusterCidrUsage::name).toList();
  }

  /** Stops a ClusterCIDR from giving blocks; nodes keep theirs. */
  public synchronized void markClusterCidrTerminating(String name) {
    podCidrs.markTerminating(name);
  }

  /** True while a node holds blocks from the ClusterCIDR. */
  public synchronized boolean clusterCidrInUse(String name) {
    return podCidrs.isInUse(name);
  }

  /** Removes a ClusterCIDR; see {@link AllocationStore#removeClusterCidr}. */
  public synchronized void removeClusterCidr(String name) {
    podCidrs.remove(name);
    unknown.removed(RangeKey.podCidrs(name));
  }

  // ---- Services ---------------------------------------------------------------------------

  /**
   * Reserves ClusterIPs and NodePorts for one Service, all or nothing, as
   * {@link AllocationStore#reserve} describes.
   *
   * @throws AllocationException when a claim that is not kept is refused; nothing was taken
   */
  public synchronized Reservation reserve(ReservationRequest request) {
    List<IpAddress> takenIps = new ArrayList<>();
    List<Integer> takenPorts = new ArrayList<>();
    try {
      List<IpAssignment> ips = new ArrayList<>();
      for (IpClaim claim : request.ips()) {
        try {
          ips.add(reserveIp(request, claim, takenIps));
        } catch (AllocationException e) {
          if (!claim.kept()) {
            throw e.forClaim(claim);
          }
          ips.add(new IpAssignment(claim.requested(), null, Scope.STATIC, true, e.getMessage()));
        }
      }
      List<PortAssignment> ports = new ArrayList<>();
      // A dynamic claim may reuse a port the object holds (an admission retried after its first
      // attempt was partly stored), but never one another claim of the request names.
      Set<Integer> named = new HashSet<>();
      request.ports().forEach(c -> named.add(c.requested()));
      for (PortClaim claim : request.ports()) {
        try {
          PortAssignment assignment = reservePort(request, claim, takenPorts, named);
          named.add(assignment.port());
          ports.add(assignment);
        } catch (AllocationException e) {
          if (!claim.kept()) {
            throw e.forClaim(claim);
          }
          ports.add(new PortAssignment(claim.requested(), nodePorts.range().toString(), Scope.STATIC, true,
              e.getMessage()));
        }
      }
      return new Reservation(ips, ports);
    } catch (AllocationException e) {
      takenIps.forEach(address -> addressHolders.get(address.family()).free(address));
      takenPorts.forEach(portHolders::free);
      throw e;
    }
  }

  private IpAssignment reserveIp(ReservationRequest request, IpClaim claim, List<IpAddress> taken) {
    Holder holder = request.holder();
    boolean dryRun = request.dryRun();
    unknown.requireKnown(claim.family());
    ServiceIpPool pool = pools.get(claim.family());
    if (claim.requested() != null) {
      return reserveSpecificIp(pool, request, claim, taken);
    }
    if (pool == null || !pool.hasLiveRange()) {
      throw new NoRangeForFamilyException(claim.family());
    }
    HolderLedger<IpAddress> holders = addressHolders.get(claim.family());
    IpAddress held = holders.heldBy(holder, Set.of());
    if (held != null) {
      Cidr home = pool.homeOf(held);
      if (home != null) {
        holders.rearm(held, holder, dryRun);
        return new IpAssignment(held, home, Scope.DYNAMIC, true);
      }
    }
    ServiceIpPool.Allocated allocated = dryRun ? pool.peekNext() : pool.allocateNext();
    if (allocated == null) {
      throw new RangeFullException(claim.family() + " address", pool.describeLive());
    }
    if (!dryRun) {
      holders.hold(allocated.address(), holder);
      taken.add(allocated.address());
    }
    return new IpAssignment(allocated.address(), allocated.range(), Scope.DYNAMIC, false);
  }

  private IpAssignment reserveSpecificIp(ServiceIpPool pool, ReservationRequest request, IpClaim claim,
      List<IpAddress> taken) {
    IpAddress address = claim.requested();
    Holder holder = request.holder();
    boolean dryRun = request.dryRun();
    if (pool == null) {
      throw new NotInRangeException(address.toString(), address + " is not in any Service range ("
          + describeAllRanges() + ")");
    }
    String why = pool.whyNotAssignable(address);
    if (why != null) {
      throw new NotInRangeException(address.toString(), why);
    }
    Cidr home = pool.homeOf(address);
    HolderLedger<IpAddress> holders = addressHolders.get(address.family());
    if (pool.isAllocated(address)) {
      Held current = holders.held(address);
      if (current != null && current.holder().isSameObject(holder)) {
        holders.rearm(address, holder, dryRun);
        return new IpAssignment(address, home, Scope.STATIC, true);
      }
      if (current != null && countsAsHeld(current, request, claim.kept())) {
        return new IpAssignment(address, home, Scope.STATIC, true);
      }
      throw new AlreadyAllocatedException(address.toString(), home.toString(), current == null ? null : current.holder());
    }
    if (!dryRun) {
      pool.allocate(address);
      holders.hold(address, holder);
      taken.add(address);
    }
    return new IpAssignment(address, home, Scope.STATIC, false);
  }

  private PortAssignment reservePort(ReservationRequest request, PortClaim claim, List<Integer> taken,
      Set<Integer> notReusable) {
    Holder holder = request.holder();
    boolean dryRun = request.dryRun();
    unknown.requireKnown(RangeKey.nodePorts());
    String range = nodePorts.range().toString();
    if (claim.requested() == 0) {
      Integer held = portHolders.heldBy(holder, notReusable);
      if (held != null) {
        portHolders.rearm(held, holder, dryRun);
        return new PortAssignment(held, range, Scope.DYNAMIC, true);
      }
      int port = dryRun ? nodePorts.peekNext() : nodePorts.allocateNext();
      if (port < 0) {
        throw new RangeFullException("NodePort", range);
      }
      if (!dryRun) {
        portHolders.hold(port, holder);
        taken.add(port);
      }
      return new PortAssignment(port, range, Scope.DYNAMIC, false);
    }
    int port = claim.requested();
    if (!nodePorts.range().contains(port)) {
      throw new NotInRangeException(String.valueOf(port), "port " + port + " is not in the NodePort range " + range);
    }
    if (nodePorts.isAllocated(port)) {
      Held current = portHolders.held(port);
      if (current != null && current.holder().isSameObject(holder)) {
        portHolders.rearm(port, holder, dryRun);
        return new PortAssignment(port, range, Scope.STATIC, true);
      }
      if (current != null && countsAsHeld(current, request, claim.kept())) {
        return new PortAssignment(port, range, Scope.STATIC, true);
      }
      throw new AlreadyAllocatedException("port " + port, range, current == null ? null : current.holder());
    }
    if (!dryRun) {
      nodePorts.allocate(port);
      portHolders.hold(port, holder);
      taken.add(port);
    }
    return new PortAssignment(port, range, Scope.STATIC, false);
  }

  /**
   * A value held by a replica's reservation ahead counts as held by the object claiming it when
   * the object already carries it (a kept claim: an update right after the create, before that
   * replica named the holder) or when the request says so (the validating check).
   */
  private static boolean countsAsHeld(Held current, ReservationRequest request, boolean kept) {
    return current.holder().isReservedAhead() && (kept || request.reservedAheadIsHeld());
  }

  /**
   * The answer to a request that would change nothing (everything it asks for is held by its
   * object already and needs no re-arming), as {@link #reserve} would give it; null when it
   * would change something or be refused. A persisting store answers such requests without a
   * write.
   */
  public synchronized Reservation answerIfAlreadyHeld(ReservationRequest request) {
    Reservation reservation;
    try {
      reservation = reserve(new ReservationRequest(request.holder(), request.ips(), request.ports(), true,
          request.reservedAheadIsHeld()));
    } catch (AllocationException e) {
      return null;
    }
    for (IpAssignment ip : reservation.ips()) {
      if (ip.unrecorded() == null && (!ip.alreadyHeld()
          || addressHolders.get(ip.address().family()).needsRearm(ip.address(), request.holder()))) {
        return null;
      }
    }
    for (PortAssignment port : reservation.ports()) {
      if (port.unrecorded() == null && (!port.alreadyHeld() || portHolders.needsRearm(port.port(), request.holder()))) {
        return null;
      }
    }
    return reservation;
  }

  // ---- Nodes ------------------------------------------------------------------------------

  /**
   * Gives a Node its pod CIDRs, as {@link AllocationStore#reservePodCidrs} describes.
   *
   * @throws PodCidrUnavailableException when no blocks can be given or {@code preset} is refused
   * @throws StoreUnavailableException while a ClusterCIDR's state is not loaded
   */
  public synchronized PodCidrAllocation reservePodCidrs(NodeView node, List<Cidr> preset, boolean dryRun) {
    return podCidrsFor(node, dryRun, heldBefore -> {
      if (preset.isEmpty()) {
        return dryRun ? podCidrs.preview(node) : podCidrs.allocate(node);
      }
      PodCidrAllocation allocation = podCidrs.occupy(node, preset);
      if (dryRun && !heldBefore) {
        podCidrs.release(node.name());  // dry runs keep nothing
      }
      return allocation;
    });
  }

  /**
   * Records the pod CIDRs a Node already carries, as {@link AllocationStore#recordPodCidrs}
   * describes.
   *
   * @throws PodCidrUnavailableException when the blocks fit no ClusterCIDR or another node holds them
   * @throws StoreUnavailableException while a ClusterCIDR's state is not loaded
   */
  public synchronized PodCidrAllocation recordPodCidrs(NodeView node, List<Cidr> carried) {
    return podCidrsFor(node, false, heldBefore -> podCidrs.occupyExisting(node, carried));
  }

  private PodCidrAllocation podCidrsFor(NodeView node, boolean dryRun, Function<Boolean, PodCidrAllocation> action) {
    unknown.requireKnownPodCidrs();
    try {
      boolean heldBefore = podCidrs.allocationOf(node.name()).isPresent();
      PodCidrAllocation allocation = action.apply(heldBefore);
      if (!dryRun && !heldBefore) {
        nodesSince.put(node.name(), now());
        changed.mark(RangeKey.podCidrs(allocation.clusterCidr()));
      }
      return allocation;
    } catch (PodCidrAllocationException e) {
      throw new PodCidrUnavailableException(e);
    }
  }

  // ---- releases (the reconciler) ----------------------------------------------------------

  /**
   * Frees a ClusterIP, as {@link AllocationStore#releaseIp} describes.
   *
   * @return whether it was freed
   * @throws StoreUnavailableException while a Service range of its family is not loaded
   */
  public synchronized boolean releaseIp(IpAddress address, Holder holder) {
    return releaseIp(address, holder, HolderLedger.ANY_TIME);
  }

  /** Frees a ClusterIP no object carries, as {@link AllocationStore#releaseLeakedIp} describes. */
  public synchronized boolean releaseLeakedIp(IpAddress address, Holder holder, long heldSince) {
    return releaseIp(address, holder, heldSince);
  }

  private boolean releaseIp(IpAddress address, Holder holder, long heldSince) {
    return loadedAddressHolders(address).release(address, holder, heldSince);
  }

  /** The holders of the address's family, for a release; refused while one of its ranges is not loaded. */
  private HolderLedger<IpAddress> loadedAddressHolders(IpAddress address) {
    if (unknown.isUnknown(address.family())) {
      throw unknown.notLoaded(unknown.firstUnknown(address.family()));
    }
    return addressHolders.get(address.family());
  }

  /** Frees a ClusterIP, as {@link AllocationStore#releaseIpHeldExactlyBy} describes. */
  public synchronized boolean releaseIpHeldExactlyBy(IpAddress address, Holder holder) {
    return loadedAddressHolders(address).releaseIfHeldExactlyBy(address, holder);
  }

  /**
   * Frees a NodePort, as {@link #releaseIp}.
   *
   * @throws StoreUnavailableException while the NodePort range is not loaded
   */
  public synchronized boolean releaseNodePort(int port, Holder holder) {
    return releaseNodePort(port, holder, HolderLedger.ANY_TIME);
  }

  /** Frees a NodePort no object carries, as {@link #releaseLeakedIp}. */
  public synchronized boolean releaseLeakedNodePort(int port, Holder holder, long heldSince) {
    return releaseNodePort(port, holder, heldSince);
  }

  /** Frees a NodePort, as {@link AllocationStore#releaseNodePortHeldExactlyBy} describes. */
  public synchronized boolean releaseNodePortHeldExactlyBy(int port, Holder holder) {
    return loadedPortHolders().releaseIfHeldExactlyBy(port, holder);
  }

  private boolean releaseNodePort(int port, Holder holder, long heldSince) {
    return loadedPortHolders().release(port, holder, heldSince);
  }

  /** The NodePorts' holders, for a release; refused while the NodePort range is not loaded. */
  private HolderLedger<Integer> loadedPortHolders() {
    if (unknown.contains(RangeKey.nodePorts())) {
      throw unknown.notLoaded(RangeKey.nodePorts());
    }
    return portHolders;
  }

  /**
   * Frees a node's pod CIDRs (the node is gone).
   *
   * @return whether it held any
   * @throws StoreUnavailableException while a ClusterCIDR's state is not loaded
   */
  public synchronized boolean releasePodCidrs(String nodeName) {
    unknown.requireKnownPodCidrs();
    Optional<PodCidrAllocation> held = podCidrs.allocationOf(nodeName);
    if (held.isEmpty()) {
      return false;
    }
    podCidrs.release(nodeName);
    nodesSince.remove(nodeName);
    changed.mark(RangeKey.podCidrs(held.get().clusterCidr()));
    return true;
  }

  /**
   * Names {@code owner} as the holder of a value {@code recorded} holds on record, as
   * {@link AllocationStore#adopt} describes.
   *
   * @return whether the record changed
   * @throws StoreUnavailableException while the value's range is not loaded
   */
  public synchronized boolean adopt(RangeKey.Kind kind, String value, Holder recorded, Holder owner) {
    return changeHolder(kind, value, (ledger, address) -> ledger.adopt(address, recorded, owner),
        (ledger, port) -> ledger.adopt(port, recorded, owner));
  }

  /**
   * Names {@code owner} the holder of a value a replica reserved ahead ({@code reserved}, see
   * {@link Holder#reservedAhead}) and has given it: held by {@code owner} from now on, so the
   * reconciler's grace for values nothing carries starts when the value was given, not when it
   * was reserved.
   *
   * @return whether the record changed: false when {@code reserved} no longer holds it (it was
   *     freed, or handed over already)
   * @throws StoreUnavailableException while the value's range is not loaded
   */
  public synchronized boolean handOver(RangeKey.Kind kind, String value, Holder reserved, Holder owner) {
    return changeHolder(kind, value, (ledger, address) -> ledger.handOver(address, reserved, owner),
        (ledger, port) -> ledger.handOver(port, reserved, owner));
  }

  /**
   * Applies a change of holder to the ledger of {@code value} (an address or a port, by
   * {@code kind}); pod CIDRs change nothing (a node's blocks are held by its name already).
   *
   * @throws StoreUnavailableException while the value's range is not loaded
   */
  private boolean changeHolder(RangeKey.Kind kind, String value,
      BiPredicate<HolderLedger<IpAddress>, IpAddress> onAddress, BiPredicate<HolderLedger<Integer>, Integer> onPort) {
    return switch (kind) {
      case SERVICE_IPS -> {
        IpAddress address = IpAddress.parse(value);
        if (unknown.isUnknown(address.family())) {
          throw unknown.notLoaded(unknown.firstUnknown(address.family()));
        }
        yield onAddress.test(addressHolders.get(address.family()), address);
      }
      case NODE_PORTS -> {
        if (unknown.contains(RangeKey.nodePorts())) {
          throw unknown.notLoaded(RangeKey.nodePorts());
        }
        yield onPort.test(portHolders, Integer.parseInt(value));
      }
      case POD_CIDRS -> false;
    };
  }

  // ---- loaded state -----------------------------------------------------------------------

  /**
   * From now on a range serves only once its state has been loaded by {@link #restore}: every
   * range this engine has, and every range added later, starts unknown. Requests that need an
   * unknown range fail with {@link StoreUnavailableException}, so nothing is handed out that
   * the cluster may already hold; values an object already carries (kept claims) are reported,
   * not refused.
   */
  public synchronized void requireLoadedState() {
    unknown.requireLoadedState(rangeKeys());
  }

  /** The ranges whose state is not loaded (see {@link #requireLoadedState}). */
  public synchronized Set<RangeKey> unknownRanges() {
    return unknown.copy();
  }

  /** Everything held, with holders and times. */
  public synchronized List<Allocation> allocations() {
    return allocationsSince(Long.MIN_VALUE);
  }

  /**
   * What was held at {@code epochSeconds} or later by the time on its record (a value without a
   * holder on record counts as held at 0): the values a reconciler's pass between whole
   * comparisons looks at. Older values cost a lookup each, not an {@link Allocation}.
   */
  public synchronized List<Allocation> allocationsSince(long epochSeconds) {
    List<Allocation> all = new ArrayList<>();
    for (ServiceIpPool pool : pools.values()) {
      for (String name : pool.ranges().keySet()) {
        pool.forEachTaken(name, address -> {
          Held held = addressHolders.get(address.family()).held(address);
          long since = held == null ? 0 : held.since();
          if (since >= epochSeconds) {
            all.add(new Allocation(RangeKey.Kind.SERVICE_IPS, address.toString(), held == null ? null : held.holder(),
                since));
          }
        });
      }
    }
    nodePorts.forEachTaken(port -> {
      Held held = portHolders.held(port);
      long since = held == null ? 0 : held.since();
      if (since >= epochSeconds) {
        all.add(new Allocation(RangeKey.Kind.NODE_PORTS, String.valueOf(port), held == null ? null : held.holder(),
            since));
      }
    });
    for (String name : clusterCidrNames()) {
      for (String node : podCidrs.nodesUsing(name)) {
        long since = nodesSince.getOrDefault(node, 0L);
        if (since >= epochSeconds) {
          String blocks = StoredStates.blocksText(podCidrs.allocationOf(node).orElseThrow());
          all.add(new Allocation(RangeKey.Kind.POD_CIDRS, blocks, Holder.node(node), since));
        }
      }
    }
    return all.stream().distinct().toList();
  }

  // ---- persistence support ----------------------------------------------------------------

  /** The ranges changed since the last call (and forgets them, and their changed offsets). */
  public synchronized Set<RangeKey> drainChanged() {
    return changed.drain();
  }

  /**
   * The offsets of Service and NodePort ranges changed since the last call (and forgets them),
   * by range; call before {@link #drainChanged}. A commit writes the stored shards holding them.
   */
  public synchronized Map<RangeKey, Set<Long>> drainChangedOffsets() {
    return changed.drainOffsets();
  }

  /**
   * The offsets {@code [from, to)} of a Service or NodePort range, to be persisted as one shard
   * ({@code to} is cut to the range's size).
   */
  public synchronized RangeWindow exportWindow(RangeKey key, long from, long to) {
    return stored.exportWindow(key, from, to);
  }

  /**
   * Replaces one window of a Service or NodePort range with its persisted state, as another
   * replica left it; the rest of the range is left alone. Nothing is marked changed. Holder lines
   * for values outside the window, or not taken in it, are left out (as {@link #restore} does).
   *
   * @param range the range the window was stored for ({@link RangeState#range} form)
   * @return false when the range cannot be loaded a window at a time (it is not served, not loaded
   *     yet, was stored for another range, is too large for a bitmap, or overlaps another range):
   *     load its whole kind instead, which says what is wrong
   */
  public synchronized boolean restoreWindow(RangeKey key, String range, RangeWindow window) {
    return stored.restoreWindow(key, range, window);
  }

  /** Every range this engine serves now. */
  public synchronized List<RangeKey> rangeKeys() {
    List<RangeKey> keys = new ArrayList<>();
    pools.forEach((family, pool) -> pool.ranges().keySet().forEach(name -> keys.add(RangeKey.serviceIps(name, family))));
    keys.add(RangeKey.nodePorts());
    clusterCidrNames().forEach(name -> keys.add(RangeKey.podCidrs(name)));
    return keys;
  }

  /**
   * A new, empty engine that serves only {@code key}'s range, defined as here (same NodePort range,
   * start strategy, randomness and clock): the reconciler rebuilds a range's state in one from
   * what the cluster holds, then exports it.
   */
  public synchronized AllocationEngine emptyCopyOf(RangeKey key) {
    AllocationEngine copy = new AllocationEngine(nodePorts.range(), starts, choices, clock);
    switch (key.kind()) {
      case SERVICE_IPS -> {
        ServiceIpPool pool = pools.get(key.family());
        Cidr cidr = pool == null ? null : pool.ranges().get(key.name());
        if (cidr == null) {
          throw new IllegalArgumentException("no Service range " + key);
        }
        copy.addServiceRange(key.name(), cidr);
      }
      case NODE_PORTS -> { }
      case POD_CIDRS -> copy.addClusterCidr(podCidrs.clusterCidr(key.name())
          .orElseThrow(() -> new IllegalArgumentException("no ClusterCIDR " + key.name())));
    }
    return copy;
  }

  /** One range's state, to be persisted. */
  public synchronized RangeState export(RangeKey key) {
    return stored.export(key);
  }

  /**
   * Replaces the state of every range of one kind (and family) with persisted states, as another
   * replica left them. Ranges of that kind without a state are emptied (and stay unknown when
   * {@link #requireLoadedState loaded state is required}). Nothing is marked changed: this is
   * what is stored already.
   *
   * @return the states that did not fit their range (a corrupt or foreign state), with why; their
   *     ranges are left empty and unknown
   */
  public synchronized Map<RangeKey, String> restore(RangeKey.Kind kind, IpFamily family, List<RangeState> states) {
    return stored.restore(kind, family, states);
  }

  // ---- lookups and usage ------------------------------------------------------------------

  /** Who holds {@code address}, when it is held and the engine knows. */
  public synchronized Optional<Holder> holderOf(IpAddress address) {
    return Optional.ofNullable(addressHolders.get(address.family()).held(address)).map(Held::holder);
  }

  /**
   * The live Service range an address would be given from now (the first by name that can
   * assign it), or null when none can, or while the family's state is not loaded: a value
   * reserved ahead is handed out only while its range still gives addresses.
   */
  public synchronized Cidr liveRangeOf(IpAddress address) {
    ServiceIpPool pool = pools.get(address.family());
    return pool == null || unknown.isUnknown(address.family()) ? null : pool.homeOf(address);
  }

  /** True while every Service range of a family has its state loaded (see {@link #requireLoadedState}). */
  public synchronized boolean loaded(IpFamily family) {
    return !unknown.isUnknown(family);
  }

  /** True while the NodePort range's state is loaded (see {@link #requireLoadedState}). */
  public synchronized boolean nodePortsLoaded() {
    return !unknown.contains(RangeKey.nodePorts());
  }

  /** Who holds NodePort {@code port}, when it is held and the engine knows. */
  public synchronized Optional<Holder> holderOfNodePort(int port) {
    return Optional.ofNullable(portHolders.held(port)).map(Held::holder);
  }

  /** See {@link AllocationStore#holdsAnythingFor}. */
  public synchronized boolean holdsAnythingFor(Holder holder) {
    HolderLedger.ObjectKey key = HolderLedger.ObjectKey.of(holder);
    if (portHolders.holdsAnythingFor(key)) {
      return true;
    }
    for (HolderLedger<IpAddress> holders : addressHolders.values()) {
      if (holders.holdsAnythingFor(key)) {
        return true;
      }
    }
    return false;
  }

  /** The IP families that have at least one live Service range. */
  public synchronized Set<IpFamily> servedFamilies() {
    Set<IpFamily> families = EnumSet.noneOf(IpFamily.class);
    pools.forEach((family, pool) -> {
      if (pool.hasLiveRange()) {
        families.add(family);
      }
    });
    return families;
  }

  /** Usage of every Service range. */
  public synchronized List<RangeUsage> usage() {
    return pools.values().stream().flatMap(p -> p.usage().stream()).toList();
  }

  /** Usage of the NodePort range. */
  public synchronized RangeUsage nodePortUsage() {
    return nodePorts.usage();
  }

  /** Usage of every ClusterCIDR. */
  public synchronized List<ClusterCidrUsage> podCidrUsage() {
    return podCidrs.usage();
  }

  /** Every Service range and the NodePort range, with bands and static-band holders, for people. */
  public synchronized List<RangeView> describeRanges() {
    List<RangeView> views = new ArrayList<>();
    for (ServiceIpPool pool : pools.values()) {
      for (Map.Entry<String, Cidr> range : pool.ranges().entrySet()) {
        ServiceIpRange ipRange = pool.range(range.getKey());
        List<RangeView.HeldValue> holders = pool.takenInStaticBand(range.getKey()).stream()
            .map(a -> new RangeView.HeldValue(a.toString(), describeHolder(addressHolders.get(a.family()).held(a))))
            .toList();
        RangeUsage usage = pool.usage().stream().filter(u -> u.range().equals(range.getValue().toString()))
            .findFirst().orElseThrow();
        views.add(new RangeView(RangeView.Kind.SERVICE_IPS, range.getKey(), range.getValue().toString(),
            pool.family().kubernetesName(), ipRange.describeStaticBand(), ipRange.describeDynamicBand(), usage,
            pool.isTerminating(range.getKey()), holders));
      }
    }
    PortRange ports = nodePorts.range();
    List<RangeView.HeldValue> heldPorts = nodePorts.takenInStaticBand().stream()
        .map(p -> new RangeView.HeldValue(String.valueOf(p), describeHolder(portHolders.held(p)))).toList();
    views.add(new RangeView(RangeView.Kind.NODE_PORTS, NODE_PORTS_NAME, ports.toString(), "",
        ports.describeStaticBand(), ports.describeDynamicBand(), nodePorts.usage(), false, heldPorts));
    return views;
  }

  private static String describeHolder(Held held) {
    return held == null ? "unknown" : held.holder().kind() + " " + held.holder();
  }

  // ---- what the holder ledgers need from the allocators ----------------------------------

  /** The addresses of one family, handed out by its pool (there once the family has a range). */
  private final class AddressSpace implements HolderLedger.Space<IpAddress> {

    private final IpFamily family;

    AddressSpace(IpFamily family) {
      this.family = family;
    }

    @Override
    public boolean isTaken(IpAddress address) {
      ServiceIpPool pool = pools.get(family);
      return pool != null && pool.isAllocated(address);
    }

    @Override
    public void release(IpAddress address) {
      pools.get(family).release(address);
    }

    /** An address belongs to every range covering it: all of them change. */
    @Override
    public void markChanged(IpAddress address) {
      ServiceIpPool pool = pools.get(family);
      for (String name : pool.ranges().keySet()) {
        long offset = pool.range(name).offsetOf(address);
        if (offset != ServiceIpRange.NOT_ASSIGNABLE) {
          changed.mark(RangeKey.serviceIps(name, family), offset);
        }
      }
    }
  }

  /** The NodePorts: one allocator, one stored range, offsets from its first port. */
  private final class NodePortSpace implements HolderLedger.Space<Integer> {

    @Override
    public boolean isTaken(Integer port) {
      return nodePorts.range().contains(port) && nodePorts.isAllocated(port);
    }

    @Override
    public void release(Integer port) {
      nodePorts.release(port);
    }

    @Override
    public void markChanged(Integer port) {
      changed.mark(RangeKey.nodePorts(), (long) port - nodePorts.range().first());
    }
  }

  // ---- helpers ----------------------------------------------------------------------------

  private long now() {
    return clock.instant().getEpochSecond();
  }

  private String describeAllRanges() {
    return pools.values().stream().map(ServiceIpPool::describeLive).filter(s -> !s.isEmpty())
        .reduce((a, b) -> a + ", " + b).orElse("none");
  }
}
