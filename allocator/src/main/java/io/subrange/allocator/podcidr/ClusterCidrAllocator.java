package io.subrange.allocator.podcidr;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.podcidr.PodCidrAllocationException.Reason;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Gives nodes their pod CIDRs from KEP-2593 ClusterCIDRs.
 *
 * <p>For a node, the ClusterCIDRs whose selector matches are tried best first:
 * <ol>
 *   <li>the selector that pins more of the node: the matching term with the most requirements
 *       counts;
 *   <li>then fewer allocatable blocks, meaning the ClusterCIDR's <em>total</em> block count
 *       (the smaller of its families), not how many are still free;
 *   <li>then fewer addresses per node (smaller {@code perNodeHostBits});
 *   <li>then the name.
 * </ol>
 * After them come the fallback ClusterCIDRs (no nodeSelector) in the same order, so a fallback
 * serves a node only when no selector matches it or every matching one is full. The first
 * ClusterCIDR with room in every family it has gives the node one block per family; a
 * dual-stack ClusterCIDR with one full side gives nothing, and the next is tried.
 *
 * <p>This is upstream's order, checked against {@code orderedMatchingClusterCIDRs} and its
 * priority queue in kubernetes' {@code pkg/controller/nodeipam/ipam} (also in
 * kubernetes-sigs/node-ipam-controller): P0 most matching labels, P1 fewer
 * {@code maxAllocatable}, which is the smaller {@code MaxCIDRs} (2^(node prefix - cluster
 * prefix), fixed at creation) of the two families, P2 larger node mask, P3 selector text, P4 CIDR
 * text; the catch-all ClusterCIDRs are appended after the ranked matches. KEP-2593 says the same
 * ("fewest Pod CIDRs allocatable", e.g. a /16 split into one /16 before a /20 split into four
 * /22) and lists the nil-selector range last in its worked example. We differ in three ways:
 * selector terms are ORed rather than flattened into one AND (upstream's
 * {@code NodeSelectorAsSelector} merges them), the last tie-break is the unique name, and a
 * dual-stack ClusterCIDR whose second family is full does not keep the first family's block
 * (upstream skips to the next ClusterCIDR without releasing it).
 *
 * <p>ClusterCIDR ranges may overlap (KEP-2593's own example does). A block is never handed out
 * while it overlaps a block any node holds, whichever ClusterCIDR that came from, nor while it
 * touches a reserved range ({@link #reserve}, for Service CIDRs that overlap pod ranges).
 *
 * <p>Thread-safe; each call is atomic.
 */
public final class ClusterCidrAllocator {

  private static final int NAMES_IN_MESSAGES = 5;
  private static final int LABELS_IN_MESSAGES = 10;

  /** Best first, for ClusterCIDRs with the same match score. */
  private static final Comparator<Entry> TIE_BREAK = Comparator
      .comparingLong((Entry e) -> e.totalBlocks)
      .thenComparingInt(e -> e.spec.perNodeHostBits())
      .thenComparing(e -> e.spec.name());

  private final Map<String, Entry> entries = new HashMap<>();
  private final SelectorIndex<Entry> selectorIndex = new SelectorIndex<>();
  private final TreeSet<Entry> fallbacks = new TreeSet<>(TIE_BREAK);
  private final Map<String, Held> nodes = new HashMap<>();
  /** Every block a node holds, by family and network address; blocks never overlap. */
  private final Map<IpFamily, TreeMap<IpAddress, HeldBlock>> heldBlocks = new EnumMap<>(IpFamily.class);
  private final Map<IpFamily, List<Cidr>> reserved = new EnumMap<>(IpFamily.class);
  private long lookup;

  public ClusterCidrAllocator() {
    for (IpFamily family : IpFamily.values()) {
      heldBlocks.put(family, new TreeMap<>());
      reserved.put(family, new ArrayList<>());
    }
  }

  /** One ClusterCIDR and its block sets. */
  private static final class Entry {
    final ClusterCidr spec;
    final Map<IpFamily, CidrSet> sets = new EnumMap<>(IpFamily.class);
    final long totalBlocks;
    final Set<String> nodeNames = new HashSet<>();
    boolean terminating;
    /** The lookup this entry was last seen in, to visit it once per lookup. */
    long seenIn = -1;

    Entry(ClusterCidr spec) {
      this.spec = spec;
      long total = Long.MAX_VALUE;
      for (IpFamily family : spec.families()) {
        CidrSet set = new CidrSet(spec.range(family), spec.nodePrefixLength(family));
        sets.put(family, set);
        total = Math.min(total, set.blockCount());
      }
      this.totalBlocks = total;
    }

    String name() {
      return spec.name();
    }
  }

  private record Held(Entry entry, Cidr ipv4, Cidr ipv6) {
    PodCidrAllocation allocation(String node, int tried) {
      return new PodCidrAllocation(node, entry.name(), ipv4, ipv6, tried);
    }

    Cidr block(IpFamily family) {
      return family == IpFamily.IPV4 ? ipv4 : ipv6;
    }
  }

  private record HeldBlock(Cidr block, String node, Entry entry) {
  }

  private record Ranked(Entry entry, int score) {
  }

  /** The block index to take per family, or the family that had no room. */
  private record Pick(Map<IpFamily, Long> indexes, IpFamily full) {
  }

  // ---- ClusterCIDRs ----------------------------------------------------------------------

  /**
   * Adds a ClusterCIDR. Adding one equal to an existing one changes nothing and returns false.
   *
   * @throws IllegalArgumentException when a ClusterCIDR of that name exists with another spec
   *     (ClusterCIDRs are immutable)
   */
  public synchronized boolean add(ClusterCidr clusterCidr) {
    Entry existing = entries.get(clusterCidr.name());
    if (existing != null) {
      if (existing.spec.equals(clusterCidr)) {
        return false;
      }
      throw new IllegalArgumentException("ClusterCIDR " + clusterCidr.name() + " already exists with another spec"
          + " and ClusterCIDRs are immutable: it is " + describe(existing.spec) + ", not " + describe(clusterCidr)
          + "; create the new one under another name");
    }
    Entry entry = new Entry(clusterCidr);
    entry.sets.forEach((family, set) -> {
      for (Cidr range : reserved.get(family)) {
        if (range.overlaps(set.clusterCidr())) {
          set.occupy(range);
        }
      }
    });
    entries.put(clusterCidr.name(), entry);
    if (clusterCidr.isFallback()) {
      fallbacks.add(entry);
    } else {
      selectorIndex.add(entry, clusterCidr.nodeSelector());
    }
    return true;
  }

  /**
   * Marks a ClusterCIDR as being deleted: it gives no new blocks, while the nodes that hold
   * blocks from it keep them. Returns false when there is no ClusterCIDR of that name.
   */
  public synchronized boolean markTerminating(String name) {
    Entry entry = entries.get(name);
    if (entry == null) {
      return false;
    }
    entry.terminating = true;
    return true;
  }

  /**
   * Removes a ClusterCIDR that no node holds blocks from. Returns false when there is none of
   * that name.
   *
   * @throws IllegalStateException when nodes still hold blocks from it
   */
  public synchronized boolean remove(String name) {
    Entry entry = entries.get(name);
    if (entry == null) {
      return false;
    }
    if (!entry.nodeNames.isEmpty()) {
      throw new IllegalStateException("ClusterCIDR " + name + " cannot be removed: " + entry.nodeNames.size()
          + " node(s) still hold pod CIDRs from it (" + someNames(entry.nodeNames) + "); mark it terminating"
          + " and remove it once those nodes are deleted");
    }
    entries.remove(name);
    if (entry.spec.isFallback()) {
      fallbacks.remove(entry);
    } else {
      selectorIndex.remove(entry, entry.spec.nodeSelector());
    }
    return true;
  }

  public synchronized Optional<ClusterCidr> clusterCidr(String name) {
    Entry entry = entries.get(name);
    return entry == null ? Optional.empty() : Optional.of(entry.spec);
  }

  /** All ClusterCIDRs' usage, by name. */
  public synchronized List<ClusterCidrUsage> usage() {
    return entries.values().stream().sorted(Comparator.comparing(Entry::name)).map(this::usageOf).toList();
  }

  public synchronized Optional<ClusterCidrUsage> usage(String name) {
    Entry entry = entries.get(name);
    return entry == null ? Optional.empty() : Optional.of(usageOf(entry));
  }

  /** True while some node holds blocks from the named ClusterCIDR. */
  public synchronized boolean isInUse(String name) {
    Entry entry = entries.get(name);
    return entry != null && !entry.nodeNames.isEmpty();
  }

  /** The nodes holding blocks from the named ClusterCIDR, sorted. */
  public synchronized List<String> nodesUsing(String name) {
    Entry entry = entries.get(name);
    return entry == null ? List.of() : entry.nodeNames.stream().sorted().toList();
  }

  private ClusterCidrUsage usageOf(Entry entry) {
    return new ClusterCidrUsage(entry.name(), entry.terminating, entry.nodeNames.size(),
        familyUsage(entry.sets.get(IpFamily.IPV4)), familyUsage(entry.sets.get(IpFamily.IPV6)));
  }

  private static ClusterCidrUsage.FamilyUsage familyUsage(CidrSet set) {
    return set == null ? null
        : new ClusterCidrUsage.FamilyUsage(set.clusterCidr(), set.nodePrefixLength(), set.blockCount(),
            set.allocated());
  }

  // ---- reserved ranges -------------------------------------------------------------------

  /**
   * Keeps every block that touches {@code range} from being handed out, in the ClusterCIDRs
   * there are now and in those added later; for a Service CIDR that overlaps pod ranges.
   * Blocks nodes already hold there stay theirs. Returns false when it was reserved already.
   */
  public synchronized boolean reserve(Cidr range) {
    List<Cidr> ranges = reserved.get(range.family());
    if (ranges.contains(range)) {
      return false;
    }
    ranges.add(range);
    for (Entry entry : entries.values()) {
      CidrSet set = entry.sets.get(range.family());
      if (set != null && range.overlaps(set.clusterCidr())) {
        set.occupy(range);
      }
    }
    return true;
  }

  /** Undoes {@link #reserve}; returns false when the range was not reserved. */
  public synchronized boolean unreserve(Cidr range) {
    IpFamily family = range.family();
    if (!reserved.get(family).remove(range)) {
      return false;
    }
    for (Entry entry : entries.values()) {
      CidrSet set = entry.sets.get(family);
      if (set == null || !range.overlaps(set.clusterCidr())) {
        continue;
      }
      set.release(range);
      reoccupyHeldAndReserved(entry, set, range);
    }
    return true;
  }

  /**
   * After freeing {@code freed} in an entry's set, marks again what must stay occupied there.
   * Freeing works on whole blocks, so a range smaller than a block frees its whole block: what
   * overlaps any freed block is marked again, not only what overlaps {@code freed} itself.
   */
  private void reoccupyHeldAndReserved(Entry entry, CidrSet set, Cidr freed) {
    long[] freedBlocks = set.indexRange(freed);
    for (Cidr other : reserved.get(set.family())) {
      if (other.overlaps(set.clusterCidr())) {
        long[] blocks = set.indexRange(other);
        if (blocks[0] <= freedBlocks[1] && blocks[1] >= freedBlocks[0]) {
          set.occupy(other);
        }
      }
    }
    IpAddress first = set.blockAt(freedBlocks[0]).network();
    IpAddress last = Blocks.lastAddress(set.blockAt(freedBlocks[1]));
    TreeMap<IpAddress, HeldBlock> held = heldBlocks.get(set.family());
    for (HeldBlock block : held.subMap(first, true, last, true).values()) {
      if (block.entry() == entry) {
        set.occupy(block.block());
      }
    }
  }

  // ---- nodes -----------------------------------------------------------------------------

  /**
   * Gives {@code node} one block per family of the best ClusterCIDR with room. A node that
   * already holds blocks gets the same ones back ({@code clusterCidrsTried} 0).
   *
   * @throws PodCidrAllocationException naming the node and why: no ClusterCIDR serves it, or
   *     every one that does is full
   */
  public synchronized PodCidrAllocation allocate(NodeView node) {
    return allocate(node, true);
  }

  /** What {@link #allocate} would give {@code node} now, changing nothing (for dry runs). */
  public synchronized PodCidrAllocation preview(NodeView node) {
    return allocate(node, false);
  }

  private PodCidrAllocation allocate(NodeView node, boolean commit) {
    Held existing = nodes.get(node.name());
    if (existing != null) {
      return existing.allocation(node.name(), 0);
    }
    List<Entry> terminatingMatches = new ArrayList<>();
    List<Entry> order = candidates(node, terminatingMatches);
    if (order.isEmpty()) {
      throw noClusterCidrFor(node, terminatingMatches);
    }
    List<String> full = new ArrayList<>();
    for (int i = 0; i < order.size(); i++) {
      Entry entry = order.get(i);
      Pick pick = pick(entry);
      if (pick.full() != null) {
        full.add(entry.name() + " (" + pick.full() + " full)");
        continue;
      }
      Map<IpFamily, Cidr> blocks = new EnumMap<>(IpFamily.class);
      pick.indexes().forEach((family, index) -> blocks.put(family, entry.sets.get(family).blockAt(index)));
      if (commit) {
        pick.indexes().forEach((family, index) -> entry.sets.get(family).take(index));
        record(node.name(), entry, blocks);
      }
      return new PodCidrAllocation(node.name(), entry.name(), blocks.get(IpFamily.IPV4), blocks.get(IpFamily.IPV6),
          i + 1);
    }
    throw new PodCidrAllocationException(Reason.ALL_MATCHING_FULL, node.name(), order.size(),
        "node " + node.name() + " gets no pod CIDRs: every ClusterCIDR that can serve it is full ("
            + String.join(", ", limit(full)) + "); add a ClusterCIDR that selects it, or delete nodes that"
            + " hold blocks");
  }

  /**
   * Records the podCIDRs an existing node already has ({@code spec.podCIDRs}, which never
   * change), so they are not handed out again. They must be exactly one node block of a
   * ClusterCIDR for each of its families and be free. ClusterCIDRs whose selector matches the
   * node are preferred, in allocation order, then fallbacks, then the others (the node's labels
   * may have changed since), and terminating ones count too. Recording the same podCIDRs again
   * changes nothing.
   *
   * @throws PodCidrAllocationException when they fit no ClusterCIDR, or collide with blocks
   *     another node holds or a reserved range
   * @throws IllegalArgumentException when the list is empty or has two CIDRs of one family
   */
  public synchronized PodCidrAllocation occupy(NodeView node, List<Cidr> podCidrs) {
    return occupy(node, podCidrs, entries.values(), false);
  }

  /**
   * As {@link #occupy(Node, List)}, for pod CIDRs a node in the cluster already has: blocks
   * inside a reserved range are accepted (the node has them whatever is decided now, and the
   * reservation still keeps them from anyone else once the node lets them go). Blocks another
   * node holds are still refused.
   */
  public synchronized PodCidrAllocation occupyExisting(NodeView node, List<Cidr> podCidrs) {
    return occupy(node, podCidrs, entries.values(), true);
  }

  /**
   * Records pod CIDRs as held from one named ClusterCIDR, as stored state says they are: no
   * choice by selector (a node in the state of ClusterCIDR "a" stays in "a" even where another
   * ClusterCIDR overlaps it), and blocks inside a reserved range stay the node's (the range may
   * have been reserved after the node got them, see {@link #reserve}).
   *
   * @throws IllegalArgumentException when no ClusterCIDR has that name
   * @throws PodCidrAllocationException as {@link #occupy(Node, List)}
   */
  public synchronized PodCidrAllocation occupyIn(String clusterCidr, String nodeName, List<Cidr> podCidrs) {
    Entry entry = entries.get(clusterCidr);
    if (entry == null) {
      throw new IllegalArgumentException("no ClusterCIDR " + clusterCidr);
    }
    return occupy(NodeView.named(nodeName), podCidrs, List.of(entry), true);
  }

  private PodCidrAllocation occupy(NodeView node, List<Cidr> podCidrs, Collection<Entry> candidates,
      boolean recorded) {
    Map<IpFamily, Cidr> blocks = byFamily(node, podCidrs);
    Held existing = nodes.get(node.name());
    if (existing != null) {
      if (blocks.equals(blocksOf(existing))) {
        return existing.allocation(node.name(), 0);
      }
      throw new PodCidrAllocationException(Reason.COLLISION, node.name(), 0, "node " + node.name()
          + " already holds pod CIDRs " + existing.allocation(node.name(), 0).podCidrs() + " from ClusterCIDR "
          + existing.entry().name() + ", so " + podCidrs + " cannot be recorded for it; pod CIDRs never change,"
          + " release the node first if it was re-created");
    }
    List<Entry> fitting = new ArrayList<>();
    for (Entry entry : candidates) {
      if (fits(entry, blocks)) {
        fitting.add(entry);
      }
    }
    if (fitting.isEmpty()) {
      throw new PodCidrAllocationException(Reason.NOT_IN_ANY_CLUSTER_CIDR, node.name(), 0, "pod CIDRs " + podCidrs
          + " of node " + node.name() + " fit no ClusterCIDR: each must be exactly one node block (prefix 32 or"
          + " 128 minus perNodeHostBits) inside the ClusterCIDR's range, one for each family it has");
    }
    Map<Entry, Integer> scores = new HashMap<>();
    for (Entry entry : fitting) {
      scores.put(entry, entry.spec.isFallback() ? 0 : entry.spec.nodeSelector().matchScore(node));
    }
    fitting.sort(Comparator.comparingInt((Entry e) -> -scores.get(e)).thenComparing(TIE_BREAK));
    String firstCollision = null;
    for (int i = 0; i < fitting.size(); i++) {
      Entry entry = fitting.get(i);
      String collision = collision(entry, node.name(), blocks, !recorded);
      if (collision == null) {
        blocks.forEach((family, block) -> entry.sets.get(family).occupy(block));
        record(node.name(), entry, blocks);
        return new PodCidrAllocation(node.name(), entry.name(), blocks.get(IpFamily.IPV4),
            blocks.get(IpFamily.IPV6), i + 1);
      }
      if (firstCollision == null) {
        firstCollision = collision;
      }
    }
    throw new PodCidrAllocationException(Reason.COLLISION, node.name(), fitting.size(), firstCollision
        + (fitting.size() > 1 ? " (" + fitting.size() + " ClusterCIDRs fit, none has it free)" : ""));
  }

  /** Frees the node's blocks. Returns false when it held none; releasing twice is fine. */
  public synchronized boolean release(String nodeName) {
    Held held = nodes.remove(nodeName);
    if (held == null) {
      return false;
    }
    Entry entry = held.entry();
    for (Map.Entry<IpFamily, CidrSet> e : entry.sets.entrySet()) {
      Cidr block = held.block(e.getKey());
      heldBlocks.get(e.getKey()).remove(block.network());
      e.getValue().release(block);
      reoccupyHeldAndReserved(entry, e.getValue(), block);
    }
    entry.nodeNames.remove(nodeName);
    return true;
  }

  public synchronized Optional<PodCidrAllocation> allocationOf(String nodeName) {
    Held held = nodes.get(nodeName);
    return held == null ? Optional.empty() : Optional.of(held.allocation(nodeName, 0));
  }

  // ---- internals -------------------------------------------------------------------------

  /** Non-terminating ClusterCIDRs that serve the node, best first; fallbacks last. */
  private List<Entry> candidates(NodeView node, List<Entry> terminatingMatches) {
    long thisLookup = ++lookup;
    List<Ranked> ranked = new ArrayList<>();
    selectorIndex.forEachCandidate(node, entry -> {
      if (entry.seenIn == thisLookup) {
        return;
      }
      entry.seenIn = thisLookup;
      int score = entry.spec.nodeSelector().matchScore(node);
      if (score < 0) {
        return;
      }
      if (entry.terminating) {
        terminatingMatches.add(entry);
      } else {
        ranked.add(new Ranked(entry, score));
      }
    });
    ranked.sort(Comparator.comparingInt((Ranked r) -> -r.score()).thenComparing(Ranked::entry, TIE_BREAK));
    List<Entry> order = new ArrayList<>(ranked.size() + fallbacks.size());
    ranked.forEach(r -> order.add(r.entry()));
    for (Entry fallback : fallbacks) {
      if (fallback.terminating) {
        terminatingMatches.add(fallback);
      } else {
        order.add(fallback);
      }
    }
    return order;
  }

  /** A free block in every family of the entry, or the first family without one. */
  private Pick pick(Entry entry) {
    Map<IpFamily, Long> indexes = new EnumMap<>(IpFamily.class);
    for (Map.Entry<IpFamily, CidrSet> e : entry.sets.entrySet()) {
      long index = freeBlock(e.getValue());
      if (index < 0) {
        return new Pick(Map.of(), e.getKey());
      }
      indexes.put(e.getKey(), index);
    }
    return new Pick(indexes, null);
  }

  /**
   * The first block from the set's next candidate on, wrapping, that is free in the set and
   * overlaps no block held through another ClusterCIDR; -1 when there is none.
   */
  private long freeBlock(CidrSet set) {
    if (set.free() == 0) {
      return -1;
    }
    long start = set.nextCandidate();
    long found = freeBlock(set, start, set.blockCount());
    return found >= 0 || start == 0 ? found : freeBlock(set, 0, start);
  }

  private long freeBlock(CidrSet set, long from, long to) {
    TreeMap<IpAddress, HeldBlock> held = heldBlocks.get(set.family());
    long index = from;
    while (index < to) {
      long free = set.nextFreeIndex(index);
      if (free < 0 || free >= to) {
        return -1;
      }
      HeldBlock conflict = overlappingHeld(held, set.blockAt(free));
      if (conflict == null) {
        return free;
      }
      // Jump past the held block: each step passes one, so the scan ends.
      index = set.indexRange(conflict.block())[1] + 1;
    }
    return -1;
  }

  /** A held block that overlaps {@code block}, or null. Held blocks never overlap each other. */
  private static HeldBlock overlappingHeld(TreeMap<IpAddress, HeldBlock> held, Cidr block) {
    Map.Entry<IpAddress, HeldBlock> before = held.floorEntry(Blocks.lastAddress(block));
    if (before == null) {
      return null;
    }
    Cidr candidate = before.getValue().block();
    return Blocks.lastAddress(candidate).compareTo(block.network()) >= 0 ? before.getValue() : null;
  }

  private void record(String nodeName, Entry entry, Map<IpFamily, Cidr> blocks) {
    blocks.forEach((family, block) ->
        heldBlocks.get(family).put(block.network(), new HeldBlock(block, nodeName, entry)));
    entry.nodeNames.add(nodeName);
    nodes.put(nodeName, new Held(entry, blocks.get(IpFamily.IPV4), blocks.get(IpFamily.IPV6)));
  }

  private static boolean fits(Entry entry, Map<IpFamily, Cidr> blocks) {
    if (!entry.sets.keySet().equals(blocks.keySet())) {
      return false;
    }
    for (Map.Entry<IpFamily, Cidr> e : blocks.entrySet()) {
      CidrSet set = entry.sets.get(e.getKey());
      Cidr block = e.getValue();
      if (block.prefixLength() != set.nodePrefixLength() || !set.clusterCidr().contains(block)) {
        return false;
      }
    }
    return true;
  }

  /** Why the blocks cannot be the node's: held by another node, or (when asked) occupied otherwise. */
  private String collision(Entry entry, String nodeName, Map<IpFamily, Cidr> blocks, boolean occupiedCounts) {
    for (Map.Entry<IpFamily, Cidr> e : blocks.entrySet()) {
      Cidr block = e.getValue();
      HeldBlock holder = overlappingHeld(heldBlocks.get(e.getKey()), block);
      if (holder != null) {
        String what = holder.block().equals(block) ? "is already allocated to" : "overlaps " + holder.block() + " of";
        return "pod CIDR " + block + " of node " + nodeName + " " + what + " node " + holder.node()
            + " (ClusterCIDR " + holder.entry().name() + ")";
      }
      if (occupiedCounts && entry.sets.get(e.getKey()).isOccupied(block)) {
        String reservedRange = reserved.get(e.getKey()).stream().filter(r -> r.overlaps(block))
            .map(Cidr::toString).findFirst().orElse(null);
        return "pod CIDR " + block + " of node " + nodeName + (reservedRange != null
            ? " overlaps the reserved range " + reservedRange : " is already occupied in ClusterCIDR " + entry.name());
      }
    }
    return null;
  }

  private static Map<IpFamily, Cidr> byFamily(NodeView node, List<Cidr> podCidrs) {
    if (podCidrs == null || podCidrs.isEmpty() || podCidrs.size() > 2) {
      throw new IllegalArgumentException("node " + node.name() + " has pod CIDRs " + podCidrs
          + ": expected one, or two of different IP families");
    }
    Map<IpFamily, Cidr> blocks = new EnumMap<>(IpFamily.class);
    for (Cidr cidr : podCidrs) {
      if (blocks.put(cidr.family(), cidr) != null) {
        throw new IllegalArgumentException("node " + node.name() + " has pod CIDRs " + podCidrs
            + ": at most one per IP family");
      }
    }
    return blocks;
  }

  private static Map<IpFamily, Cidr> blocksOf(Held held) {
    Map<IpFamily, Cidr> blocks = new EnumMap<>(IpFamily.class);
    for (IpFamily family : held.entry().sets.keySet()) {
      blocks.put(family, held.block(family));
    }
    return blocks;
  }

  private PodCidrAllocationException noClusterCidrFor(NodeView node, List<Entry> terminatingMatches) {
    StringBuilder message = new StringBuilder("node " + node.name() + " gets no pod CIDRs: no ClusterCIDR's"
        + " nodeSelector matches its labels " + describeLabels(node) + " and there is no fallback ClusterCIDR"
        + " (one without nodeSelector)");
    if (!terminatingMatches.isEmpty()) {
      message.append("; ").append(someNames(terminatingMatches.stream().map(Entry::name).toList()))
          .append(" would serve it but ").append(terminatingMatches.size() == 1 ? "is" : "are")
          .append(" being deleted");
    }
    return new PodCidrAllocationException(Reason.NO_MATCHING_CLUSTER_CIDR, node.name(), 0,
        message.append("; add a ClusterCIDR that selects it").toString());
  }

  private static String describeLabels(NodeView node) {
    if (node.labels().isEmpty()) {
      return "{}";
    }
    List<String> pairs = new TreeMap<>(node.labels()).entrySet().stream()
        .map(e -> e.getKey() + "=" + e.getValue()).toList();
    return "{" + String.join(", ", limit(pairs, LABELS_IN_MESSAGES)) + "}";
  }

  private static String someNames(Iterable<String> names) {
    List<String> sorted = new ArrayList<>();
    names.forEach(sorted::add);
    sorted.sort(null);
    return String.join(", ", limit(sorted));
  }

  private static List<String> limit(List<String> items) {
    return limit(items, NAMES_IN_MESSAGES);
  }

  private static List<String> limit(List<String> items, int max) {
    if (items.size() <= max) {
      return items;
    }
    List<String> shown = new ArrayList<>(items.subList(0, max));
    shown.add("and " + (items.size() - max) + " more");
    return shown;
  }

  private static String describe(ClusterCidr spec) {
    StringBuilder text = new StringBuilder("{");
    if (spec.ipv4() != null) {
      text.append("ipv4 ").append(spec.ipv4()).append(", ");
    }
    if (spec.ipv6() != null) {
      text.append("ipv6 ").append(spec.ipv6()).append(", ");
    }
    text.append("perNodeHostBits ").append(spec.perNodeHostBits()).append(", nodeSelector ")
        .append(spec.isFallback() ? "none" : spec.nodeSelector().toString());
    return text.append('}').toString();
  }
}
