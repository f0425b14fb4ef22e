package io.subrange.allocator.podcidr;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.podcidr.PodCidrAllocationException.Reason;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * The allocator against a brute-force reference: every ClusterCIDR's selector evaluated for
 * every node, every block of every range checked against every held block and reserved range.
 * Ranges overlap on purpose, and are small so that they fill up.
 */
class ClusterCidrAllocatorProperties {

  static final List<Cidr> V4_RANGES =
      cidrs("10.0.0.0/24", "10.0.0.0/25", "10.0.0.128/26", "10.0.1.0/26", "10.0.0.64/27");
  static final List<Cidr> V6_RANGES = cidrs("fd00::/120", "fd00::/121", "fd00::80/122", "fd00::100/122", "fd00::/123");
  static final List<Cidr> RESERVABLE =
      cidrs("10.0.0.0/28", "10.0.0.96/27", "10.0.1.8/29", "fd00::/124", "fd00::40/122");
  static final int NODES = 8;

  static List<Cidr> cidrs(String... texts) {
    return Arrays.stream(texts).map(Cidr::parse).toList();
  }

  /** 0 IPv4, 1 IPv6, 2 dual-stack; selector null for a fallback. */
  record SpecShape(NodeSelector selector, int bits, int v4, int v6, int mode) {
    ClusterCidr toClusterCidr(String name) {
      Cidr ipv4 = mode != 1 ? V4_RANGES.get(v4) : null;
      Cidr ipv6 = mode != 0 ? V6_RANGES.get(v6) : null;
      int maxBits = Math.min(ipv4 == null ? 99 : ipv4.hostBits(), ipv6 == null ? 99 : ipv6.hostBits());
      return new ClusterCidr(name, selector, Math.min(bits, maxBits), ipv4, ipv6);
    }
  }

  enum Kind { ALLOCATE, PREVIEW, RELEASE, OCCUPY, RESERVE, UNRESERVE, TERMINATE, REMOVE, ADD }

  record Op(Kind kind, int node, int spec, long pick) {
  }

  @Provide
  Arbitrary<List<SpecShape>> specs() {
    Arbitrary<NodeSelector> selector = Arbitraries.frequencyOf(
        Tuple.of(1, Arbitraries.<NodeSelector>just(null)), Tuple.of(3, NodeSelectorProperties.selectors()));
    return Combinators.combine(selector, Arbitraries.integers().between(4, 6), Arbitraries.integers().between(0, 4),
            Arbitraries.integers().between(0, 4), Arbitraries.integers().between(0, 2))
        .as(SpecShape::new).list().ofMinSize(1).ofMaxSize(6);
  }

  @Provide
  Arbitrary<List<NodeView>> nodes() {
    return NodeSelectorProperties.nodes().list().ofSize(NODES)
        .map(list -> {
          List<NodeView> named = new ArrayList<>();
          for (int i = 0; i < list.size(); i++) {
            named.add(new NodeView("n" + i, list.get(i).labels()));
          }
          return named;
        });
  }

  @Provide
  Arbitrary<List<Op>> operations() {
    Arbitrary<Kind> kind = Arbitraries.frequency(Tuple.of(10, Kind.ALLOCATE), Tuple.of(2, Kind.PREVIEW),
        Tuple.of(5, Kind.RELEASE), Tuple.of(3, Kind.OCCUPY), Tuple.of(1, Kind.RESERVE), Tuple.of(1, Kind.UNRESERVE),
        Tuple.of(1, Kind.TERMINATE), Tuple.of(1, Kind.REMOVE), Tuple.of(1, Kind.ADD));
    return Combinators.combine(kind, Arbitraries.integers().between(0, NODES - 1), Arbitraries.integers().between(0, 5),
        Arbitraries.longs().between(0, 1000)).as(Op::new).list().ofMaxSize(120);
  }

