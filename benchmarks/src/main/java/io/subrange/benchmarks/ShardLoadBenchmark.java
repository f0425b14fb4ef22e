package io.subrange.benchmarks;

import io.subrange.allocator.band.ThreadLocalRandomGenerator;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.store.AllocationEngine;
import io.subrange.allocator.store.Holder;
import io.subrange.allocator.store.IpClaim;
import io.subrange.allocator.store.RangeKey;
import io.subrange.allocator.store.RangeState;
import io.subrange.allocator.store.RangeWindow;
import io.subrange.allocator.store.ReservationRequest;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The engine's part of what a replica does per write, whole range against one shard, with many
 * Services held in kubeadm's default /12 (128 shards of 8,192 addresses): loading another
 * replica's write ({@code loadWholeKind}, as every write did before, against {@code loadOneShard})
 * and exporting its own ({@code exportWholeRange} against {@code exportOneShard}). The whole-range
 * costs grow with what is held; the one-shard costs with what one shard holds.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgs = {"-Xms1g", "-Xmx1g"})
public class ShardLoadBenchmark {

  private static final RangeKey KEY = RangeKey.serviceIps("kubernetes", IpFamily.IPV4);
  private static final String RANGE = "10.96.0.0/12";
  private static final long SPAN = 8192;

  @Param({"20000"})
  int services;

  AllocationEngine engine;
  List<RangeState> whole;
  RangeWindow shard;

  @Setup(Level.Trial)
  public void fill() {
    engine = AllocationEngine.withRanges(Map.of("kubernetes", Cidr.parse(RANGE)),
        ThreadLocalRandomGenerator.INSTANCE);
    for (int i = 0; i < services; i++) {
      engine.reserve(ReservationRequest.ips(Holder.service("load", "svc-" + i, "uid-" + i),
          List.of(IpClaim.dynamic(IpFamily.IPV4)), false));
    }
    whole = List.of(engine.export(KEY));
    shard = engine.exportWindow(KEY, 64 * SPAN, 65 * SPAN);
    System.out.printf("%n%d Services held; shard 64 holds %d%n", services, shard.entries().size());
  }

  @Benchmark
  public Map<RangeKey, String> loadWholeKind() {
    return engine.restore(RangeKey.Kind.SERVICE_IPS, IpFamily.IPV4, whole);
  }

  @Benchmark
  public boolean loadOneShard() {
    return engine.restoreWindow(KEY, RANGE, shard);
  }

  @Benchmark
  public RangeState exportWholeRange() {
    return engine.export(KEY);
  }

  @Benchmark
  public RangeWindow exportOneShard() {
    return engine.exportWindow(KEY, 64 * SPAN, 65 * SPAN);
  }
}
