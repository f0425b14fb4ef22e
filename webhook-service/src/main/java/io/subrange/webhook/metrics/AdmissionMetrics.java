package io.subrange.webhook.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.springframework.stereotype.Component;

/**
 * {@code subrange_admission_requests_total{webhook,kind,operation,result}} and
 * {@code subrange_admission_duration_seconds{webhook,kind,operation,result}}, where webhook is
 * mutate or validate and result is allowed, patched, denied, invalid (HTTP 400), error,
 * throttled (HTTP 429, past the in-flight cap) or abandoned (the caller, usually the API server at
 * the webhook's timeout, went away before the answer); {@code subrange_admission_in_flight} and
 * {@code subrange_admission_max_in_flight}, the admissions being worked on and the cap on them.
 */
@Component
public class AdmissionMetrics {

  private final MeterRegistry registry;
  /** The meters of each label set, looked up once: every admission records, and lookups showed. */
  private final Map<Labels, Meters> meters = new ConcurrentHashMap<>();

  /** Label sets are few (the kinds subrange serves); a caller inventing kinds is not remembered past this. */
  private static final int MAX_REMEMBERED = 256;

  private record Labels(String webhook, String kind, String operation, String result) {
  }

  private record Meters(Counter requests, Timer duration) {
  }

  private final Counter connectionsRotated;

  public AdmissionMetrics(MeterRegistry registry) {
    this.registry = registry;
    this.connectionsRotated = Counter.builder("subrange.admission.connections.rotated")
        .description("Connections closed after serving subrange.admission.calls-per-connection admission calls")
        .register(registry);
  }

  /** One connection closed after its last admission call (see subrange.admission.calls-per-connection). */
  public void connectionRotated() {
    connectionsRotated.increment();
  }

  public void record(String webhook, String kind, String operation, String result, long nanos) {
    Labels labels = new Labels(webhook, kind, operation, result);
    Meters m = meters.get(labels);
    if (m == null) {
      m = register(labels);
      if (meters.size() < MAX_REMEMBERED) {
        meters.put(labels, m);
      }
    }
    m.requests().increment();
    m.duration().record(nanos, TimeUnit.NANOSECONDS);
  }

  /** Publishes how many admissions are being worked on, and the cap past which requests are turned away. */
  public void watchInFlight(IntSupplier inFlight, int max) {
    Gauge.builder("subrange.admission.in.flight", inFlight, IntSupplier::getAsInt).strongReference(true)
        .description("Admission requests being worked on (read, allocated, written)").register(registry);
    Gauge.builder("subrange.admission.max.in.flight", () -> max)
        .description("subrange.admission.max-in-flight: past it, requests are answered 429").register(registry);
  }

  private Meters register(Labels l) {
    return new Meters(
        registry.counter("subrange.admission.requests", "webhook", l.webhook(), "kind", l.kind(),
            "operation", l.operation(), "result", l.result()),
        Timer.builder("subrange.admission.duration")
            .description("Time to answer one admission request, including making its allocation durable")
            .tags("webhook", l.webhook(), "kind", l.kind(), "operation", l.operation(), "result", l.result())
            .serviceLevelObjectives(LatencyBuckets.BOUNDARIES)
            .register(registry));
  }
}