  @Property(tries = 400)
  void agreesWithTheReference(@ForAll("specs") List<SpecShape> shapes, @ForAll("nodes") List<NodeView> nodes,
      @ForAll("operations") List<Op> ops) {
    List<ClusterCidr> all = new ArrayList<>();
    for (int i = 0; i < shapes.size(); i++) {
      all.add(shapes.get(i).toClusterCidr("cc" + i));
    }
    ClusterCidrAllocator allocator = new ClusterCidrAllocator();
    Reference ref = new Reference();
    for (ClusterCidr spec : all) {
      assertThat(allocator.add(spec)).isTrue();
      ref.specs.put(spec.name(), spec);
    }

    for (Op op : ops) {
      NodeView node = nodes.get(op.node());
      ClusterCidr spec = all.get(op.spec() % all.size());
      switch (op.kind()) {
        case ALLOCATE, PREVIEW -> checkAllocate(allocator, ref, node, op.kind() == Kind.ALLOCATE);
        case RELEASE -> {
          boolean held = ref.held.remove(node.name()) != null;
          assertThat(allocator.release(node.name())).isEqualTo(held);
          assertThat(allocator.release(node.name())).as("release is idempotent").isFalse();
        }
        case OCCUPY -> checkOccupy(allocator, ref, node, spec, op.pick());
        case RESERVE -> {
          Cidr range = RESERVABLE.get((int) (op.pick() % RESERVABLE.size()));
          assertThat(allocator.reserve(range)).isEqualTo(!ref.reserved.contains(range));
          if (!ref.reserved.contains(range)) {
            ref.reserved.add(range);
          }
        }
        case UNRESERVE -> {
          Cidr range = RESERVABLE.get((int) (op.pick() % RESERVABLE.size()));
          assertThat(allocator.unreserve(range)).isEqualTo(ref.reserved.remove(range));
        }
        case TERMINATE -> {
          assertThat(allocator.markTerminating(spec.name())).isEqualTo(ref.specs.containsKey(spec.name()));
          if (ref.specs.containsKey(spec.name())) {
            ref.terminating.add(spec.name());
          }
        }
        case REMOVE -> {
          if (!ref.specs.containsKey(spec.name())) {
            assertThat(allocator.remove(spec.name())).isFalse();
          } else if (ref.held.values().stream().anyMatch(a -> a.clusterCidr().equals(spec.name()))) {
            assertThatThrownBy(() -> allocator.remove(spec.name())).isInstanceOf(IllegalStateException.class);
          } else {
            assertThat(allocator.remove(spec.name())).isTrue();
            ref.specs.remove(spec.name());
            ref.terminating.remove(spec.name());
          }
        }
        case ADD -> {
          assertThat(allocator.add(spec)).isEqualTo(!ref.specs.containsKey(spec.name()));
          ref.specs.put(spec.name(), spec);
        }
      }
      checkInvariants(allocator, ref, nodes);
    }
  }

  private static void checkAllocate(ClusterCidrAllocator allocator, Reference ref, NodeView node, boolean commit) {
    PodCidrAllocation existing = ref.held.get(node.name());
    if (existing != null) {
      PodCidrAllocation again = commit ? allocator.allocate(node) : allocator.preview(node);
      assertThat(again.podCidrs()).isEqualTo(existing.podCidrs());
      assertThat(again.clusterCidrsTried()).isZero();
      return;
    }
    List<ClusterCidr> order = ref.order(node);
    int expected = -1;
    for (int i = 0; i < order.size() && expected < 0; i++) {
      if (ref.hasRoom(order.get(i))) {
        expected = i;
      }
    }
    List<ClusterCidrUsage> before = allocator.usage();
    if (expected < 0) {
      PodCidrAllocationException e = catchThrowableOfType(PodCidrAllocationException.class,
          () -> {
            if (commit) {
              allocator.allocate(node);
            } else {
              allocator.preview(node);
            }
          });
      assertThat(e).as("no ClusterCIDR has room for " + node).isNotNull();
      assertThat(e.reason()).isEqualTo(order.isEmpty() ? Reason.NO_MATCHING_CLUSTER_CIDR : Reason.ALL_MATCHING_FULL);
      assertThat(e.clusterCidrsTried()).isEqualTo(order.size());
      assertThat(e.getMessage()).contains("node " + node.name());
      assertThat(allocator.usage()).as("a refused node takes nothing, not even one family").isEqualTo(before);
      return;
    }
    ClusterCidr chosen = order.get(expected);
    PodCidrAllocation got = commit ? allocator.allocate(node) : allocator.preview(node);
    assertThat(got.clusterCidr()).as("best ClusterCIDR with room for " + node).isEqualTo(chosen.name());
    assertThat(got.clusterCidrsTried()).isEqualTo(expected + 1);
    for (IpFamily family : IpFamily.values()) {
      Cidr block = got.podCidr(family);
      assertThat(block != null).as("one block per family of the ClusterCIDR").isEqualTo(chosen.range(family) != null);
      if (block != null) {
        assertThat(ref.fits(chosen, family, block)).as(block + " is a node block of " + chosen.name()).isTrue();
        assertThat(ref.available(block)).as(block + " was free").isTrue();
      }
    }
    if (commit) {
      ref.held.put(node.name(), got);
    } else {
      assertThat(allocator.usage()).as("a preview changes nothing").isEqualTo(before);
    }
  }

