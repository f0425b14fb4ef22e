package io.subrange.webhook.config;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.subrange.allocator.band.AnchoredStart;
import io.subrange.allocator.band.UniformStart;
import io.subrange.allocator.store.AllocationEngine;
import io.subrange.allocator.store.AllocationStore;
import io.subrange.allocator.store.InMemoryAllocationStore;
import io.subrange.webhook.store.ConfigMapAllocationStore;
import io.subrange.webhook.store.InProcessStateRebuild;
import io.subrange.webhook.store.RebuildableStore;
import io.subrange.webhook.store.StoreMetrics;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;

/** Builds the {@link AllocationStore} that {@code subrange.store} names. */
@Configuration(proxyBeanMethods = false)
class StoreConfiguration {

  /** Primary: with the ConfigMap store the {@link RebuildableStore} bean is the same object. */
  @Bean
  @Primary
  AllocationStore allocationStore(SubrangeProperties properties, ObjectProvider<KubernetesClient> clients,
      MeterRegistry registry) {
    // Dynamic start offsets need only be spread out, not secret.
    // Ranges are added by RangeSync: from the configuration, or from range objects.
    KubernetesClient client = clients.getIfAvailable();
    return switch (properties.store()) {
      case MEMORY -> {
        InMemoryAllocationStore memory = new InMemoryAllocationStore(properties.service().nodePortRange(),
            UniformStart.THREAD_LOCAL);
        if (properties.role() != SubrangeProperties.Role.ALL) {
          throw new IllegalStateException("subrange.store=memory keeps allocations inside one process, so it needs"
              + " subrange.role=all (it is " + properties.role().name().toLowerCase() + "); replicas and a separate"
              + " reconciler share state with subrange.store=kubernetes");
        }
        yield memory;
      }
      case KUBERNETES -> {
        if (client == null) {
          throw new IllegalStateException("subrange.store=kubernetes keeps allocations in ConfigMaps, so it needs"
              + " the Kubernetes API: set subrange.kubernetes.enabled=true");
        }
        Duration budget = commitBudget(properties);
        // Each replica allocates around its own anchor, so replicas mostly write different shards.
        AnchoredStart starts = new AnchoredStart();
        AllocationEngine engine = new AllocationEngine(properties.service().nodePortRange(), starts);
        ConfigMapAllocationStore store = new ConfigMapAllocationStore(engine, starts,
            ConfigMapAllocationStore.clientFor(client, budget),
            properties.kubernetes().namespaceOr(client.getNamespace()), budget, new StoreMetrics(registry))
            .lingerBeforeCommit(properties.kubernetes().commitLinger());
        if (properties.role() == SubrangeProperties.Role.RECONCILER) {
          store.loadOthersWritesWhenNeeded().lingerReleases(properties.reconciler().releaseLinger());
        } else if (properties.kubernetes().reserveAhead() > 0) {
          // Half the reconciler's grace: it frees reservations nothing carries once older than that.
          store.reserveAhead(replicaName(), properties.kubernetes().reserveAhead(),
              properties.reconciler().orphanGrace().dividedBy(2), properties.kubernetes().reserveAheadFlush());
        }
        store.start(properties.kubernetes().startupTimeout());
        yield store;
      }
    };
  }

  /**
   * What the reconciler rebuilds: the ConfigMap store's missing ranges, or with the memory store
   * everything, once at start, from what the cluster holds (absent without the API).
   */
  @Bean
  RebuildableStore rebuildableStore(AllocationStore store, ObjectProvider<KubernetesClient> clients) {
    if (store instanceof RebuildableStore rebuildable) {
      return rebuildable;
    }
    if (clients.getIfAvailable() != null && store instanceof InMemoryAllocationStore memory) {
      return new InProcessStateRebuild(memory.engine());
    }
    return null;
  }

  /**
   * This process among the replicas, in the holders of the values it reserves ahead: the pod's
   * name ({@code POD_NAME}, else the hostname) and a part drawn at start, so a restarted pod never takes the values its
   * previous process reserved for its own.
   */
  private static String replicaName() {
    String pod = System.getenv("POD_NAME");
    String host = pod != null && !pod.isBlank() ? pod : System.getenv().getOrDefault("HOSTNAME", "subrange");
    return host + "-" + Integer.toString(ThreadLocalRandom.current().nextInt(1 << 30), 36);
  }

  /** Most of the admission timeout: the store answers 503 itself, before the admission layer gives up. */
  static Duration commitBudget(SubrangeProperties properties) {
    return properties.admission().timeout().multipliedBy(4).dividedBy(5);
  }
}
