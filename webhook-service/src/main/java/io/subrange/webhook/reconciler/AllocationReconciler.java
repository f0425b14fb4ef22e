package io.subrange.webhook.reconciler;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.podcidr.PodCidrAllocationException;
import io.subrange.allocator.port.PortRange;
import io.subrange.allocator.store.Allocation;
import io.subrange.allocator.store.AllocationEngine;
import io.subrange.allocator.store.AllocationException;
import io.subrange.allocator.store.AllocationStore;
import io.subrange.allocator.store.Holder;
import io.subrange.allocator.store.IpAssignment;
import io.subrange.allocator.store.IpClaim;
import io.subrange.allocator.store.PodCidrUnavailableException;
import io.subrange.allocator.store.PortAssignment;
import io.subrange.allocator.store.PortClaim;
import io.subrange.allocator.store.RangeKey;
import io.subrange.allocator.store.RangeState;
import io.subrange.allocator.store.Reservation;
import io.subrange.allocator.store.ReservationRequest;
import io.subrange.webhook.Failures;
import io.subrange.webhook.node.NodePodCidrs;
import io.subrange.webhook.store.RebuildableStore;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.IntPredicate;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the store true to the cluster, as kube-apiserver's repair loops keep its allocators:
 * <ul>
 *   <li>on events: frees what a deleted Service carried, and what an update dropped, once the
 *       change is committed (the informer sees only committed objects); frees a Node's pod CIDRs
 *       once the Node is gone, not when its deletion starts;
 *   <li>on each pass: records values objects carry that the store does not hold (and names the
 *       object that carries a value recorded for another), reports duplicates and values out of
 *       range as Events, and frees values nothing carries once
 *       they have been held longer than the grace period (an object may still be on its way
 *       through admission). A pass looks at what changed since the last: the Services added or
 *       updated since (the events say which), and the values taken since (their records say
 *       when). Every {@code fullComparisonInterval}, after a rebuild, when the Service ranges change and
 *       when this process starts leading, a pass compares everything instead, as kube-apiserver's
 *       repair loops do every three minutes: that finds what no event tells, such as a release
 *       that was not for the holder on record;
 *   <li>rebuilds a range's state from the cluster when the store has none (never stored, deleted,
 *       corrupt).
 * </ul>
 * Only the acting reconciler ({@code leading}) does any of this; passes wait for the informers'
 * first lists, so nothing is judged against a partial picture.
 */
public final class AllocationReconciler {

  private static final Logger log = LoggerFactory.getLogger(AllocationReconciler.class);
  private static final Comparator<HasMetadata> OLDEST_FIRST = Comparator
      .comparing((HasMetadata o) -> Objects.toString(o.getMetadata().getCreationTimestamp(), ""))
      .thenComparing(o -> Objects.toString(o.getMetadata().getNamespace(), ""))
      .thenComparing(o -> o.getMetadata().getName());
  private static final long WAIT_SECONDS = 30;
  /** How much earlier than the last pass a pass looks for values held since: clocks differ a little. */
  private static final long CLOCK_SLACK_SECONDS = 10;

  private final AllocationStore store;
  private final RebuildableStore rebuildable;
  private final ClusterObjects cluster;
  private final RepairEvents events;
  private final ReconcilerMetrics metrics;
  private final PortRange nodePortRange;
  private final Duration grace;
  /**
   * When each value reserved ahead by a webhook replica was reserved, as of this pass ("kind/value"):
   * one carried by a Service is left to that replica for the grace period.
   */
  private final Map<String, Long> reservedAheadSince = new HashMap<>();
  private final Clock clock;
  private final BooleanSupplier leading;
  private final PodCidrAssignment podCidrAssignment;
  private final Duration fullComparisonInterval;

  /**
   * Services added or updated since a pass last found their values in order, by uid: what the
   * next pass between full comparisons looks at. Filled by the Service events while leading.
   */
  private final Map<String, Changed> changed = new ConcurrentHashMap<>();
  /** Services this pass left for the next one (a value left to the replica that reserved it, a failed repair). */
  private final Set<String> unsettled = new HashSet<>();
  /** Releases that failed: the next pass tries them again. */
  private final Queue<Runnable> failedReleases = new ConcurrentLinkedQueue<>();
  private volatile boolean fullComparisonDue = true;
  private long lastFullComparisonMillis;
  /** The Service ranges as the last full comparison saw them: a change calls for another. */
  private Map<String, List<Cidr>> rangesCompared = Map.of();
  /**
   * Values held before this (epoch seconds) have been looked at for leaks by an earlier pass, once
   * older than the grace period; a pass between full comparisons looks at those held since.
   */
  private long leaksSweptUpTo = Long.MIN_VALUE;

