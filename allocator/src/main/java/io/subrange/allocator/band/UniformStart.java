package io.subrange.allocator.band;

import java.util.random.RandomGenerator;

/**
 * Starts anywhere in the band, uniformly: allocations spread over the whole range. Right for one
 * process alone ({@link #THREAD_LOCAL}), where nothing is gained by keeping them together, and
 * for tests, which pass a seeded generator so a run repeats.
 *
 * <p>As thread-safe as its generator: {@link #THREAD_LOCAL} may be shared by any thread.
 */
public final class UniformStart implements StartStrategy {

  /** Uniform starts from the calling thread's {@link java.util.concurrent.ThreadLocalRandom}. */
  public static final UniformStart THREAD_LOCAL = new UniformStart(ThreadLocalRandomGenerator.INSTANCE);

  private final RandomGenerator random;

  /** Uniform starts drawn from {@code random} (a seeded one makes them repeat). */
  public UniformStart(RandomGenerator random) {
    this.random = random;
  }

  @Override
  public int startIn(int bandSize) {
    return random.nextInt(bandSize);
  }

  @Override
  public long startInUnsigned(long bandSize) {
    if (bandSize > 0) {
      return random.nextLong(bandSize);
    }
    if (bandSize == 0) {
      throw new IllegalArgumentException("band size must not be 0");
    }
    long candidate;
    do {
      candidate = random.nextLong();  // bandSize >= 2^63: at least half of all draws are below it
    } while (Long.compareUnsigned(candidate, bandSize) >= 0);
    return candidate;
  }
}
