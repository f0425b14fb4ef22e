package io.subrange.webhook.metrics;

import java.time.Duration;

/** Histogram buckets for subrange's latency metrics: 100 µs to 5 s. */
final class LatencyBuckets {

  static final Duration[] BOUNDARIES = {
      Duration.ofNanos(100_000), Duration.ofNanos(250_000), Duration.ofNanos(500_000),
      Duration.ofMillis(1), Duration.ofNanos(2_500_000), Duration.ofMillis(5), Duration.ofMillis(10),
      Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250),
      Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofMillis(2500), Duration.ofSeconds(5)};

  private LatencyBuckets() {
  }
}