  /** A Service's latest version, as its event said. */
  private record Changed(String key, String resourceVersion) {

    static Changed of(Service service) {
      return new Changed(ClusterObjects.keyOf(service), Objects.toString(service.getMetadata().getResourceVersion(), ""));
    }
  }

  /**
   * @param fullComparisonInterval how often a pass compares every Service and every held value, not only
   *     what changed (see the class comment)
   */
  public AllocationReconciler(AllocationStore store, RebuildableStore rebuildable, ClusterObjects cluster,
      RepairEvents events, ReconcilerMetrics metrics, PortRange nodePortRange, Duration grace, Duration fullComparisonInterval,
      Clock clock, BooleanSupplier leading, KubernetesClient client, IpFamily primaryPodFamily) {
    this.store = store;
    this.rebuildable = rebuildable;
    this.cluster = cluster;
    this.events = events;
    this.metrics = metrics;
    this.nodePortRange = nodePortRange;
    this.grace = grace;
    this.fullComparisonInterval = fullComparisonInterval;
    this.clock = clock;
    this.leading = leading;
    this.podCidrAssignment = new PodCidrAssignment(store, client, events, metrics, primaryPodFamily);
    cluster.onServices(new ServiceEvents());
    cluster.onNodes(new NodeEvents());
  }

  // ---- rebuilding ---------------------------------------------------------------------------

  /** Rebuilds every range the store has no usable state for; returns how many it rebuilt. */
  public int rebuildMissing() {
    if (!cluster.synced()) {
      return 0;
    }
    int rebuilt = 0;
    for (Map.Entry<RangeKey, String> missing : rebuildable.rangesToRebuild().entrySet()) {
      RangeKey key = missing.getKey();
      RangeState state;
      try {
        AllocationEngine scratch = rebuildable.emptyCopyOf(key);
        fill(scratch, key);
        state = scratch.export(key);
      } catch (IllegalArgumentException e) {
        continue;  // the range went away meanwhile
      }
      try {
        rebuildable.install(state).get(WAIT_SECONDS, TimeUnit.SECONDS);
        metrics.rebuild();
        rebuilt++;
        fullComparisonDue = true;
        log.info("Rebuilt the state of {} from the cluster ({} values); it was unusable: {}", key,
            state.entries().size(), missing.getValue());
      } catch (Exception e) {
        metrics.error();
        log.warn("Could not store the rebuilt state of {}, will try again: {}", key, Failures.rootMessage(e));
      }
    }
    return rebuilt;
  }

  /** Records in an empty engine what the cluster's objects carry in one range; the oldest object wins a value. */
  private void fill(AllocationEngine scratch, RangeKey key) {
    switch (key.kind()) {
      case SERVICE_IPS -> {
        for (Service service : sorted(cluster.services())) {
          List<IpClaim> claims = Carried.clusterIps(service).stream()
              .filter(ip -> ip.family() == key.family()).map(IpClaim::kept).toList();
          if (!claims.isEmpty()) {
            scratch.reserve(ReservationRequest.ips(Carried.holder(service), claims, false));
          }
        }
      }
      case NODE_PORTS -> {
        for (Service service : sorted(cluster.services())) {
          List<PortClaim> claims = Carried.nodePorts(service).stream().map(PortClaim::kept).toList();
          if (!claims.isEmpty()) {
            scratch.reserve(new ReservationRequest(Carried.holder(service), List.of(), claims, false));
          }
        }
      }
      case POD_CIDRS -> {
        for (Node node : sorted(cluster.nodes())) {
          List<Cidr> blocks = Carried.podCidrs(node);
          if (!blocks.isEmpty()) {
            try {
              scratch.recordPodCidrs(NodePodCidrs.view(node), blocks);
            } catch (AllocationException e) {
              // blocks that fit no ClusterCIDR here, or that an older node holds: left out
            }
          }
        }
      }
    }
  }

  // ---- the comparison -----------------------------------------------------------------------

  /**
   * The next pass compares everything, not only what changed: for a process that starts leading
   * (it saw no events while it did not).
   */
  public void compareEverythingNext() {
    fullComparisonDue = true;
  }

