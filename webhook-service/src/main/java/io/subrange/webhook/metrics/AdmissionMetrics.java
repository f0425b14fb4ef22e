package io.subrange.webhook.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import org.springframework.stereotype.Component;

/**
 * {@code subrange_admission_requests_total{webhook,kind,operation,result}} and
 * {@code subrange_admission_duration_seconds{webhook,kind,operation,result}}, where webhook is
 * mutate or validate and result is allowed, patched, denied, invalid (HTTP 400), error, or
 * abandoned (the caller, usually the API server at the webhook's timeout, went away before the
 * answer).
 */
@Component
public class AdmissionMetrics {

  private final MeterRegistry registry;

  public AdmissionMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  public void record(String webhook, String kind, String operation, String result, long nanos) {
    registry.counter("subrange.admission.requests", "webhook", webhook, "kind", kind, "operation", operation,
        "result", result).increment();
    Timer.builder("subrange.admission.duration")
        .description("Time to answer one admission request, including making its allocation durable")
        .tags("webhook", webhook, "kind", kind, "operation", operation, "result", result)
        .serviceLevelObjectives(LatencyBuckets.BOUNDARIES)
        .register(registry)
        .record(Duration.ofNanos(nanos));
  }
}