  private static void checkOccupy(ClusterCidrAllocator allocator, Reference ref, NodeView node, ClusterCidr spec,
      long pick) {
    List<Cidr> blocks = new ArrayList<>();
    for (IpFamily family : spec.families()) {
      List<Cidr> all = ref.blocksOf(spec.range(family), spec.nodePrefixLength(family));
      blocks.add(all.get((int) (pick % all.size())));
    }
    PodCidrAllocation existing = ref.held.get(node.name());
    if (existing != null) {
      if (existing.podCidrs().equals(blocks)) {
        assertThat(allocator.occupy(node, blocks).clusterCidrsTried()).isZero();
      } else {
        assertThat(catchThrowableOfType(PodCidrAllocationException.class, () -> allocator.occupy(node, blocks))
            .reason()).isEqualTo(Reason.COLLISION);
      }
      return;
    }
    List<ClusterCidr> fitting = ref.specs.values().stream()
        .filter(s -> s.families().equals(Set.copyOf(blocks.stream().map(Cidr::family).toList())))
        .filter(s -> blocks.stream().allMatch(b -> ref.fits(s, b.family(), b)))
        .sorted(Comparator.comparingInt((ClusterCidr s) -> -ref.score(s, node)).thenComparing(Reference.TIE_BREAK))
        .toList();
    boolean free = blocks.stream().allMatch(ref::available);
    if (fitting.isEmpty() || !free) {
      PodCidrAllocationException e = catchThrowableOfType(PodCidrAllocationException.class,
          () -> allocator.occupy(node, blocks));
      assertThat(e).isNotNull();
      assertThat(e.reason()).isEqualTo(fitting.isEmpty() ? Reason.NOT_IN_ANY_CLUSTER_CIDR : Reason.COLLISION);
      return;
    }
    PodCidrAllocation got = allocator.occupy(node, blocks);
    assertThat(got.clusterCidr()).isEqualTo(fitting.get(0).name());
    assertThat(got.podCidrs()).isEqualTo(blocks);
    ref.held.put(node.name(), got);
  }

