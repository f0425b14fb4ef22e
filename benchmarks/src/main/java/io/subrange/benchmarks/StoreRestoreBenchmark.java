package io.subrange.benchmarks;

import io.subrange.allocator.band.ThreadLocalRandomGenerator;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.port.PortRange;
import io.subrange.allocator.store.AllocationEngine;
import io.subrange.allocator.store.Holder;
import io.subrange.allocator.store.IpClaim;
import io.subrange.allocator.store.PortClaim;
import io.subrange.allocator.store.RangeKey;
import io.subrange.allocator.store.RangeState;
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
 * What a replica of the ConfigMap store does each time another replica writes: load a whole
 * range kind's stored state into the engine again (StoredShards.refresh). In flight recordings
 * of the load harness this was about a quarter of a webhook replica's CPU. The state is the
 * harness's at its end: Services in a /20, half of them with a NodePort.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgs = {"-Xms1g", "-Xmx1g"})
public class StoreRestoreBenchmark {

  @Param({"3000"})
  int services;

  AllocationEngine engine;
  List<RangeState> serviceIps;
  List<RangeState> nodePorts;

  @Setup(Level.Trial)
  public void fill() {
    engine = AllocationEngine.withRanges(Map.of("kubernetes", Cidr.parse("10.96.0.0/20")),
        ThreadLocalRandomGenerator.INSTANCE);
    for (int i = 0; i < services; i++) {
      engine.reserve(new ReservationRequest(Holder.service("load", "svc-" + i, "uid-" + i),
          List.of(IpClaim.dynamic(IpFamily.IPV4)), i % 2 == 0 ? List.of(PortClaim.dynamic()) : List.of(), false));
    }
    serviceIps = List.of(engine.export(RangeKey.serviceIps("kubernetes", IpFamily.IPV4)));
    nodePorts = List.of(engine.export(RangeKey.nodePorts()));
  }

  @Benchmark
  public Map<RangeKey, String> restoreServiceIps() {
    return engine.restore(RangeKey.Kind.SERVICE_IPS, IpFamily.IPV4, serviceIps);
  }

  @Benchmark
  public Map<RangeKey, String> restoreNodePorts() {
    return engine.restore(RangeKey.Kind.NODE_PORTS, null, nodePorts);
  }
}
