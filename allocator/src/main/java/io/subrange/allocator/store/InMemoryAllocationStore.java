package io.subrange.allocator.store;

import io.subrange.allocator.band.RangeUsage;
import io.subrange.allocator.band.StartStrategy;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.podcidr.ClusterCidr;
import io.subrange.allocator.podcidr.ClusterCidrUsage;
import io.subrange.allocator.podcidr.NodeView;
import io.subrange.allocator.podcidr.PodCidrAllocation;
import io.subrange.allocator.port.PortRange;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.random.RandomGenerator;

/**
 * The memory store ({@code subrange.store=memory}): an {@link AllocationEngine} served as an
 * {@link AllocationStore} in this process alone. Nothing is made durable, so each request is
 * answered at once, with a completed future, or one failed with the {@link AllocationException}
 * the engine threw.
 */
public final class InMemoryAllocationStore implements AllocationStore {

  private final AllocationEngine engine;

  public InMemoryAllocationStore(AllocationEngine engine) {
    this.engine = engine;
  }

  /** See {@link AllocationEngine#AllocationEngine(PortRange, StartStrategy)}. */
  public InMemoryAllocationStore(PortRange nodePortRange, StartStrategy starts) {
    this(new AllocationEngine(nodePortRange, starts));
  }

  /** See {@link AllocationEngine#AllocationEngine(PortRange, RandomGenerator)}. */
  public InMemoryAllocationStore(PortRange nodePortRange, RandomGenerator random) {
    this(new AllocationEngine(nodePortRange, random));
  }

  /** See {@link AllocationEngine#AllocationEngine(PortRange, RandomGenerator, Clock)}. */
  public InMemoryAllocationStore(PortRange nodePortRange, RandomGenerator random, Clock clock) {
    this(new AllocationEngine(nodePortRange, random, clock));
  }

  /** The engine, for what only it offers: loading state ({@code InProcessStateRebuild}). */
  public AllocationEngine engine() {
    return engine;
  }

  // ---- requests: answered at once ----------------------------------------------------------

  @Override
  public CompletableFuture<Reservation> reserve(ReservationRequest request) {
    return AllocationStore.answerNow(() -> engine.reserve(request));
  }

  @Override
  public CompletableFuture<PodCidrAllocation> reservePodCidrs(NodeView node, List<Cidr> preset, boolean dryRun) {
    return AllocationStore.answerNow(() -> engine.reservePodCidrs(node, preset, dryRun));
  }

  @Override
  public CompletableFuture<PodCidrAllocation> recordPodCidrs(NodeView node, List<Cidr> podCidrs) {
    return AllocationStore.answerNow(() -> engine.recordPodCidrs(node, podCidrs));
  }

  @Override
  public CompletableFuture<Boolean> releaseIp(IpAddress address, Holder holder) {
    return AllocationStore.answerNow(() -> engine.releaseIp(address, holder));
  }

  @Override
  public CompletableFuture<Boolean> releaseNodePort(int port, Holder holder) {
    return AllocationStore.answerNow(() -> engine.releaseNodePort(port, holder));
  }

  @Override
  public CompletableFuture<Boolean> releaseIpHeldExactlyBy(IpAddress address, Holder holder) {
    return AllocationStore.answerNow(() -> engine.releaseIpHeldExactlyBy(address, holder));
  }

  @Override
  public CompletableFuture<Boolean> releaseNodePortHeldExactlyBy(int port, Holder holder) {
    return AllocationStore.answerNow(() -> engine.releaseNodePortHeldExactlyBy(port, holder));
  }

  @Override
  public CompletableFuture<Boolean> releaseLeakedIp(IpAddress address, Holder holder, long heldSince) {
    return AllocationStore.answerNow(() -> engine.releaseLeakedIp(address, holder, heldSince));
  }

  @Override
  public CompletableFuture<Boolean> releaseLeakedNodePort(int port, Holder holder, long heldSince) {
    return AllocationStore.answerNow(() -> engine.releaseLeakedNodePort(port, holder, heldSince));
  }

  @Override
  public CompletableFuture<Boolean> releasePodCidrs(String nodeName) {
    return AllocationStore.answerNow(() -> engine.releasePodCidrs(nodeName));
  }

  @Override
  public CompletableFuture<Boolean> adopt(RangeKey.Kind kind, String value, Holder recorded, Holder owner) {
    return AllocationStore.answerNow(() -> engine.adopt(kind, value, recorded, owner));
  }

  // ---- reads and ranges: the engine's --------------------------------------------------------

  @Override
  public List<Allocation> allocations() {
    return engine.allocations();
  }

  @Override
  public List<Allocation> allocationsSince(long epochSeconds) {
    return engine.allocationsSince(epochSeconds);
  }

  @Override
  public Optional<Holder> holderOf(IpAddress address) {
    return engine.holderOf(address);
  }

  @Override
  public Optional<Holder> holderOfNodePort(int port) {
    return engine.holderOfNodePort(port);
  }

  @Override
  public boolean holdsAnythingFor(Holder holder) {
    return engine.holdsAnythingFor(holder);
  }

  @Override
  public Set<IpFamily> servedFamilies() {
    return engine.servedFamilies();
  }

  @Override
  public List<RangeUsage> usage() {
    return engine.usage();
  }

  @Override
  public RangeUsage nodePortUsage() {
    return engine.nodePortUsage();
  }

  @Override
  public List<ClusterCidrUsage> podCidrUsage() {
    return engine.podCidrUsage();
  }

  @Override
  public List<RangeView> describeRanges() {
    return engine.describeRanges();
  }

  @Override
  public Map<String, List<Cidr>> serviceRanges() {
    return engine.serviceRanges();
  }

  @Override
  public void addServiceRange(String name, Cidr cidr) {
    engine.addServiceRange(name, cidr);
  }

  @Override
  public void markServiceRangeTerminating(String name) {
    engine.markServiceRangeTerminating(name);
  }

  @Override
  public long serviceRangeInUseOnlyBy(String name) {
    return engine.serviceRangeInUseOnlyBy(name);
  }

  @Override
  public void removeServiceRange(String name) {
    engine.removeServiceRange(name);
  }

  @Override
  public void addClusterCidr(ClusterCidr clusterCidr) {
    engine.addClusterCidr(clusterCidr);
  }

  @Override
  public List<String> clusterCidrNames() {
    return engine.clusterCidrNames();
  }

  @Override
  public void markClusterCidrTerminating(String name) {
    engine.markClusterCidrTerminating(name);
  }

  @Override
  public boolean clusterCidrInUse(String name) {
    return engine.clusterCidrInUse(name);
  }

  @Override
  public void removeClusterCidr(String name) {
    engine.removeClusterCidr(name);
  }
}