  /**
   * One pass: repairs, reports, frees leaks. A full comparison when one is due (see the class
   * comment), else what changed since the last pass.
   */
  public void compare() {
    if (!cluster.synced()) {
      return;
    }
    long started = System.nanoTime();
    Map<String, List<Cidr>> ranges = store.serviceRanges();
    boolean full = fullComparisonDue || !ranges.equals(rangesCompared)
        || clock.millis() - lastFullComparisonMillis >= fullComparisonInterval.toMillis();
    if (full) {
      compareEverything(ranges);
    } else {
      compareChanges();
    }
    metrics.passTook(full ? "full" : "changes", Duration.ofNanos(System.nanoTime() - started));
  }

  /** Every Service against every held value. */
  private void compareEverything(Map<String, List<Cidr>> ranges) {
    fullComparisonDue = false;  // set again by anything that calls for one meanwhile, or a failure
    boolean done = false;
    try {
      long now = clock.instant().getEpochSecond();
      Map<String, Changed> batch = Map.copyOf(changed);
      Set<RangeKey.Kind> unknown = unknownKinds();
      List<Service> services = sorted(cluster.services());
      Map<IpAddress, List<Service>> ipOwners = new LinkedHashMap<>();
      Map<Integer, List<Service>> portOwners = new LinkedHashMap<>();
      for (Service service : services) {
        Carried.clusterIps(service).forEach(ip -> ipOwners.computeIfAbsent(ip, k -> new ArrayList<>()).add(service));
        Carried.nodePorts(service).forEach(p -> portOwners.computeIfAbsent(p, k -> new ArrayList<>()).add(service));
      }
      List<Allocation> held = store.allocations();
      done = pass(held, ipOwners, portOwners, unknown, true, ipOwners::containsKey, portOwners::containsKey);
      Set<String> live = new HashSet<>();
      services.forEach(s -> live.add(s.getMetadata().getUid()));
      cluster.nodes().forEach(n -> live.add(n.getMetadata().getUid()));
      events.retainOnly(live);
      settle(batch, done);
      if (done) {
        leaksSweptUpTo = now - grace.toSeconds();
        rangesCompared = ranges;
        lastFullComparisonMillis = clock.millis();
      }
    } finally {
      if (!done) {
        fullComparisonDue = true;
      }
    }
  }

  /**
   * The Services added or updated since the last pass, with every Service that shares a value
   * with them, and the values held since the last pass looked: as {@link #compareEverything} does
   * with all of them, for a cost that follows the changes, not what is held.
   */
  private void compareChanges() {
    long now = clock.instant().getEpochSecond();
    Map<String, Changed> batch = Map.copyOf(changed);
    Set<RangeKey.Kind> unknown = unknownKinds();
    Map<IpAddress, List<Service>> ipOwners = new LinkedHashMap<>();
    Map<Integer, List<Service>> portOwners = new LinkedHashMap<>();
    List<Service> services = new ArrayList<>();
    batch.forEach((uid, change) -> cluster.service(change.key())
        .filter(service -> uid.equals(service.getMetadata().getUid())).ifPresent(services::add));
    for (Service service : sorted(services)) {
      Carried.clusterIps(service).forEach(ip -> addCarriers(ipOwners, ip, cluster::carrying));
      Carried.nodePorts(service).forEach(p -> addCarriers(portOwners, p, cluster::carryingNodePort));
    }
    // A little before where the last pass looked: the records' times come from other processes' clocks.
    long from = leaksSweptUpTo == Long.MIN_VALUE ? Long.MIN_VALUE : leaksSweptUpTo - CLOCK_SLACK_SECONDS;
    List<Allocation> recent = store.allocationsSince(from);
    boolean done = pass(recent, ipOwners, portOwners, unknown, false,
        ip -> !cluster.carrying(ip).isEmpty(), port -> !cluster.carryingNodePort(port).isEmpty());
    settle(batch, done);
    if (done) {
      leaksSweptUpTo = now - grace.toSeconds();
    }
  }

