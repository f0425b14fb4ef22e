package io.subrange.benchmarks;

import static io.subrange.allocator.podcidr.NodeSelectorRequirement.exists;
import static io.subrange.allocator.podcidr.NodeSelectorRequirement.in;
import static io.subrange.allocator.podcidr.NodeSelectorRequirement.notIn;

import io.subrange.allocator.podcidr.ClusterCidr;
import io.subrange.allocator.podcidr.ClusterCidrAllocator;
import io.subrange.allocator.podcidr.NodeView;
import io.subrange.allocator.podcidr.NodeSelector;
import io.subrange.allocator.podcidr.NodeSelectorTerm;
import io.subrange.allocator.podcidr.PodCidrAllocation;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Pod CIDR allocation for one node with 1,000 ClusterCIDRs and 5,000 nodes already holding
 * blocks. The ClusterCIDRs mix what operators write: 900 IPv4 racks selected by
 * {@code rack In (...)}, 50 dual-stack zones selected by {@code zone In} plus a second ORed
 * term, 49 selectors with only {@code NotIn} (which no index can narrow, so they are evaluated
 * for every node) and one fallback. Target: <= 50 µs/op. Setup prints the heap the state keeps.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgs = {"-Xms1g", "-Xmx1g"})
public class PodCidrAllocationBenchmark {

  static final int CLUSTER_CIDRS = 1_000;
  static final int NODES = 5_000;

  ClusterCidrAllocator allocator;
  int next;

  @Setup(Level.Trial)
  public void build() {
    long before = usedHeap();
    allocator = buildState();
    long after = usedHeap();
    System.out.printf("%n[memory] %d ClusterCIDRs + %d nodes keep %.1f MiB of heap%n", CLUSTER_CIDRS, NODES,
        (after - before) / (1024.0 * 1024.0));
  }

  static ClusterCidrAllocator buildState() {
    ClusterCidrAllocator allocator = new ClusterCidrAllocator();
    for (int i = 0; i < 900; i++) {
      // 10.<i/4>.<(i%4)*64>.0/18 split into /24s: 64 blocks per rack
      String ipv4 = "10." + (i / 4) + "." + ((i % 4) * 64) + ".0/18";
      allocator.add(ClusterCidr.ipv4("rack-" + i, NodeSelector.of(NodeSelectorTerm.of(in("rack", "r" + i))), 8, ipv4));
    }
    for (int i = 0; i < 50; i++) {
      NodeSelector zone = NodeSelector.of(NodeSelectorTerm.of(in("zone", "z" + i), exists("gpu")),
          NodeSelectorTerm.of(in("pool", "p" + i)));
      allocator.add(ClusterCidr.dualStack("zone-" + i, zone, 8, "172.16." + (i * 4) + ".0/22",
          "fd00:" + Integer.toHexString(i) + "::/112"));
    }
    for (int i = 0; i < 49; i++) {
      NodeSelector exclusion = NodeSelector.of(NodeSelectorTerm.of(notIn("tier", "t" + i), notIn("rack", "r" + i)));
      allocator.add(ClusterCidr.ipv4("excl-" + i, exclusion, 8, "100." + (64 + i) + ".0.0/16"));
    }
    allocator.add(ClusterCidr.ipv4("fallback", null, 8, "192.168.0.0/16"));
    for (int n = 0; n < NODES; n++) {
      allocator.allocate(node("node-" + n, n));
    }
    return allocator;
  }

  static NodeView node(String name, int n) {
    Map<String, String> labels = n % 10 == 0
        ? Map.of("zone", "z" + (n % 50), "gpu", "true", "tier", "t" + (n % 7), "kubernetes.io/hostname", name)
        : Map.of("rack", "r" + (n % 900), "tier", "t" + (n % 7), "kubernetes.io/hostname", name);
    return new NodeView(name, labels);
  }

  private static long usedHeap() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    Runtime runtime = Runtime.getRuntime();
    return runtime.totalMemory() - runtime.freeMemory();
  }

  /** Allocates for a node with racks and zones cycling, then releases it so the state stays at 5,000. */
  @Benchmark
  public PodCidrAllocation allocateAndRelease() {
    int n = next++;
    String name = "bench-" + (n % 4096);
    PodCidrAllocation allocation = allocator.allocate(node(name, n));
    allocator.release(name);
    return allocation;
  }
}
