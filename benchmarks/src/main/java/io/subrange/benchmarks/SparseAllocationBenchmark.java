package io.subrange.benchmarks;

import io.subrange.allocator.band.SparseAllocationSet;
import io.subrange.allocator.band.ThreadLocalRandomGenerator;
import io.subrange.allocator.band.UniformStart;
import io.subrange.allocator.ip.ServiceIpPool;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpFamily;
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
 * Dynamic allocation in an IPv6 /64 already holding 100,000 addresses, at the offset level and
 * through the pool (address objects, band choice). Target: <= 1 µs/op.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgs = {"-Xms1g", "-Xmx1g"})
public class SparseAllocationBenchmark {

  static final int HELD = 100_000;

  SparseAllocationSet set;
  ServiceIpPool pool;

  @Setup(Level.Trial)
  public void hold100k() {
    set = new SparseAllocationSet(-1L, 256, UniformStart.THREAD_LOCAL);  // a /64: 2^64-1
    pool = new ServiceIpPool(IpFamily.IPV6, ThreadLocalRandomGenerator.INSTANCE);
    pool.add("wide", Cidr.parse("fd00:10::/64"));
    for (int i = 0; i < HELD; i++) {
      set.allocateNext();
      pool.allocateNext();
    }
  }

  @Benchmark
  public long offsetAllocateNextAndRelease() {
    long offset = set.allocateNext();
    set.release(offset);
    return offset;
  }

  @Benchmark
  public Object poolAllocateNextAndRelease() {
    ServiceIpPool.Allocated allocated = pool.allocateNext();
    pool.release(allocated.address());
    return allocated;
  }
}
