package io.subrange.allocator.podcidr;

import static io.subrange.allocator.podcidr.NodeSelectorRequirement.doesNotExist;
import static io.subrange.allocator.podcidr.NodeSelectorRequirement.exists;
import static io.subrange.allocator.podcidr.NodeSelectorRequirement.in;
import static io.subrange.allocator.podcidr.NodeSelectorRequirement.notIn;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.podcidr.PodCidrAllocationException.Reason;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class ClusterCidrAllocatorTest {

  private final ClusterCidrAllocator allocator = new ClusterCidrAllocator();

  private static NodeView node(String name, String... keyValues) {
    return new NodeView(name, labels(keyValues));
  }

  private static Map<String, String> labels(String... keyValues) {
    Map<String, String> labels = new HashMap<>();
    for (int i = 0; i < keyValues.length; i += 2) {
      labels.put(keyValues[i], keyValues[i + 1]);
    }
    return labels;
  }

  private static NodeSelector selecting(String... keyValues) {
    return NodeSelector.requiringLabels(labels(keyValues));
  }

  private static Cidr cidr(String text) {
    return Cidr.parse(text);
  }

  private String allocatedFrom(NodeView node) {
    return allocator.allocate(node).clusterCidr();
  }

  // ---- KEP-2593 examples -------------------------------------------------------------------

  @Test
  void kepTieBreakExampleIsTriedInOrder() {
    // KEP-2593 "Expected Behavior": the four ClusterCIDRs in the order the KEP sorts them.
    allocator.add(ClusterCidr.ipv4("d-default", null, 6, "10.0.0.0/8"));
    allocator.add(ClusterCidr.ipv4("c-n1-large", selecting("node", "n1"), 4, "192.168.128.0/17"));
    allocator.add(ClusterCidr.ipv4("b-n1-small", selecting("node", "n1"), 4, "192.168.64.0/20"));
    allocator.add(ClusterCidr.ipv4("a-n1-rack1", selecting("node", "n1", "rack", "rack1"), 6, "10.5.0.0/16"));
    NodeView n1 = node("n1", "node", "n1", "rack", "rack1");

    PodCidrAllocation first = allocator.preview(n1);
    assertThat(first.clusterCidr()).isEqualTo("a-n1-rack1");
    assertThat(first.podCidrs()).containsExactly(cidr("10.5.0.0/26"));
    assertThat(first.clusterCidrsTried()).isEqualTo(1);

    allocator.markTerminating("a-n1-rack1");
    assertThat(allocator.preview(n1).clusterCidr()).as("256 blocks before 2048").isEqualTo("b-n1-small");
    allocator.markTerminating("b-n1-small");
    assertThat(allocator.preview(n1).clusterCidr()).isEqualTo("c-n1-large");
    allocator.markTerminating("c-n1-large");
    assertThat(allocator.preview(n1).clusterCidr()).as("the fallback last").isEqualTo("d-default");
  }

  @Test
  void kepAllocationExample() {
    // KEP-2593 "Example: Allocations".
    allocator.add(ClusterCidr.ipv4("default", null, 8, "10.0.0.0/8"));
    allocator.add(ClusterCidr.ipv4("any-node", null, 8, "172.16.0.0/14"));
    allocator.add(ClusterCidr.ipv4("n1", selecting("node", "n1"), 6, "10.0.0.0/8"));
    allocator.add(ClusterCidr.ipv4("n2", selecting("node", "n2"), 6, "192.168.0.0/16"));
    allocator.add(ClusterCidr.dualStack("n3", selecting("node", "n3"), 6, "5.2.0.0/16", "fd12:3456:789a:1::/64"));

    assertThat(allocator.allocate(node("n1", "node", "n1")).podCidrs()).containsExactly(cidr("10.0.0.0/26"));
    assertThat(allocator.allocate(node("n2", "node", "n2")).podCidrs()).containsExactly(cidr("192.168.0.0/26"));
    assertThat(allocator.allocate(node("n3", "node", "n3")).podCidrs())
        .containsExactly(cidr("5.2.0.0/26"), cidr("fd12:3456:789a:1::/122"));
    PodCidrAllocation n4 = allocator.allocate(node("n4", "node", "n4"));
    assertThat(n4.podCidrs()).as("of the two fallbacks, the one with fewer blocks")
        .containsExactly(cidr("172.16.0.0/24"));
    assertThat(n4.clusterCidrsTried()).isEqualTo(1);
  }

  // ---- ordering ----------------------------------------------------------------------------

  @Test
  void aSelectorPinningMoreLabelsWinsOverSmallerRanges() {
    allocator.add(ClusterCidr.ipv4("zone", selecting("zone", "a"), 4, "10.1.0.0/28"));
    allocator.add(ClusterCidr.ipv4("zone-and-rack", selecting("zone", "a", "rack", "r1"), 8, "10.2.0.0/16"));

    assertThat(allocatedFrom(node("n1", "zone", "a", "rack", "r1"))).isEqualTo("zone-and-rack");
    assertThat(allocatedFrom(node("n2", "zone", "a", "rack", "r2"))).isEqualTo("zone");
  }

  @Test
  void fewerAllocatableMeansFewerBlocksInTotalNotFewerFree() {
    allocator.add(ClusterCidr.ipv4("sixteen", selecting("pool", "a"), 4, "10.1.0.0/24"));
    allocator.add(ClusterCidr.ipv4("thirty-two", selecting("pool", "a"), 4, "10.2.0.0/23"));
    // thirty-two now has 8 free blocks, sixteen has 16; upstream ranks by total (MaxCIDRs).
    allocator.reserve(cidr("10.2.0.0/24"));
    allocator.reserve(cidr("10.2.1.0/25"));
    assertThat(allocator.usage("thirty-two").orElseThrow().ipv4().free()).isEqualTo(8);

    assertThat(allocatedFrom(node("n1", "pool", "a"))).isEqualTo("sixteen");
  }

  @Test
  void thenFewerAddressesPerNodeThenTheName() {
    allocator.add(ClusterCidr.ipv4("b-small-blocks", selecting("pool", "a"), 4, "10.1.0.0/24"));
    allocator.add(ClusterCidr.ipv4("a-large-blocks", selecting("pool", "a"), 8, "10.2.0.0/20"));
    allocator.add(ClusterCidr.ipv4("c-small-blocks", selecting("pool", "a"), 4, "10.3.0.0/24"));

    assertThat(allocatedFrom(node("n1", "pool", "a"))).as("16 blocks each; 16 addresses before 256")
        .isEqualTo("b-small-blocks");
    allocator.markTerminating("b-small-blocks");
    assertThat(allocatedFrom(node("n2", "pool", "a"))).as("same size: by name").isEqualTo("c-small-blocks");
  }

  @Test
  void theBestOneBeingFullTheNextIsTriedAndCounted() {
    allocator.add(ClusterCidr.ipv4("first", selecting("pool", "a"), 4, "10.1.0.0/27"));   // 2 blocks
    allocator.add(ClusterCidr.ipv4("second", selecting("pool", "a"), 4, "10.2.0.0/26"));  // 4 blocks
    allocator.add(ClusterCidr.ipv4("fallback", null, 4, "10.9.0.0/24"));

    assertThat(allocator.allocate(node("n1", "pool", "a")).clusterCidrsTried()).isEqualTo(1);
    allocator.allocate(node("n2", "pool", "a"));
    PodCidrAllocation third = allocator.allocate(node("n3", "pool", "a"));

    assertThat(third.clusterCidr()).isEqualTo("second");
    assertThat(third.podCidrs()).containsExactly(cidr("10.2.0.0/28"));
    assertThat(third.clusterCidrsTried()).isEqualTo(2);
    for (int i = 4; i <= 6; i++) {
      allocator.allocate(node("n" + i, "pool", "a"));
    }
    PodCidrAllocation seventh = allocator.allocate(node("n7", "pool", "a"));
    assertThat(seventh.clusterCidr()).as("matching ones full: the fallback").isEqualTo("fallback");
    assertThat(seventh.clusterCidrsTried()).isEqualTo(3);
  }

  @Test
  void theFallbackServesNodesNoSelectorMatches() {
    allocator.add(ClusterCidr.ipv4("gpu", NodeSelector.of(NodeSelectorTerm.of(exists("gpu"))), 8, "10.1.0.0/16"));
    allocator.add(ClusterCidr.ipv4("fallback", null, 8, "10.0.0.0/16"));

    assertThat(allocatedFrom(node("plain"))).isEqualTo("fallback");
    assertThat(allocatedFrom(node("gpu-node", "gpu", "a100"))).isEqualTo("gpu");
  }

  @Test
  void anInRequirementMatchesAnyOfItsValues() {
    allocator.add(ClusterCidr.ipv4("east", NodeSelector.of(NodeSelectorTerm.of(in("zone", "e1", "e2", "e3"))), 8,
        "10.1.0.0/16"));
    allocator.add(ClusterCidr.ipv4("fallback", null, 8, "10.0.0.0/16"));

    assertThat(allocatedFrom(node("n1", "zone", "e3"))).isEqualTo("east");
    assertThat(allocatedFrom(node("n2", "zone", "w1"))).isEqualTo("fallback");
  }

  @Test
  void selectorsThatCannotBeIndexedAreStillEvaluated() {
    NodeSelector notInZoneA = NodeSelector.of(NodeSelectorTerm.of(notIn("zone", "a")));
    NodeSelector byName = NodeSelector.of(NodeSelectorTerm.forNodeNamed("special"));
    allocator.add(ClusterCidr.ipv4("not-zone-a", notInZoneA, 8, "10.1.0.0/16"));
    allocator.add(ClusterCidr.ipv4("by-name", byName, 8, "10.2.0.0/16"));
    allocator.add(ClusterCidr.ipv4("fallback", null, 8, "10.0.0.0/16"));

    assertThat(allocatedFrom(node("n1"))).isEqualTo("not-zone-a");
    assertThat(allocatedFrom(node("n2", "zone", "a"))).isEqualTo("fallback");
    assertThat(allocatedFrom(node("special", "zone", "a"))).isEqualTo("by-name");
  }

  // ---- failures ----------------------------------------------------------------------------

  @Test
  void noMatchingClusterCidrNamesTheNodeAndItsLabels() {
    allocator.add(ClusterCidr.ipv4("gpu", selecting("gpu", "yes"), 8, "10.1.0.0/16"));

    assertThatThrownBy(() -> allocator.allocate(node("worker-7", "zone", "b")))
        .isInstanceOfSatisfying(PodCidrAllocationException.class, e -> {
          assertThat(e.reason()).isEqualTo(Reason.NO_MATCHING_CLUSTER_CIDR);
          assertThat(e.nodeName()).isEqualTo("worker-7");
          assertThat(e.clusterCidrsTried()).isZero();
        })
        .hasMessage("node worker-7 gets no pod CIDRs: no ClusterCIDR's nodeSelector matches its labels {zone=b} and"
            + " there is no fallback ClusterCIDR (one without nodeSelector); add a ClusterCIDR that selects it");
  }

  @Test
  void aTerminatingClusterCidrGivesNothingNewAndIsNamedInTheRefusal() {
    allocator.add(ClusterCidr.ipv4("pool-a", selecting("pool", "a"), 8, "10.1.0.0/16"));
    allocator.allocate(node("n1", "pool", "a"));
    allocator.markTerminating("pool-a");

    assertThatThrownBy(() -> allocator.allocate(node("n2", "pool", "a")))
        .hasMessageEndingWith("; pool-a would serve it but is being deleted; add a ClusterCIDR that selects it");
    assertThat(allocator.allocationOf("n1")).isPresent();
    assertThat(allocator.isInUse("pool-a")).isTrue();
    assertThat(allocator.usage("pool-a").orElseThrow().terminating()).isTrue();

    assertThatThrownBy(() -> allocator.remove("pool-a"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("ClusterCIDR pool-a cannot be removed: 1 node(s) still hold pod CIDRs from it (n1); mark it"
            + " terminating and remove it once those nodes are deleted");
    assertThat(allocator.release("n1")).isTrue();
    assertThat(allocator.isInUse("pool-a")).isFalse();
    assertThat(allocator.remove("pool-a")).isTrue();
    assertThat(allocator.remove("pool-a")).isFalse();
  }

  @Test
  void allMatchingFullNamesEachAndWhichFamilyRanOut() {
    allocator.add(ClusterCidr.ipv4("tiny", selecting("pool", "a"), 4, "10.1.0.0/28"));
    allocator.add(ClusterCidr.dualStack("dual", selecting("pool", "a"), 4, "10.2.0.0/24", "fd00::/124"));
    allocator.allocate(node("n1", "pool", "a"));
    allocator.allocate(node("n2", "pool", "a"));

    assertThatThrownBy(() -> allocator.allocate(node("n3", "pool", "a")))
        .isInstanceOfSatisfying(PodCidrAllocationException.class, e -> {
          assertThat(e.reason()).isEqualTo(Reason.ALL_MATCHING_FULL);
          assertThat(e.clusterCidrsTried()).isEqualTo(2);
        })
        .hasMessage("node n3 gets no pod CIDRs: every ClusterCIDR that can serve it is full (dual (IPv6 full),"
            + " tiny (IPv4 full)); add a ClusterCIDR that selects it, or delete nodes that hold blocks");
  }

  // ---- dual-stack --------------------------------------------------------------------------

  @Test
  void dualStackGivesBothFamiliesOrNeither() {
    allocator.add(ClusterCidr.dualStack("dual", selecting("pool", "a"), 4, "10.0.0.0/24", "fd00::/124"));

    PodCidrAllocation first = allocator.allocate(node("n1", "pool", "a"));
    assertThat(first.podCidrs()).containsExactly(cidr("10.0.0.0/28"), cidr("fd00::/124"));
    assertThat(first.podCidr(IpFamily.IPV6)).isEqualTo(cidr("fd00::/124"));

    assertThatThrownBy(() -> allocator.allocate(node("n2", "pool", "a")))
        .isInstanceOf(PodCidrAllocationException.class);
    assertThat(allocator.usage("dual").orElseThrow().ipv4().allocated())
        .as("the full IPv6 side must not leak an IPv4 block").isEqualTo(1);

    allocator.add(ClusterCidr.ipv4("v4-only", selecting("pool", "a"), 4, "10.1.0.0/16"));
    PodCidrAllocation second = allocator.allocate(node("n2", "pool", "a"));
    assertThat(second.clusterCidr()).isEqualTo("v4-only");
    assertThat(second.podCidrs()).containsExactly(cidr("10.1.0.0/28"));
    assertThat(allocator.usage("dual").orElseThrow().ipv4().allocated()).isEqualTo(1);
  }

  // ---- overlapping ranges, reservations -----------------------------------------------------

  @Test
  void overlappingClusterCidrsNeverHandOutOverlappingBlocks() {
    allocator.add(ClusterCidr.ipv4("fallback", null, 8, "10.0.0.0/16"));
    allocator.add(ClusterCidr.ipv4("n1", selecting("node", "n1"), 6, "10.0.0.0/16"));

    assertThat(allocator.allocate(node("a", "node", "n1")).podCidrs()).containsExactly(cidr("10.0.0.0/26"));
    assertThat(allocator.allocate(node("b")).podCidrs()).as("10.0.0.0/24 holds a's block")
        .containsExactly(cidr("10.0.1.0/24"));
    assertThat(allocator.allocate(node("c", "node", "n1")).podCidrs()).containsExactly(cidr("10.0.0.64/26"));
    assertThat(allocator.allocate(node("d", "node", "n1")).podCidrs()).containsExactly(cidr("10.0.0.128/26"));
    assertThat(allocator.allocate(node("e", "node", "n1")).podCidrs()).containsExactly(cidr("10.0.0.192/26"));
    assertThat(allocator.allocate(node("f", "node", "n1")).podCidrs()).as("10.0.1.0/24 is b's")
        .containsExactly(cidr("10.0.2.0/26"));
  }

  @Test
  void aReservedServiceRangeIsNeverHandedOut() {
    allocator.reserve(cidr("10.0.0.0/28"));  // before the ClusterCIDR exists
    allocator.add(ClusterCidr.ipv4("pods", null, 4, "10.0.0.0/24"));
    allocator.reserve(cidr("10.0.0.200/29"));  // after: marks 10.0.0.192/28

    assertThat(allocator.usage("pods").orElseThrow().ipv4().allocated()).isEqualTo(2);
    for (int i = 0; i < 14; i++) {
      PodCidrAllocation a = allocator.allocate(node("n" + i));
      assertThat(a.ipv4().overlaps(cidr("10.0.0.0/28")) || a.ipv4().overlaps(cidr("10.0.0.192/28"))).isFalse();
    }
    assertThatThrownBy(() -> allocator.allocate(node("n14"))).isInstanceOf(PodCidrAllocationException.class);

    assertThat(allocator.unreserve(cidr("10.0.0.0/28"))).isTrue();
    assertThat(allocator.unreserve(cidr("10.0.0.0/28"))).isFalse();
    assertThat(allocator.allocate(node("n14")).podCidrs()).containsExactly(cidr("10.0.0.0/28"));
  }

  @Test
  void releasingABlockThatOverlapsALaterReservationKeepsTheReservation() {
    allocator.add(ClusterCidr.ipv4("pods", null, 4, "10.0.0.0/27"));
    allocator.allocate(node("n1"));  // 10.0.0.0/28
    allocator.reserve(cidr("10.0.0.0/30"));
    allocator.release("n1");

    allocator.allocate(node("n2"));  // 10.0.0.16/28
    assertThatThrownBy(() -> allocator.allocate(node("n3"))).isInstanceOf(PodCidrAllocationException.class);
  }

  @Test
  void twoReservedRangesInOneBlockEachKeepItWhenTheOtherGoes() {
    allocator.add(ClusterCidr.ipv4("pods", null, 4, "10.0.0.0/27"));  // two /28 blocks
    allocator.reserve(cidr("10.0.0.0/30"));
    allocator.reserve(cidr("10.0.0.4/30"));
    assertThat(allocator.unreserve(cidr("10.0.0.4/30"))).isTrue();  // frees its whole block, then marks 10.0.0.0/30 again

    assertThat(allocator.allocate(node("n1")).podCidrs()).containsExactly(cidr("10.0.0.16/28"));
    assertThatThrownBy(() -> allocator.allocate(node("n2"))).as("10.0.0.0/28 still holds 10.0.0.0/30")
        .isInstanceOf(PodCidrAllocationException.class);
    allocator.unreserve(cidr("10.0.0.0/30"));
    assertThat(allocator.allocate(node("n2")).podCidrs()).containsExactly(cidr("10.0.0.0/28"));
  }

  @Test
  void aNodeThatAlreadyHasABlockInAReservedRangeIsRecordedButNoneIsGivenOne() {
    allocator.add(ClusterCidr.ipv4("pods", null, 4, "10.0.0.0/27"));
    allocator.reserve(cidr("10.0.0.0/28"));
    assertThatThrownBy(() -> allocator.occupy(node("new"), List.of(cidr("10.0.0.0/28"))))
        .as("asked for by a new node").hasMessageContaining("overlaps the reserved range 10.0.0.0/28");
    assertThat(allocator.occupyExisting(node("old"), List.of(cidr("10.0.0.0/28"))).podCidrs())
        .as("carried by a node in the cluster").containsExactly(cidr("10.0.0.0/28"));
    assertThatThrownBy(() -> allocator.occupyExisting(node("twin"), List.of(cidr("10.0.0.0/28"))))
        .as("but never for two nodes").hasMessageContaining("is already allocated to node old");

    allocator.release("old");
    allocator.allocate(node("n1"));  // 10.0.0.16/28
    assertThatThrownBy(() -> allocator.allocate(node("n2"))).as("released, the block is the reserved range's again")
        .isInstanceOf(PodCidrAllocationException.class);
  }

  // ---- existing nodes ------------------------------------------------------------------------

  @Test
  void occupyRecordsAnExistingNodesPodCidrs() {
    allocator.add(ClusterCidr.dualStack("dual", null, 8, "10.0.0.0/16", "fd00::/112"));
    List<Cidr> existing = List.of(cidr("10.0.0.0/24"), cidr("fd00::/120"));

    PodCidrAllocation recorded = allocator.occupy(node("old"), existing);
    assertThat(recorded.clusterCidr()).isEqualTo("dual");
    assertThat(recorded.clusterCidrsTried()).isEqualTo(1);
    assertThat(allocator.occupy(node("old"), existing).clusterCidrsTried()).as("again: unchanged").isZero();
    assertThat(allocator.allocate(node("new")).podCidrs())
        .containsExactly(cidr("10.0.1.0/24"), cidr("fd00::100/120"));
    assertThat(allocator.allocate(node("old")).podCidrs()).as("allocation is idempotent").isEqualTo(existing);
  }

  @Test
  void occupyReportsCollisionsWithTheHolder() {
    allocator.add(ClusterCidr.ipv4("pods", null, 8, "10.0.0.0/16"));
    allocator.occupy(node("n1"), List.of(cidr("10.0.5.0/24")));

    assertThatThrownBy(() -> allocator.occupy(node("n2"), List.of(cidr("10.0.5.0/24"))))
        .isInstanceOfSatisfying(PodCidrAllocationException.class,
            e -> assertThat(e.reason()).isEqualTo(Reason.COLLISION))
        .hasMessage("pod CIDR 10.0.5.0/24 of node n2 is already allocated to node n1 (ClusterCIDR pods)");
    assertThatThrownBy(() -> allocator.occupy(node("n1"), List.of(cidr("10.0.6.0/24"))))
        .hasMessage("node n1 already holds pod CIDRs [10.0.5.0/24] from ClusterCIDR pods, so [10.0.6.0/24] cannot be"
            + " recorded for it; pod CIDRs never change, release the node first if it was re-created");

    allocator.reserve(cidr("10.0.9.0/28"));
    assertThatThrownBy(() -> allocator.occupy(node("n3"), List.of(cidr("10.0.9.0/24"))))
        .hasMessage("pod CIDR 10.0.9.0/24 of node n3 overlaps the reserved range 10.0.9.0/28");
  }

  @Test
  void occupyReportsBlocksHeldThroughAnOverlappingClusterCidr() {
    allocator.add(ClusterCidr.ipv4("small", selecting("size", "s"), 6, "10.0.0.0/16"));
    allocator.add(ClusterCidr.ipv4("large", null, 8, "10.0.0.0/16"));
    allocator.occupy(node("n1", "size", "s"), List.of(cidr("10.0.3.64/26")));

    assertThatThrownBy(() -> allocator.occupy(node("n2"), List.of(cidr("10.0.3.0/24"))))
        .hasMessage("pod CIDR 10.0.3.0/24 of node n2 overlaps 10.0.3.64/26 of node n1 (ClusterCIDR small)");
  }

  @Test
  void occupyRefusesPodCidrsThatAreNotANodeBlockOfAnyClusterCidr() {
    allocator.add(ClusterCidr.dualStack("dual", null, 8, "10.0.0.0/16", "fd00::/112"));

    assertThatThrownBy(() -> allocator.occupy(node("n1"), List.of(cidr("10.0.0.0/25"))))
        .isInstanceOfSatisfying(PodCidrAllocationException.class,
            e -> assertThat(e.reason()).isEqualTo(Reason.NOT_IN_ANY_CLUSTER_CIDR))
        .hasMessage("pod CIDRs [10.0.0.0/25] of node n1 fit no ClusterCIDR: each must be exactly one node block"
            + " (prefix 32 or 128 minus perNodeHostBits) inside the ClusterCIDR's range, one for each family it has");
    assertThatThrownBy(() -> allocator.occupy(node("n1"), List.of(cidr("10.0.0.0/24"))))
        .as("a dual-stack ClusterCIDR gives both families").hasMessageContaining("fit no ClusterCIDR");
    assertThatThrownBy(() -> allocator.occupy(node("n1"), List.of(cidr("10.0.0.0/24"), cidr("10.0.1.0/24"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("node n1 has pod CIDRs [10.0.0.0/24, 10.0.1.0/24]: at most one per IP family");
  }

  @Test
  void occupyPrefersTheClusterCidrWhoseSelectorMatches() {
    allocator.add(ClusterCidr.ipv4("a-fallback", null, 8, "10.0.0.0/16"));
    allocator.add(ClusterCidr.ipv4("b-zone", selecting("zone", "b"), 8, "10.0.0.0/16"));
    allocator.add(ClusterCidr.ipv4("c-other", selecting("zone", "c"), 8, "10.0.0.0/16"));

    assertThat(allocator.occupy(node("n1", "zone", "b"), List.of(cidr("10.0.1.0/24"))).clusterCidr())
        .isEqualTo("b-zone");
    assertThat(allocator.occupy(node("n2"), List.of(cidr("10.0.2.0/24"))).clusterCidr()).isEqualTo("a-fallback");
    allocator.release("n2");
    allocator.remove("a-fallback");
    assertThat(allocator.occupy(node("n3"), List.of(cidr("10.0.3.0/24"))).clusterCidr())
        .as("labels may have changed since; the block is still recorded").isEqualTo("b-zone");
  }

  // ---- lifecycle ---------------------------------------------------------------------------

  @Test
  void clusterCidrsAreImmutable() {
    ClusterCidr spec = ClusterCidr.ipv4("pods", null, 8, "10.0.0.0/16");
    assertThat(allocator.add(spec)).isTrue();
    assertThat(allocator.add(ClusterCidr.ipv4("pods", null, 8, "10.0.0.0/16"))).isFalse();

    assertThatThrownBy(() -> allocator.add(ClusterCidr.ipv4("pods", null, 6, "10.0.0.0/16")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("ClusterCIDR pods already exists with another spec and ClusterCIDRs are immutable: it is"
            + " {ipv4 10.0.0.0/16, perNodeHostBits 8, nodeSelector none}, not {ipv4 10.0.0.0/16, perNodeHostBits 6,"
            + " nodeSelector none}; create the new one under another name");
  }

  @Test
  void clusterCidrSpecsAreValidated() {
    assertThatThrownBy(() -> new ClusterCidr("x", null, 8, null, null))
        .hasMessage("ClusterCIDR x needs an ipv4 or ipv6 range (or both)");
    assertThatThrownBy(() -> ClusterCidr.ipv4("x", null, 3, "10.0.0.0/16"))
        .hasMessage("ClusterCIDR x: perNodeHostBits is 3; it must be at least 4 (16 addresses per node)");
    assertThatThrownBy(() -> ClusterCidr.ipv4("x", null, 10, "10.0.0.0/24"))
        .hasMessage("ClusterCIDR x: perNodeHostBits 10 does not fit 10.0.0.0/24, which has 8 host bits");
    assertThatThrownBy(() -> new ClusterCidr("x", null, 8, cidr("fd00::/64"), null))
        .hasMessage("ClusterCIDR x: ipv4 is fd00::/64, which is not IPv4");
    assertThatThrownBy(() -> ClusterCidr.ipv6("x", null, 16, "2001:db8::/48"))
        .hasMessageStartingWith("ClusterCIDR x: 2001:db8::/48 split into /112 blocks is 2^64 blocks");
  }

  @Test
  void releaseIsIdempotentAndFreesTheBlocks() {
    allocator.add(ClusterCidr.ipv4("pods", null, 4, "10.0.0.0/28"));
    allocator.allocate(node("n1"));

    assertThat(allocator.release("n1")).isTrue();
    assertThat(allocator.release("n1")).isFalse();
    assertThat(allocator.allocationOf("n1")).isEmpty();
    assertThat(allocator.usage("pods").orElseThrow().ipv4().allocated()).isZero();
    assertThat(allocator.allocate(node("n2")).podCidrs()).containsExactly(cidr("10.0.0.0/28"));
  }

  @Test
  void previewChangesNothing() {
    allocator.add(ClusterCidr.ipv4("pods", null, 4, "10.0.0.0/28"));

    PodCidrAllocation preview = allocator.preview(node("n1"));
    assertThat(allocator.allocationOf("n1")).isEmpty();
    assertThat(allocator.usage("pods").orElseThrow().nodes()).isZero();
    assertThat(allocator.usage("pods").orElseThrow().ipv4().allocated()).isZero();
    assertThat(allocator.allocate(node("n1"))).isEqualTo(preview);
  }

  @Test
  void usageReportsCountsPerFamily() {
    allocator.add(ClusterCidr.dualStack("dual", null, 8, "10.0.0.0/16", "fd00::/112"));
    allocator.allocate(node("n1"));
    allocator.allocate(node("n2"));

    ClusterCidrUsage usage = allocator.usage().get(0);
    assertThat(usage.nodes()).isEqualTo(2);
    assertThat(usage.ipv4()).isEqualTo(new ClusterCidrUsage.FamilyUsage(cidr("10.0.0.0/16"), 24, 256, 2));
    assertThat(usage.ipv6().free()).isEqualTo(254);
    assertThat(allocator.nodesUsing("dual")).containsExactly("n1", "n2");
  }

  @Test
  void concurrentRequestsNeverShareABlockAndDualStackStaysWhole() throws Exception {
    allocator.add(ClusterCidr.dualStack("dual", null, 4, "10.0.0.0/20", "fd00::/118"));  // 256 and 64 blocks
    allocator.add(ClusterCidr.ipv4("v4", null, 4, "10.1.0.0/20"));
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Callable<Integer>> workers = new ArrayList<>();
      for (int w = 0; w < 4; w++) {
        int worker = w;
        workers.add(() -> {
          for (int i = 0; i < 100; i++) {
            allocator.allocate(node("w" + worker + "-" + i));
            if (i % 3 == 0) {
              allocator.release("w" + worker + "-" + (i / 2));
            }
          }
          return 0;
        });
      }
      for (Future<Integer> done : pool.invokeAll(workers)) {
        done.get();
      }
    } finally {
      pool.shutdownNow();
    }
    Set<Cidr> blocks = new HashSet<>();
    int held = 0;
    for (int w = 0; w < 4; w++) {
      for (int i = 0; i < 100; i++) {
        for (PodCidrAllocation a : allocator.allocationOf("w" + w + "-" + i).stream().toList()) {
          held++;
          assertThat(blocks.addAll(a.podCidrs())).isTrue();
          assertThat(a.podCidrs()).hasSize(a.clusterCidr().equals("dual") ? 2 : 1);
        }
      }
    }
    assertThat(allocator.usage().stream().mapToInt(ClusterCidrUsage::nodes).sum()).as("nodes holding blocks")
        .isEqualTo(held);
    long allocated = allocator.usage().stream().mapToLong(u -> u.ipv4().allocated()).sum();
    assertThat(allocated).isEqualTo(held);
    assertThat(allocator.usage("dual").orElseThrow().ipv6().allocated())
        .isEqualTo(allocator.usage("dual").orElseThrow().ipv4().allocated());
  }

  @Test
  void thousandClusterCidrsAndFiveThousandNodesStayFast() {
    // A smoke test against accidental O(ClusterCIDRs) work per node; JMH measures the real cost.
    for (int i = 0; i < 1000; i++) {
      String range = "10." + (i >> 2) + "." + ((i & 3) << 6) + ".0/18";
      allocator.add(ClusterCidr.ipv4("pool-" + i, selecting("pool", "p" + i), 8, range));
    }
    for (int i = 0; i < 20; i++) {
      // Evaluated for every node (no label a node must carry), matching none of them.
      NodeSelector unindexable =
          NodeSelector.of(NodeSelectorTerm.of(doesNotExist("kubernetes.io/os"), notIn("x", "v" + i)));
      allocator.add(ClusterCidr.ipv4("notin-" + i, unindexable, 8, "172." + (16 + i) + ".0.0/16"));
    }
    allocator.add(ClusterCidr.ipv4("fallback", null, 8, "100.64.0.0/10"));
    long start = System.nanoTime();
    for (int n = 0; n < 5000; n++) {
      NodeView node = node("node-" + n, "pool", "p" + (n % 1000), "tier", "t" + (n % 20),
          "kubernetes.io/hostname", "node-" + n, "topology.kubernetes.io/zone", "z" + (n % 3),
          "kubernetes.io/os", "linux", "kubernetes.io/arch", "amd64", "node.kubernetes.io/instance-type", "m5");
      assertThat(allocator.allocate(node).clusterCidr()).isEqualTo("pool-" + (n % 1000));
    }
    long micros = (System.nanoTime() - start) / 1000 / 5000;

    assertThat(micros).as("average µs per node (cold JIT, loaded machine)").isLessThan(500);
  }
}
