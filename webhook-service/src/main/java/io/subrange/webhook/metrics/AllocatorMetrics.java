package io.subrange.webhook.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.subrange.allocator.store.AllocationStore;
import io.subrange.allocator.store.RangeUsage;
import io.subrange.allocator.store.Scope;
import java.time.Duration;
import org.springframework.stereotype.Component;

/**
 * The ClusterIP allocator metrics, named as kube-apiserver names them under its own prefix so
 * the same dashboards read them:
 * {@code subrange_clusterip_allocator_allocated_ips{cidr}}, {@code ..._available_ips{cidr}},
 * {@code ..._allocation_total{cidr,scope}}, {@code ..._allocation_errors_total{cidr,scope}},
 * {@code ..._allocation_duration_seconds{cidr}}. Dry runs are not counted: they allocate nothing.
 */
@Component
public class AllocatorMetrics {

  private static final String PREFIX = "subrange.clusterip.allocator.";

  private final MeterRegistry registry;

  public AllocatorMetrics(MeterRegistry registry, AllocationStore store) {
    this.registry = registry;
    for (RangeUsage range : store.usage()) {
      String cidr = range.range();
      Gauge.builder(PREFIX + "allocated.ips", store, s -> RangeUsage.asDouble(usageOf(s, cidr).used()))
          .description("Allocated addresses in the Service range").tag("cidr", cidr).register(registry);
      Gauge.builder(PREFIX + "available.ips", store, s -> RangeUsage.asDouble(usageOf(s, cidr).free()))
          .description("Free addresses in the Service range").tag("cidr", cidr).register(registry);
    }
  }

  private static RangeUsage usageOf(AllocationStore store, String cidr) {
    return store.usage().stream().filter(u -> u.range().equals(cidr)).findFirst()
        .orElse(new RangeUsage(cidr, 0, 0, 0, 0));
  }

  public void allocated(String cidr, Scope scope, long nanos) {
    registry.counter(PREFIX + "allocation", "cidr", cidr, "scope", scope.label()).increment();
    Timer.builder(PREFIX + "allocation.duration")
        .description("Time to make one allocation durable")
        .tag("cidr", cidr)
        .serviceLevelObjectives(LatencyBuckets.BOUNDARIES)
        .register(registry)
        .record(Duration.ofNanos(nanos));
  }

  public void failed(String cidr, Scope scope) {
    registry.counter(PREFIX + "allocation.errors", "cidr", cidr, "scope", scope.label()).increment();
  }
}