  /**
   * Adds who carries {@code value} now, oldest first, unless known already or nobody does. The
   * Service this pass took from the cache can be updated or deleted by the informer before the
   * index is asked (Services come and go all the time under load): the index then has no carrier,
   * the event that changed it is the next pass's or a release's business, and there is nothing to
   * repair here. Left in, the empty list failed the whole pass (seen in the load harness: "Index 0
   * out of bounds for length 0", over and over while a warm-up round's deletes went by).
   */
  private static <V> void addCarriers(Map<V, List<Service>> owners, V value, Function<V, List<Service>> carriersNow) {
    if (owners.containsKey(value)) {
      return;
    }
    List<Service> carriers = sorted(carriersNow.apply(value));
    if (!carriers.isEmpty()) {
      owners.put(value, carriers);
    }
  }

  /** The kinds whose state is not loaded: nothing of them is judged. */
  private Set<RangeKey.Kind> unknownKinds() {
    Set<RangeKey.Kind> unknown = EnumSet.noneOf(RangeKey.Kind.class);
    rebuildable.rangesToRebuild().keySet().forEach(key -> unknown.add(key.kind()));
    return unknown;
  }

  /**
   * What both kinds of pass do with what they gathered; true when every repair and release went
   * through (else the pass's Services and leaks are looked at again).
   *
   * @param held the values to look at for leaks, and for when values reserved ahead were reserved
   * @param everything whether {@code held} is everything (pod CIDRs a node carries are recorded then)
   */
  private boolean pass(List<Allocation> held, Map<IpAddress, List<Service>> ipOwners,
      Map<Integer, List<Service>> portOwners, Set<RangeKey.Kind> unknown, boolean everything,
      Predicate<IpAddress> ipCarried, IntPredicate portCarried) {
    unsettled.clear();
    List<CompletableFuture<?>> repairs = new ArrayList<>();
    reservedAheadSince.clear();
    for (Allocation allocation : held) {
      if (allocation.holder() != null && allocation.holder().isReservedAhead()) {
        reservedAheadSince.put(allocation.kind() + "/" + allocation.value(), allocation.sinceEpochSeconds());
      }
    }
    if (!unknown.contains(RangeKey.Kind.SERVICE_IPS)) {
      repairClusterIps(ipOwners, repairs);
    }
    if (!unknown.contains(RangeKey.Kind.NODE_PORTS)) {
      repairNodePorts(portOwners, repairs);
    }
    if (!unknown.contains(RangeKey.Kind.POD_CIDRS)) {
      if (everything) {
        repairPodCidrs(held, repairs);
      }
      for (Node node : sorted(cluster.nodes())) {
        repairs.add(podCidrAssignment.assign(node));
      }
    }
    freeLeaks(held, ipCarried, portCarried, unknown, repairs);
    List<Runnable> retries = new ArrayList<>();
    for (Runnable retry; (retry = failedReleases.poll()) != null; ) {
      retries.add(retry);  // one that fails again is queued for the pass after
    }
    retries.forEach(Runnable::run);
    return awaitAll(repairs);
  }

  /** Keeps a Service this pass looked at for the next pass (or adds one a full comparison found). */
  private void lookAgainNextPass(Service service) {
    unsettled.add(service.getMetadata().getUid());
    changed.putIfAbsent(service.getMetadata().getUid(), Changed.of(service));
  }

  /** Forgets the pass's Services that are in order now, unless a newer version came meanwhile. */
  private void settle(Map<String, Changed> batch, boolean done) {
    if (!done) {
      return;
    }
    batch.forEach((uid, change) -> {
      if (!unsettled.contains(uid)) {
        changed.remove(uid, change);
      }
    });
  }

  private void repairClusterIps(Map<IpAddress, List<Service>> owners, List<CompletableFuture<?>> repairs) {
    List<Cidr> ranges = store.serviceRanges().values().stream().flatMap(List::stream).toList();
    owners.forEach((ip, carriers) -> {
      Service first = carriers.get(0);
      for (Service duplicate : carriers.subList(1, carriers.size())) {
        if (reportOnce(duplicate, "ClusterIPAlreadyAllocated", "Cluster IP " + ip + " was assigned to multiple"
            + " services (also " + name(first) + "); please recreate service")) {
          metrics.repair("clusterip", "duplicate");
        }
      }
      if (ranges.stream().noneMatch(range -> range.contains(ip))) {
        if (reportOnce(first, "ClusterIPOutOfRange", "Cluster IP " + ip + " is not within any Service CIDR subrange"
            + " serves (" + ranges.stream().map(Cidr::toString).collect(Collectors.joining(", "))
            + "); please recreate service")) {
          metrics.repair("clusterip", "out_of_range");
        }
        return;
      }
      Holder owner = Carried.holder(first);
      Optional<Holder> record = store.holderOf(ip);
      if (record.isEmpty()) {
        repairs.add(store.reserve(ReservationRequest.ips(owner, List.of(IpClaim.kept(ip)), false))
            .thenCompose(reservation -> {
              IpAssignment assignment = reservation.ips().get(0);
              boolean stored = assignment.unrecorded() == null && !assignment.alreadyHeld();
              return recorded(clusterIp(ip), first, owner, stored,
                  "ClusterIPNotAllocated", "Cluster IP " + ip + " is not allocated; repairing");
            }));
      } else if (!record.get().equals(owner)) {
        repairs.add(adopt(clusterIp(ip), record.get(), owner, carriers));
      }
    });
  }

