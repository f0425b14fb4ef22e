package io.subrange.allocator.store;

import io.subrange.allocator.band.RangeUsage;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.podcidr.ClusterCidr;
import io.subrange.allocator.podcidr.ClusterCidrUsage;
import io.subrange.allocator.podcidr.NodeView;
import io.subrange.allocator.podcidr.PodCidrAllocation;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Where allocations live: Service ClusterIPs (one pool per IP family merging named Service
 * ranges, KEP-1880), NodePorts (one range, KEP-3668) and Node pod CIDRs (ClusterCIDRs,
 * KEP-2593).
 *
 * <p>The unit of work is one object's request: everything a {@link #reserve} call asks for is
 * granted, or none of it is kept. A store that persists completes its futures only once the
 * allocation is durable; callers must not report a value before that.
 */
public interface AllocationStore {

  /**
   * Reserves ClusterIPs and NodePorts for one Service.
   *
   * <p>A specific claim succeeds when the value is assignable and free, or already held by the
   * same object (admission may be retried, and an update re-claims what the object has). A
   * dynamic IP claim reuses the address the same named object already holds in that family,
   * otherwise takes a free one, dynamic bands first; a dynamic port claim takes a free port,
   * dynamic band first. A kept claim (a value the object already carries) is recorded when it
   * can be and otherwise only reported in its assignment: existing objects are never refused
   * for what they already hold.
   *
   * @return the assignments, or a future failed with an {@link AllocationException}
   */
  CompletableFuture<Reservation> reserve(ReservationRequest request);

  /**
   * Gives a Node its pod CIDRs: records {@code preset} (the node's existing
   * {@code spec.podCIDRs}) when given, otherwise blocks from the best ClusterCIDR for its
   * labels. A node that already holds blocks gets them back.
   *
   * @return the blocks, or a future failed with {@link PodCidrUnavailableException}
   */
  CompletableFuture<PodCidrAllocation> reservePodCidrs(NodeView node, List<Cidr> preset, boolean dryRun);

  /**
   * Records the pod CIDRs a Node in the cluster already carries (the reconciler, for a node the
   * store has no record of): as a preset, except that blocks inside a reserved Service range are
   * accepted, since the node has them whatever subrange decides now. Blocks another node holds
   * are still refused.
   *
   * @return the blocks, or a future failed with {@link PodCidrUnavailableException}
   */
  CompletableFuture<PodCidrAllocation> recordPodCidrs(NodeView node, List<Cidr> podCidrs);

  /**
   * Frees a ClusterIP, but only from {@code holder} (the same object) when one is given: the
   * reconciler releases what a deleted or updated object gave up, never what another object has
   * taken since. Completes with whether it was freed, once that is durable.
   */
  CompletableFuture<Boolean> releaseIp(IpAddress address, Holder holder);

  /** Frees a NodePort, as {@link #releaseIp}. */
  CompletableFuture<Boolean> releaseNodePort(int port, Holder holder);

  /**
   * Frees a ClusterIP only while exactly {@code holder}, uid included, holds it: the reconciler
   * taking back what it stored a moment before for an object that went away meanwhile. Unlike
   * {@link #releaseIp}, a record without a uid (made at CREATE, perhaps for a new object of the
   * same name that has the value now) is not this holder's.
   */
  CompletableFuture<Boolean> releaseIpHeldExactlyBy(IpAddress address, Holder holder);

  /** Frees a NodePort, as {@link #releaseIpHeldExactlyBy}. */
  CompletableFuture<Boolean> releaseNodePortHeldExactlyBy(int port, Holder holder);

  /**
   * Frees a ClusterIP no object carries, as {@link #releaseIp}, but only while {@code holder}
   * still holds it since {@code heldSince} (the time the reconciler judged): a create retried
   * meanwhile re-armed the hold, and its object is about to carry the value.
   */
  CompletableFuture<Boolean> releaseLeakedIp(IpAddress address, Holder holder, long heldSince);

