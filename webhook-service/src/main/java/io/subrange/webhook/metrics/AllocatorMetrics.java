package io.subrange.webhook.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.store.AllocationException;
import io.subrange.allocator.store.AllocationStore;
import io.subrange.allocator.store.IpAssignment;
import io.subrange.allocator.store.IpClaim;
import io.subrange.allocator.store.PortAssignment;
import io.subrange.allocator.store.PortClaim;
import io.subrange.allocator.band.RangeUsage;
import io.subrange.allocator.store.Reservation;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;
import org.springframework.stereotype.Component;

/**
 * The ClusterIP and NodePort allocator metrics, named as kube-apiserver names its own under its
 * prefix so the same dashboards read them:
 * <ul>
 *   <li>{@code subrange_clusterip_allocator_allocated_ips{cidr}}, {@code ..._available_ips{cidr}},
 *       {@code ..._allocation_total{cidr,scope}}, {@code ..._allocation_errors_total{cidr,scope}},
 *       {@code ..._allocation_duration_seconds{cidr}};
 *   <li>{@code subrange_nodeport_allocator_allocated_ports}, {@code ..._available_ports},
 *       {@code ..._allocation_total{scope}}, {@code ..._allocation_errors_total{scope}},
 *       {@code ..._allocation_duration_seconds}.
 * </ul>
 * Only fresh allocations count: a value an object already held (an update, a retried
 * admission) and dry runs are not counted. Range gauges follow the ranges as they are added and
 * removed ({@link #syncRangeGauges}).
 */
@Component
public class AllocatorMetrics {

  private static final String IPS = "subrange.clusterip.allocator.";
  private static final String PORTS = "subrange.nodeport.allocator.";

  private final MeterRegistry registry;
  private final AllocationStore store;
  private final Map<String, List<Gauge>> rangeGauges = new HashMap<>();
  /**
   * Meters by name and tags, looked up once: every create counts here, and the registry's own
   * lookup (building and sorting the tags) showed in the serving threads' samples. Bounded by
   * ranges times scopes; like the registry's, they outlive a removed range.
   */
  private final Map<List<String>, Counter> counters = new ConcurrentHashMap<>();
  private final Map<List<String>, Timer> timers = new ConcurrentHashMap<>();

  public AllocatorMetrics(MeterRegistry registry, AllocationStore store) {
    this.registry = registry;
    this.store = store;
    Gauge.builder(PORTS + "allocated.ports", store, s -> RangeUsage.asDouble(s.nodePortUsage().used()))
        .description("Allocated NodePorts").register(registry);
    Gauge.builder(PORTS + "available.ports", store, s -> RangeUsage.asDouble(s.nodePortUsage().free()))
        .description("Free NodePorts").register(registry);
    syncRangeGauges();
  }

  /** Registers gauges for Service ranges that appeared and removes those of ranges that went. */
  public synchronized void syncRangeGauges() {
    List<String> live = store.usage().stream().map(RangeUsage::range).distinct().toList();
    for (String cidr : live) {
      rangeGauges.computeIfAbsent(cidr, c -> List.of(
          rangeGauge(IPS + "allocated.ips", "Allocated addresses in the Service range", c, RangeUsage::used),
          rangeGauge(IPS + "available.ips", "Free addresses in the Service range", c, RangeUsage::free)));
    }
    rangeGauges.keySet().removeIf(cidr -> {
      if (live.contains(cidr)) {
        return false;
      }
      rangeGauges.get(cidr).forEach(registry::remove);
      return true;
    });
  }

  private Gauge rangeGauge(String name, String description, String cidr, ToLongFunction<RangeUsage> count) {
    return Gauge.builder(name, store, s -> s.usage().stream().filter(u -> u.range().equals(cidr)).findFirst()
            .map(u -> RangeUsage.asDouble(count.applyAsLong(u))).orElse(Double.NaN))
        .description(description).tag("cidr", cidr).register(registry);
  }

  /** Counts what a reservation newly granted. */
  public void granted(Reservation reservation, long nanos) {
    for (IpAssignment ip : reservation.ips()) {
      if (!ip.alreadyHeld()) {
        String cidr = ip.range().toString();
        counter(IPS + "allocation", "cidr", cidr, "scope", ip.scope().label()).increment();
        timer(IPS + "allocation.duration", "cidr", cidr).record(nanos, TimeUnit.NANOSECONDS);
      }
    }
    for (PortAssignment port : reservation.ports()) {
      if (!port.alreadyHeld()) {
        counter(PORTS + "allocation", "scope", port.scope().label()).increment();
        timer(PORTS + "allocation.duration").record(nanos, TimeUnit.NANOSECONDS);
      }
    }
  }

  /** Counts a refused claim under the allocator it was aimed at. */
  public void refused(AllocationException refusal) {
    Object claim = refusal.failedClaim();
    if (claim instanceof IpClaim ip) {
      registry.counter(IPS + "allocation.errors", "cidr", cidrOf(ip), "scope", ip.scope().label()).increment();
    } else if (claim instanceof PortClaim port) {
      registry.counter(PORTS + "allocation.errors", "scope", port.scope().label()).increment();
    }
  }

  /** The range a failed IP claim was aimed at, for the cidr label: its home range, or "none". */
  private String cidrOf(IpClaim claim) {
    return store.usage().stream().map(RangeUsage::range)
        .filter(cidr -> claim.requested() == null
            ? Cidr.parse(cidr).family() == claim.family()
            : Cidr.parse(cidr).contains(claim.requested()))
        .findFirst().orElse("none");
  }

  private Counter counter(String name, String... tags) {
    return counters.computeIfAbsent(meterKey(name, tags), key -> registry.counter(name, tags));
  }

  private Timer timer(String name, String... tags) {
    return timers.computeIfAbsent(meterKey(name, tags), key -> Timer.builder(name)
        .description("Time to make one allocation durable").tags(tags)
        .serviceLevelObjectives(LatencyBuckets.BOUNDARIES).register(registry));
  }

  private static List<String> meterKey(String name, String... tags) {
    List<String> key = new ArrayList<>(tags.length + 1);
    key.add(name);
    key.addAll(Arrays.asList(tags));
    return key;
  }
}