  private void repairNodePorts(Map<Integer, List<Service>> owners, List<CompletableFuture<?>> repairs) {
    owners.forEach((port, carriers) -> {
      Service first = carriers.get(0);
      for (Service duplicate : carriers.subList(1, carriers.size())) {
        if (reportOnce(duplicate, "PortAlreadyAllocated", "Port " + port + " was assigned to multiple services (also "
            + name(first) + "); please recreate service")) {
          metrics.repair("nodeport", "duplicate");
        }
      }
      if (!nodePortRange.contains(port)) {
        if (reportOnce(first, "PortOutOfRange", "Port " + port + " is not within the port range " + nodePortRange
            + "; please recreate service")) {
          metrics.repair("nodeport", "out_of_range");
        }
        return;
      }
      Holder owner = Carried.holder(first);
      Optional<Holder> record = store.holderOfNodePort(port);
      if (record.isEmpty()) {
        repairs.add(store.reserve(new ReservationRequest(owner, List.of(), List.of(PortClaim.kept(port)), false))
            .thenCompose(reservation -> {
              PortAssignment assignment = reservation.ports().get(0);
              boolean stored = assignment.unrecorded() == null && !assignment.alreadyHeld();
              return recorded(nodePort(port), first, owner, stored,
                  "PortNotAllocated", "Port " + port + " is not allocated; repairing");
            }));
      } else if (!record.get().equals(owner)) {
        repairs.add(adopt(nodePort(port), record.get(), owner, carriers));
      }
    });
  }

  /** A value a pass repairs: its kind, as the store and the metrics name it, and who carries it now. */
  private record Repaired(RangeKey.Kind kind, String metricKind, String value, Supplier<List<Service>> carriersNow,
      Function<Holder, CompletableFuture<Boolean>> takeBack) {
  }

  private Repaired clusterIp(IpAddress ip) {
    return new Repaired(RangeKey.Kind.SERVICE_IPS, "clusterip", ip.toString(), () -> cluster.carrying(ip),
        owner -> store.releaseIpHeldExactlyBy(ip, owner));
  }

  private Repaired nodePort(int port) {
    return new Repaired(RangeKey.Kind.NODE_PORTS, "nodeport", String.valueOf(port),
        () -> cluster.carryingNodePort(port), owner -> store.releaseNodePortHeldExactlyBy(port, owner));
  }

  /**
   * After the store was asked to hold a value a Service carries and it had no record of: reported
   * when this recorded it ({@code stored}); else the value was held already, or taken without a
   * holder on record (a rebuild from an older format), and the Service is named its holder.
   */
  private CompletableFuture<Boolean> recorded(Repaired value, Service carrier, Holder owner, boolean stored,
      String reason, String message) {
    return unlessGone(carrier, value, owner, stored, () -> {
      if (!stored) {
        return store.adopt(value.kind(), value.value(), null, owner);
      }
      reportOnce(carrier, reason, message);
      metrics.repair(value.metricKind(), "not_allocated");
      return CompletableFuture.completedFuture(true);
    });
  }

  /**
   * After a repair for a Service the pass began with: {@code then} when the Service still carries
   * the value. The pass works from a snapshot of the Services, and one deleted while it ran had its
   * values freed by its delete's event, maybe just before the repair stored them again for it. The
   * informers drop an object before they deliver its delete, so a repair this check finds gone is
   * taken back (only while the repair's own holder, uid included, holds the value, and only when no
   * other Service carries it: the next pass names that one), and one it lets through comes before
   * the delete's release in the store's queue. Nothing is reported for a Service that went away.
   *
   * @param stored whether the repair changed the store (else there is nothing to take back)
   */
  private CompletableFuture<Boolean> unlessGone(Service carrier, Repaired value, Holder owner, boolean stored,
      Supplier<CompletableFuture<Boolean>> then) {
    List<Service> carriersNow = value.carriersNow().get();
    if (carriersNow.stream().anyMatch(s -> sameUid(s, carrier))) {
      return then.get();
    }
    if (!stored || !carriersNow.isEmpty()) {
      return CompletableFuture.completedFuture(false);
    }
    log.debug("{} {}: {} went away while this pass repaired it; taking the repair back", value.kind(),
        value.value(), owner);
    return value.takeBack().apply(owner).thenApply(freed -> false);
  }

