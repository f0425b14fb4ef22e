package io.subrange.webhook.metrics;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.podcidr.ClusterCidrUsage;
import io.subrange.allocator.podcidr.PodCidrAllocation;
import io.subrange.allocator.podcidr.PodCidrAllocationException;
import io.subrange.allocator.store.AllocationStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.ToDoubleFunction;
import org.springframework.stereotype.Component;

/**
 * Pod CIDR metrics, after the upstream multi-CIDR allocator's {@code multicidrset_*} ones:
 * <ul>
 *   <li>{@code subrange_podcidr_allocator_cidrs_allocations_total{cluster_cidr}} (releases are the
 *       reconciler's: {@code subrange_reconciler_releases_total{kind="podcidr"}});
 *   <li>{@code ..._allocation_errors_total{reason}};
 *   <li>{@code ..._allocation_tries_per_request} (ClusterCIDRs tried per node) and
 *       {@code ..._allocation_duration_seconds};
 *   <li>gauges per ClusterCIDR and family: {@code ..._usage_cidrs} (fraction of blocks taken),
 *       {@code ..._allocated_cidrs}, {@code ..._available_cidrs}.
 * </ul>
 */
@Component
public class PodCidrMetrics {

  private static final String PREFIX = "subrange.podcidr.allocator.";

  private final MeterRegistry registry;
  private final AllocationStore store;
  private final DistributionSummary tries;
  private final Map<String, List<Gauge>> gauges = new HashMap<>();

  public PodCidrMetrics(MeterRegistry registry, AllocationStore store) {
    this.registry = registry;
    this.store = store;
    this.tries = DistributionSummary.builder(PREFIX + "allocation.tries.per.request")
        .description("ClusterCIDRs tried to give one node its pod CIDRs")
        .serviceLevelObjectives(1, 2, 5, 10, 50, 100, 500, 1000)
        .register(registry);
    syncGauges();
  }

  /** Registers gauges for ClusterCIDRs that appeared and removes those of ClusterCIDRs that went. */
  public synchronized void syncGauges() {
    List<ClusterCidrUsage> usage = store.podCidrUsage();
    List<String> live = usage.stream().map(ClusterCidrUsage::name).toList();
    for (ClusterCidrUsage clusterCidr : usage) {
      gauges.computeIfAbsent(clusterCidr.name(), name -> {
        List<Gauge> registered = new ArrayList<>();
        for (IpFamily family : IpFamily.values()) {
          if (of(clusterCidr, family) != null) {
            registered.add(gauge("usage.cidrs", name, family, f -> f.total() == 0 ? 0 : (double) f.allocated() / f.total()));
            registered.add(gauge("allocated.cidrs", name, family, f -> f.allocated()));
            registered.add(gauge("available.cidrs", name, family, f -> f.total() - f.allocated()));
          }
        }
        return registered;
      });
    }
    gauges.keySet().removeIf(name -> {
      if (live.contains(name)) {
        return false;
      }
      gauges.get(name).forEach(registry::remove);
      return true;
    });
  }

  private Gauge gauge(String metric, String clusterCidr, IpFamily family,
      ToDoubleFunction<ClusterCidrUsage.FamilyUsage> value) {
    return Gauge.builder(PREFIX + metric, store, s -> familyUsage(s, clusterCidr, family).map(value::applyAsDouble)
            .orElse(Double.NaN))
        .tag("cluster_cidr", clusterCidr).tag("family", family.kubernetesName()).register(registry);
  }

  private static Optional<ClusterCidrUsage.FamilyUsage> familyUsage(AllocationStore store, String name, IpFamily family) {
    return store.podCidrUsage().stream().filter(u -> u.name().equals(name)).findFirst()
        .map(u -> of(u, family));
  }

  private static ClusterCidrUsage.FamilyUsage of(ClusterCidrUsage usage, IpFamily family) {
    return family == IpFamily.IPV4 ? usage.ipv4() : usage.ipv6();
  }

  public void granted(PodCidrAllocation allocation, long nanos) {
    if (allocation.clusterCidrsTried() == 0) {
      return;  // the node already held these blocks
    }
    registry.counter(PREFIX + "cidrs.allocations", "cluster_cidr", allocation.clusterCidr()).increment();
    tries.record(allocation.clusterCidrsTried());
    Timer.builder(PREFIX + "allocation.duration").serviceLevelObjectives(LatencyBuckets.BOUNDARIES)
        .register(registry).record(Duration.ofNanos(nanos));
  }

  public void refused(PodCidrAllocationException.Reason reason) {
    registry.counter(PREFIX + "allocation.errors", "reason", reason.name().toLowerCase(Locale.ROOT)).increment();
  }
}
