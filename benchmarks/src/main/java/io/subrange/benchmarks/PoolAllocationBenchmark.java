package io.subrange.benchmarks;

import io.subrange.allocator.band.ThreadLocalRandomGenerator;
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
 * What the webhook pays per address: dynamic allocate + release through the pool (range
 * choice, address objects, lock) on a half-full /12, alone and beside a second range.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgs = {"-Xms1g", "-Xmx1g"})
public class PoolAllocationBenchmark {

  ServiceIpPool single;
  ServiceIpPool twoRanges;

  @Setup(Level.Trial)
  public void halfFull() {
    single = new ServiceIpPool(IpFamily.IPV4, ThreadLocalRandomGenerator.INSTANCE);
    single.add("kubernetes", Cidr.parse("10.96.0.0/12"));
    twoRanges = new ServiceIpPool(IpFamily.IPV4, ThreadLocalRandomGenerator.INSTANCE);
    twoRanges.add("kubernetes", Cidr.parse("10.96.0.0/12"));
    twoRanges.add("extra", Cidr.parse("10.112.0.0/16"));
    for (int i = 0; i < 524_287; i++) {
      single.allocateNext();
      twoRanges.allocateNext();
    }
  }

  @Benchmark
  public Object oneRange() {
    ServiceIpPool.Allocated allocated = single.allocateNext();
    single.release(allocated.address());
    return allocated;
  }

  @Benchmark
  public Object twoRanges() {
    ServiceIpPool.Allocated allocated = twoRanges.allocateNext();
    twoRanges.release(allocated.address());
    return allocated;
  }
}
