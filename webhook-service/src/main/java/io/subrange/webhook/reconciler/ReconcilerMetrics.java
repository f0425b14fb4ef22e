package io.subrange.webhook.reconciler;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The reconciler's metrics, named after kube-apiserver's repair-loop metrics
 * ({@code clusterip_repair_ip_errors_total{type}}):
 * <ul>
 *   <li>{@code subrange_reconciler_repairs_total{kind,type}}: kind {@code clusterip},
 *       {@code nodeport} or {@code podcidr}; type {@code leak} (held, no owner, freed after the
 *       grace period), {@code duplicate} (one value on two objects), {@code out_of_range},
 *       {@code not_allocated} (an object's value the store did not hold, now recorded) and
 *       {@code holder} (the record named another holder, now the object that carries it);
 *   <li>{@code subrange_reconciler_releases_total{kind,reason}}: values freed because their
 *       object was {@code deleted} or {@code updated};
 *   <li>{@code subrange_reconciler_rebuilds_total}: ranges rebuilt from the cluster;
 *   <li>{@code subrange_reconciler_errors_total}: passes or steps that failed (retried);
 *   <li>{@code subrange_reconciler_leader}: 1 while this process is the acting reconciler;
 *   <li>{@code subrange_reconciler_pass_duration_seconds{pass}}: one pass comparing cluster and
 *       store, {@code full} (every Service and held value) or {@code changes} (what changed
 *       since the pass before).
 * </ul>
 */
public final class ReconcilerMetrics {

  private static final String PREFIX = "subrange.reconciler.";

  private final MeterRegistry registry;
  private final Counter rebuilds;
  private final Counter errors;
  private final AtomicInteger leader = new AtomicInteger();

  public ReconcilerMetrics(MeterRegistry registry) {
    this.registry = registry;
    rebuilds = Counter.builder(PREFIX + "rebuilds").description("Ranges rebuilt from the cluster").register(registry);
    errors = Counter.builder(PREFIX + "errors").description("Reconcile steps that failed").register(registry);
    Gauge.builder(PREFIX + "leader", leader, AtomicInteger::get).description("1 while this process reconciles")
        .register(registry);
  }

  public static ReconcilerMetrics unregistered() {
    return new ReconcilerMetrics(new SimpleMeterRegistry());
  }

  void repair(String kind, String type) {
    Counter.builder(PREFIX + "repairs").description("Repairs by kind and type").tag("kind", kind).tag("type", type)
        .register(registry).increment();
  }

  /** Passes of one kind ({@code full} or {@code changes}) so far. */
  public long passes(String pass) {
    Timer timer = registry.find(PREFIX + "pass.duration").tag("pass", pass).timer();
    return timer == null ? 0 : timer.count();
  }

  /** Repairs of one kind and type so far. */
  public double repairs(String kind, String type) {
    Counter counter = registry.find(PREFIX + "repairs").tag("kind", kind).tag("type", type).counter();
    return counter == null ? 0 : counter.count();
  }

  void release(String kind, String reason) {
    Counter.builder(PREFIX + "releases").description("Values freed as their objects changed").tag("kind", kind)
        .tag("reason", reason).register(registry).increment();
  }

  void rebuild() {
    rebuilds.increment();
  }

  void error() {
    errors.increment();
  }

  void leading(boolean leading) {
    leader.set(leading ? 1 : 0);
  }

  /** @param pass {@code full} (every Service and value) or {@code changes} (what changed since the last) */
  void passTook(String pass, Duration duration) {
    Timer.builder(PREFIX + "pass.duration").description("One pass comparing cluster and store").tag("pass", pass)
        .publishPercentileHistogram().register(registry).record(duration);
  }
}
