package io.subrange.benchmarks;

import io.subrange.allocator.band.AllocationBitmap;
import io.subrange.allocator.band.UniformStart;
import java.util.SplittableRandom;
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
 * RangeAllocation snapshot of a half-full /12: encode to bytes, then decode into a bitmap.
 * Target: <= 100 µs for both.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgs = {"-Xms1g", "-Xmx1g"})
public class SnapshotBenchmark {

  AllocationBitmap source;
  AllocationBitmap target;
  byte[] encoded;

  @Setup(Level.Trial)
  public void halfFull() {
    source = new AllocationBitmap(BitmapAllocationBenchmark.SLASH_12, 256, UniformStart.THREAD_LOCAL);
    BitmapAllocationBenchmark.fillAtRandom(source, 0.5, new SplittableRandom(7));
    target = new AllocationBitmap(BitmapAllocationBenchmark.SLASH_12, 256, UniformStart.THREAD_LOCAL);
    encoded = source.snapshot();
  }

  @Benchmark
  public long encodeAndDecode() {
    byte[] bytes = source.snapshot();
    target.restore(bytes);
    return target.used();
  }

  @Benchmark
  public int encode() {
    return source.snapshot().length;
  }

  @Benchmark
  public long decode() {
    target.restore(encoded);
    return target.used();
  }
}