  /** Frees a NodePort no object carries, as {@link #releaseLeakedIp}. */
  CompletableFuture<Boolean> releaseLeakedNodePort(int port, Holder holder, long heldSince);

  /** Frees a node's pod CIDRs (the node is gone). */
  CompletableFuture<Boolean> releasePodCidrs(String nodeName);

  /**
   * Names {@code owner} as the holder of a ClusterIP or NodePort that {@code recorded} holds on
   * record (null: held without a known holder): the reconciler fills in the uid once the object
   * exists, and names the object that carries a value whose record is stale. Completes with
   * whether the record changed, once that is durable.
   */
  CompletableFuture<Boolean> adopt(RangeKey.Kind kind, String value, Holder recorded, Holder owner);

  /** Everything held, with holders and times, for the reconciler to compare with the cluster. */
  List<Allocation> allocations();

  /**
   * What was held at {@code epochSeconds} or later by the time on its record, for the reconciler's
   * passes between whole comparisons (see {@link AllocationEngine#allocationsSince}).
   */
  List<Allocation> allocationsSince(long epochSeconds);

  /** Who holds {@code address}, when it is held and the store knows. */
  Optional<Holder> holderOf(IpAddress address);

  /** Who holds NodePort {@code port}, when it is held and the store knows. */
  Optional<Holder> holderOfNodePort(int port);

  /**
   * True when a ClusterIP or NodePort is held for the object {@code holder} names (kind,
   * namespace and name; any uid): a create of that name is then a retry, or a duplicate of an
   * object that exists.
   */
  boolean holdsAnythingFor(Holder holder);

  /** The IP families that have at least one live Service range. */
  Set<IpFamily> servedFamilies();

  /** Usage of every Service range, for metrics and status. */
  List<RangeUsage> usage();

  /** Usage of the NodePort range. */
  RangeUsage nodePortUsage();

  /** Usage of every ClusterCIDR. */
  List<ClusterCidrUsage> podCidrUsage();

  /** Every Service range and the NodePort range, with bands and static-band holders, for people. */
  List<RangeView> describeRanges();

  /** The Service ranges by name (a dual-stack ServiceCIDR has two CIDRs under one name). */
  Map<String, List<Cidr>> serviceRanges();

  /** Adds (or revives) a named Service range; taken addresses it covers count in it at once. */
  void addServiceRange(String name, Cidr cidr);

  /** Stops a Service range from handing out addresses; it keeps what it holds. */
  void markServiceRangeTerminating(String name);

  /** How many held addresses no other live range covers; the range may go when this is 0. */
  long serviceRangeInUseOnlyBy(String name);

  /**
   * Removes a Service range.
   *
   * @throws IllegalStateException while it holds addresses no other range covers
   */
  void removeServiceRange(String name);

  /**
   * Adds a ClusterCIDR; adding an equal one again changes nothing.
   *
   * @throws IllegalArgumentException when one of that name exists with another spec
   */
  void addClusterCidr(ClusterCidr clusterCidr);

  /** The names of the ClusterCIDRs. */
  List<String> clusterCidrNames();

  /** Stops a ClusterCIDR from giving blocks; nodes keep theirs. */
  void markClusterCidrTerminating(String name);

  /** True while a node holds blocks from the ClusterCIDR. */
  boolean clusterCidrInUse(String name);

  /**
   * Removes a ClusterCIDR.
   *
   * @throws IllegalStateException while nodes hold blocks from it
   */
  void removeClusterCidr(String name);

  /**
   * The answer of a store with nothing to make durable (the memory store; a dry run): {@code call}
   * made at once, as a future completed with its result, or failed with the
   * {@link AllocationException} it threw. Any other exception is thrown: it is a bug, not a
   * refusal.
   */
  static <T> CompletableFuture<T> answerNow(Supplier<T> call) {
    try {
      return CompletableFuture.completedFuture(call.get());
    } catch (AllocationException e) {
      return CompletableFuture.failedFuture(e);
    }
  }
}