  private static boolean sameUid(HasMetadata a, HasMetadata b) {
    return Objects.equals(a.getMetadata().getUid(), b.getMetadata().getUid());
  }

  /**
   * Names the object that carries a value as its holder when the record names another one (an
   * object that is gone or was never created, or one created with generateName, recorded before
   * it had a name). A record made at CREATE, without the uid, already names the object: filling
   * the uid in would cost a write per Service for nothing.
   */
  private CompletableFuture<Boolean> adopt(Repaired value, Holder record, Holder owner, List<Service> carriers) {
    if (record.isSameObject(owner) || carriers.stream().anyMatch(s -> Carried.holder(s).equals(record))) {
      return CompletableFuture.completedFuture(false);  // its own, or a duplicate reported above
    }
    Long reserved = record.isReservedAhead() ? reservedAheadSince.get(value.kind() + "/" + value.value()) : null;
    if (reserved != null && clock.instant().getEpochSecond() - reserved < grace.toSeconds()) {
      // Handed out by the replica that reserved it, which names the holder itself in a moment;
      // the next pass looks again.
      carriers.forEach(this::lookAgainNextPass);
      return CompletableFuture.completedFuture(false);
    }
    Service first = carriers.get(0);
    return store.adopt(value.kind(), value.value(), record, owner)
        .thenCompose(adopted -> !adopted ? CompletableFuture.completedFuture(false)
            : unlessGone(first, value, owner, true, () -> {
              metrics.repair(value.metricKind(), "holder");
              log.info("{} {} was recorded for {}, which does not carry it; {} does", value.kind(), value.value(),
                  record, owner);
              return CompletableFuture.completedFuture(true);
            }));
  }

  private void repairPodCidrs(List<Allocation> allocations, List<CompletableFuture<?>> repairs) {
    Map<String, Allocation> held = new HashMap<>();
    for (Allocation allocation : allocations) {
      if (allocation.kind() == RangeKey.Kind.POD_CIDRS && allocation.holder() != null) {
        held.put(allocation.holder().name(), allocation);
      }
    }
    for (Node node : sorted(cluster.nodes())) {
      List<Cidr> blocks = Carried.podCidrs(node);
      if (blocks.isEmpty() || held.containsKey(node.getMetadata().getName())) {
        continue;
      }
      String name = node.getMetadata().getName();
      repairs.add(store.recordPodCidrs(NodePodCidrs.view(node), blocks).handle((allocation, failure) -> {
        Optional<Node> now = failure == null ? cluster.node(name) : Optional.empty();
        if (failure == null && now.isEmpty()) {
          // Deleted while this pass ran (see unlessGone): its delete may have freed them already.
          // Blocks are held by the node's name, which nothing carries now.
          return store.releasePodCidrs(name).thenApply(freed -> false);
        }
        if (failure == null && !sameUid(now.get(), node)) {
          return CompletableFuture.completedFuture(false);  // another node of its name: the next pass
        }
        if (failure == null) {
          reportOnce(node, "CIDRNotAllocated", "Pod CIDRs " + blocks + " were not allocated; repairing");
          metrics.repair("podcidr", "not_allocated");
          return CompletableFuture.completedFuture(true);
        }
        Throwable cause = Failures.cause(failure);
        if (cause instanceof PodCidrUnavailableException unavailable) {
          boolean collision = unavailable.reason() == PodCidrAllocationException.Reason.COLLISION;
          if (reportOnce(node, "CIDRNotAvailable", "Pod CIDRs " + blocks + " cannot be recorded: "
              + unavailable.getMessage())) {
            metrics.repair("podcidr", collision ? "duplicate" : "out_of_range");
          }
          return CompletableFuture.completedFuture(false);
        }
        throw Failures.rethrowable(cause);
      }).thenCompose(outcome -> outcome));
    }
  }

