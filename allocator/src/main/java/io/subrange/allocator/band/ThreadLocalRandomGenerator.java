package io.subrange.allocator.band;

import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;

/**
 * A {@link RandomGenerator} that any thread may share: each call uses the calling thread's
 * {@link ThreadLocalRandom}. It is production's uniform randomness: the choice between ranges
 * ({@code ServiceIpPool}) and the draws of {@link UniformStart#THREAD_LOCAL}. Engines take a
 * generator so tests can seed them (java.util.Random is thread-safe too, but pays a CAS per draw).
 */
public final class ThreadLocalRandomGenerator implements RandomGenerator {

  public static final ThreadLocalRandomGenerator INSTANCE = new ThreadLocalRandomGenerator();

  private ThreadLocalRandomGenerator() {
  }

  @Override
  public long nextLong() {
    return ThreadLocalRandom.current().nextLong();
  }

  @Override
  public int nextInt(int bound) {
    return ThreadLocalRandom.current().nextInt(bound);
  }

  @Override
  public long nextLong(long bound) {
    return ThreadLocalRandom.current().nextLong(bound);
  }

  @Override
  public double nextDouble() {
    return ThreadLocalRandom.current().nextDouble();
  }
}