  private static void checkInvariants(ClusterCidrAllocator allocator, Reference ref, List<NodeView> nodes) {
    List<Cidr> heldBlocks = new ArrayList<>();
    for (NodeView node : nodes) {
      PodCidrAllocation model = ref.held.get(node.name());
      assertThat(allocator.allocationOf(node.name()).map(PodCidrAllocation::podCidrs).orElse(null))
          .isEqualTo(model == null ? null : model.podCidrs());
      if (model != null) {
        heldBlocks.addAll(model.podCidrs());
      }
    }
    for (int i = 0; i < heldBlocks.size(); i++) {
      for (int j = i + 1; j < heldBlocks.size(); j++) {
        assertThat(heldBlocks.get(i).overlaps(heldBlocks.get(j)))
            .as("no block handed out twice: " + heldBlocks.get(i) + " / " + heldBlocks.get(j)).isFalse();
      }
    }
    assertThat(allocator.usage()).hasSize(ref.specs.size());
    for (ClusterCidrUsage usage : allocator.usage()) {
      ClusterCidr spec = ref.specs.get(usage.name());
      assertThat(usage.terminating()).isEqualTo(ref.terminating.contains(spec.name()));
      assertThat(usage.nodes()).isEqualTo(
          (int) ref.held.values().stream().filter(a -> a.clusterCidr().equals(spec.name())).count());
      boolean held = ref.held.values().stream().anyMatch(a -> a.clusterCidr().equals(spec.name()));
      assertThat(usage.inUse()).as("in use, against the model").isEqualTo(held);
      assertThat(allocator.isInUse(spec.name())).isEqualTo(held);
      for (IpFamily family : IpFamily.values()) {
        ClusterCidrUsage.FamilyUsage counts = family == IpFamily.IPV4 ? usage.ipv4() : usage.ipv6();
        if (spec.range(family) == null) {
          assertThat(counts).isNull();
          continue;
        }
        List<Cidr> blocks = ref.blocksOf(spec.range(family), spec.nodePrefixLength(family));
        long occupied = blocks.stream().filter(b -> ref.heldBy(spec.name(), b) || ref.touchesReserved(b)).count();
        assertThat(counts.total()).isEqualTo(blocks.size());
        assertThat(counts.allocated()).as(spec.name() + " " + family + " allocated").isEqualTo(occupied);
        assertThat(counts.free()).as("free, against the model").isEqualTo(blocks.size() - occupied);
      }
    }
  }

  /** The allocator's rules, written out the slow way. */
  static final class Reference {
    static final Comparator<ClusterCidr> TIE_BREAK = Comparator
        .comparingLong(Reference::totalBlocks)
        .thenComparingInt(ClusterCidr::perNodeHostBits)
        .thenComparing(ClusterCidr::name);

    final Map<String, ClusterCidr> specs = new HashMap<>();
    final Set<String> terminating = new HashSet<>();
    final Map<String, PodCidrAllocation> held = new HashMap<>();
    final List<Cidr> reserved = new ArrayList<>();

    static long totalBlocks(ClusterCidr spec) {
      return spec.families().stream()
          .mapToLong(f -> 1L << (spec.nodePrefixLength(f) - spec.range(f).prefixLength())).min().orElseThrow();
    }

    int score(ClusterCidr spec, NodeView node) {
      return spec.isFallback() ? 0 : spec.nodeSelector().matchScore(node);
    }

    /** Non-terminating ClusterCIDRs that serve the node, best first (fallbacks score 0: last). */
    List<ClusterCidr> order(NodeView node) {
      return specs.values().stream()
          .filter(s -> !terminating.contains(s.name()))
          .filter(s -> score(s, node) >= 0)
          .sorted(Comparator.comparingInt((ClusterCidr s) -> -score(s, node)).thenComparing(TIE_BREAK))
          .toList();
    }

    boolean hasRoom(ClusterCidr spec) {
      for (IpFamily family : spec.families()) {
        if (blocksOf(spec.range(family), spec.nodePrefixLength(family)).stream().noneMatch(this::available)) {
          return false;
        }
      }
      return true;
    }

    boolean available(Cidr block) {
      return !touchesReserved(block)
          && held.values().stream().flatMap(a -> a.podCidrs().stream()).noneMatch(b -> b.overlaps(block));
    }

    boolean touchesReserved(Cidr block) {
      return reserved.stream().anyMatch(r -> r.overlaps(block));
    }

    boolean heldBy(String clusterCidr, Cidr block) {
      return held.values().stream().anyMatch(a -> a.clusterCidr().equals(clusterCidr) && a.podCidrs().contains(block));
    }

    boolean fits(ClusterCidr spec, IpFamily family, Cidr block) {
      Cidr range = spec.range(family);
      return range != null && block.prefixLength() == spec.nodePrefixLength(family) && range.contains(block);
    }

    List<Cidr> blocksOf(Cidr range, int prefix) {
      List<Cidr> blocks = new ArrayList<>();
      long count = 1L << (prefix - range.prefixLength());
      for (long i = 0; i < count; i++) {
        blocks.add(Cidr.containing(range.network().plus(i << (range.family().bits() - prefix)), prefix));
      }
      return blocks;
    }
  }
}