  /** Frees values no object carries once they have been held longer than the grace period. */
  private void freeLeaks(List<Allocation> held, Predicate<IpAddress> ipCarried, IntPredicate portCarried,
      Set<RangeKey.Kind> unknown, List<CompletableFuture<?>> repairs) {
    long now = clock.instant().getEpochSecond();
    for (Allocation allocation : held) {
      if (unknown.contains(allocation.kind()) || now - allocation.sinceEpochSeconds() < grace.toSeconds()) {
        continue;
      }
      switch (allocation.kind()) {
        case SERVICE_IPS -> {
          IpAddress ip = IpAddress.parse(allocation.value());
          if (!ipCarried.test(ip)) {
            repairs.add(store.releaseLeakedIp(ip, allocation.holder(), allocation.sinceEpochSeconds())
                .thenApply(freed -> leaked(freed, "clusterip", allocation)));
          }
        }
        case NODE_PORTS -> {
          int port = Integer.parseInt(allocation.value());
          if (!portCarried.test(port)) {
            repairs.add(store.releaseLeakedNodePort(port, allocation.holder(), allocation.sinceEpochSeconds())
                .thenApply(freed -> leaked(freed, "nodeport", allocation)));
          }
        }
        case POD_CIDRS -> {
          String node = allocation.holder() == null ? "" : allocation.holder().name();
          if (cluster.node(node).isEmpty()) {
            repairs.add(store.releasePodCidrs(node).thenApply(freed -> leaked(freed, "podcidr", allocation)));
          }
        }
      }
    }
  }

  private boolean leaked(boolean freed, String kind, Allocation allocation) {
    if (freed && allocation.holder() != null && allocation.holder().isReservedAhead()) {
      // A replica's reservation it did not use in time, or one a replica that is gone left.
      metrics.repair(kind, "reserved_ahead_expired");
      log.debug("Freed {} {}: reserved ahead by {} {} s ago and carried by no object", kind, allocation.value(),
          allocation.holder().name(), clock.instant().getEpochSecond() - allocation.sinceEpochSeconds());
    } else if (freed) {
      metrics.repair(kind, "leak");
      log.info("Freed {} {}: held by {} for {} s and carried by no object", kind, allocation.value(),
          allocation.holder() == null ? "unknown" : allocation.holder(),
          clock.instant().getEpochSecond() - allocation.sinceEpochSeconds());
    }
    return freed;
  }

  // ---- events -------------------------------------------------------------------------------

  /**
   * Service events: releases what a delete or an update freed. They run on the Service client's
   * I/O thread ({@link ClusterObjects}) and must never block: they note the change, read the
   * informer's index and hand releases to the store, whose answers come on its committer.
   */
  private final class ServiceEvents implements ResourceEventHandler<Service> {

    @Override
    public void onAdd(Service service) {
      // Nothing to free; what it carries is compared on the next pass.
      noteChanged(service);
    }

    @Override
    public void onUpdate(Service before, Service after) {
      if (!leading.getAsBoolean()) {
        return;
      }
      noteChanged(after);
      if (Objects.equals(before.getMetadata().getUid(), after.getMetadata().getUid())) {
        Set<IpAddress> droppedIps = new HashSet<>(Carried.clusterIps(before));
        Carried.clusterIps(after).forEach(droppedIps::remove);
        Set<Integer> droppedPorts = new HashSet<>(Carried.nodePorts(before));
        droppedPorts.removeAll(Carried.nodePorts(after));
        release(before, droppedIps, droppedPorts, "updated");
      }
    }

    @Override
    public void onDelete(Service service, boolean finalStateUnknown) {
      changed.remove(service.getMetadata().getUid());
      if (leading.getAsBoolean()) {
        release(service, Carried.clusterIps(service), Carried.nodePorts(service), "deleted");
      }
    }

    /** For the next pass; a process that does not lead compares everything once it does. */
    private void noteChanged(Service service) {
      if (leading.getAsBoolean()) {
        changed.put(service.getMetadata().getUid(), Changed.of(service));
      }
    }
  }

  /** Frees values a Service gave up, unless another Service carries them now. */
  private void release(Service service, Iterable<IpAddress> ips, Iterable<Integer> ports, String reason) {
    Holder holder = Carried.holder(service);
    String uid = service.getMetadata().getUid();
    for (IpAddress ip : ips) {
      releaseIpUnlessCarried(ip, holder, uid, reason);
    }
    for (int port : ports) {
      releaseNodePortUnlessCarried(port, holder, uid, reason);
    }
  }

