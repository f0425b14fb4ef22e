package io.subrange.testing;

import java.util.concurrent.locks.LockSupport;

/**
 * An upper bound on how fast a load starts its creates: the {@code i}th (from 0) starts no
 * earlier than {@code i / perSecond} seconds after the first, whatever the clients could do.
 * Without it the clients create as fast as the API server answers, and configurations that slow
 * the API server down also run at a lower rate; in the thirty-seventh round every process's CPU
 * per create moved with the rate (docs/performance.md). Paced below both, two configurations are
 * compared at the same rate.
 *
 * @param perSecond creates started per second at most; 0 for no bound
 */
record Pacing(double perSecond) {

  /** Creates as fast as the API server answers. */
  static final Pacing NONE = new Pacing(0);

  Pacing {
    if (!(perSecond >= 0) || Double.isInfinite(perSecond)) {
      throw new IllegalArgumentException("a rate is creates per second, 0 for none, not " + perSecond);
    }
  }

  /** When the {@code index}th create may start, on {@link System#nanoTime}'s clock. */
  long notBeforeNanos(long firstNanos, int index) {
    return perSecond == 0 ? firstNanos : firstNanos + (long) (index * 1e9 / perSecond);
  }

  /** Waits until the {@code index}th create may start. */
  void awaitTurn(long firstNanos, int index) {
    long wait;
    while ((wait = notBeforeNanos(firstNanos, index) - System.nanoTime()) > 0) {
      LockSupport.parkNanos(wait);
      if (Thread.currentThread().isInterrupted()) {
        return;
      }
    }
  }

  @Override
  public String toString() {
    return perSecond == 0 ? "as fast as answered" : String.format("at most %.1f creates/s", perSecond);
  }
}