  private void releaseIpUnlessCarried(IpAddress ip, Holder holder, String uid, String reason) {
    if (cluster.carrying(ip).stream().allMatch(other -> Objects.equals(other.getMetadata().getUid(), uid))) {
      store.releaseIp(ip, holder).whenComplete((freed, failure) -> released("clusterip", reason, ip, holder, freed,
          failure, () -> releaseIpUnlessCarried(ip, holder, uid, reason)));
    }
  }

  private void releaseNodePortUnlessCarried(int port, Holder holder, String uid, String reason) {
    if (cluster.carryingNodePort(port).stream().allMatch(other -> Objects.equals(other.getMetadata().getUid(), uid))) {
      store.releaseNodePort(port, holder).whenComplete((freed, failure) -> released("nodeport", reason, port, holder,
          freed, failure, () -> releaseNodePortUnlessCarried(port, holder, uid, reason)));
    }
  }

  /** @param again the release, for the next pass to try again when it failed */
  private void released(String kind, String reason, Object value, Holder holder, Boolean freed, Throwable failure,
      Runnable again) {
    if (failure != null) {
      metrics.error();
      failedReleases.add(again);
      log.warn("Could not free {} {} of {} ({}); the next pass tries again: {}", kind, value, holder, reason,
          Failures.rootMessage(failure));
    } else if (Boolean.TRUE.equals(freed)) {
      metrics.release(kind, reason);
      log.debug("Freed {} {}: {} was {}", kind, value, holder, reason);
    }
  }

  /** Node events: a Node without pod CIDRs gets them; a Node's are freed once it is gone. */
  private final class NodeEvents implements ResourceEventHandler<Node> {

    @Override
    public void onAdd(Node node) {
      assignIfLeading(node);
    }

    @Override
    public void onUpdate(Node before, Node after) {
      assignIfLeading(after);
    }

    private void assignIfLeading(Node node) {
      // Only once the store's pod CIDR state is loaded: before that every block looks free.
      if (leading.getAsBoolean() && PodCidrAssignment.needs(node)
          && rebuildable.rangesToRebuild().keySet().stream().noneMatch(k -> k.kind() == RangeKey.Kind.POD_CIDRS)) {
        podCidrAssignment.assign(node).whenComplete((written, failure) -> {
          if (failure != null) {
            metrics.error();
            log.warn("Giving node {} pod CIDRs failed; the next pass tries again: {}", node.getMetadata().getName(),
                Failures.rootMessage(failure));
          }
        });
      }
    }

    @Override
    public void onDelete(Node node, boolean finalStateUnknown) {
      String name = node.getMetadata().getName();
      if (leading.getAsBoolean() && cluster.node(name).isEmpty()) {
        releasePodCidrsOf(name);
      }
    }
  }

  private void releasePodCidrsOf(String name) {
    if (cluster.node(name).isEmpty()) {
      store.releasePodCidrs(name).whenComplete((freed, failure) -> released("podcidr", "deleted", name,
          Holder.node(name), freed, failure, () -> releasePodCidrsOf(name)));
    }
  }

  /** Stops the pod CIDR writer; the informers belong to {@link ClusterObjects}. */
  public void close() {
    podCidrAssignment.close();
  }

  // ---- helpers ------------------------------------------------------------------------------

  /** An Event on the object, once per reason and message; true when this call reported it. */
  private boolean reportOnce(HasMetadata object, String reason, String message) {
    return events.warn(object, reason, message);
  }

  private static <T extends HasMetadata> List<T> sorted(List<T> objects) {
    List<T> copy = new ArrayList<>(objects);
    copy.sort(OLDEST_FIRST);
    return copy;
  }

  private static String name(Service service) {
    return service.getMetadata().getNamespace() + "/" + service.getMetadata().getName();
  }

  /** Waits for every repair; false when one failed (the next pass tries again). */
  private boolean awaitAll(List<CompletableFuture<?>> repairs) {
    boolean all = true;
    for (CompletableFuture<?> repair : repairs) {
      try {
        repair.get(WAIT_SECONDS, TimeUnit.SECONDS);
      } catch (Exception e) {
        all = false;
        metrics.error();
        log.warn("A repair failed, the next pass tries again: {}", Failures.rootMessage(e));
      }
    }
    return all;
  }
}
