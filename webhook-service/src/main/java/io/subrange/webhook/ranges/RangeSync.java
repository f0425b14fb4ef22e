package io.subrange.webhook.ranges;

import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.podcidr.ClusterCidr;
import io.subrange.allocator.store.AllocationStore;
import io.subrange.webhook.config.SubrangeProperties;
import io.subrange.webhook.metrics.AllocatorMetrics;
import io.subrange.webhook.metrics.PodCidrMetrics;
import io.subrange.webhook.ranges.model.ClusterCIDR;
import io.subrange.webhook.ranges.model.ServiceCIDR;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Fills the store with the ranges it serves, before the admission port opens, and keeps it
 * current: like the API server, which reads its ServiceCIDRs, not its flags, once they exist.
 *
 * <ul>
 *   <li>Without the API ({@code subrange.kubernetes.enabled=false}) or without a range object's
 *       CRD, that kind of range comes from the configuration alone.
 *   <li>With the CRD, the objects are the ranges: existing ones are loaded first, the
 *       configured defaults stand in under their object names until {@link RangeReconciler}
 *       has created those objects, and informers apply additions, deletions (the range stops
 *       handing out values) and removals as they happen.
 * </ul>
 */
@Component
public class RangeSync implements SmartLifecycle {

  private static final Logger log = LoggerFactory.getLogger(RangeSync.class);

  private final AllocationStore store;
  private final SubrangeProperties properties;
  private final ObjectProvider<KubernetesClient> clients;
  private final AllocatorMetrics allocatorMetrics;
  private final PodCidrMetrics podCidrMetrics;
  private final List<SharedIndexInformer<?>> informers = new ArrayList<>();
  private volatile SharedIndexInformer<ServiceCIDR> serviceCidrs;
  private volatile SharedIndexInformer<ClusterCIDR> clusterCidrs;
  private volatile boolean running;

  public RangeSync(AllocationStore store, SubrangeProperties properties, ObjectProvider<KubernetesClient> clients,
      AllocatorMetrics allocatorMetrics, PodCidrMetrics podCidrMetrics) {
    this.store = store;
    this.properties = properties;
    this.clients = clients;
    this.allocatorMetrics = allocatorMetrics;
    this.podCidrMetrics = podCidrMetrics;
  }

  /** Before the web servers (which start in the last phases), so no request meets an empty store. */
  @Override
  public int getPhase() {
    return 0;
  }

  @Override
  public void start() {
    ConfiguredRanges configured = ConfiguredRanges.from(properties);
    KubernetesClient client = clients.getIfAvailable();
    boolean serviceCidrObjects = false;
    boolean clusterCidrObjects = false;
    if (client != null) {
      awaitApi(client);
      serviceCidrObjects = served(client, ServiceCIDR.GROUP + "/" + ServiceCIDR.VERSION, ServiceCIDR.PLURAL);
      clusterCidrObjects = served(client, ClusterCIDR.GROUP + "/" + ClusterCIDR.VERSION, ClusterCIDR.PLURAL);
    }
    if (serviceCidrObjects) {
      serviceCidrs = inform(client.resources(ServiceCIDR.class).runnableInformer(0), new Handler<>(this::applyServiceCidr,
          this::deleteServiceCidr));
      standInUnlessPresent(serviceCidrs, ConfiguredRanges.SERVICE_CIDR_NAME,
          () -> configured.serviceCidrs().forEach(c -> addServiceRange(ConfiguredRanges.SERVICE_CIDR_NAME, c)));
    } else {
      configured.serviceCidrs().forEach(c -> addServiceRange(ConfiguredRanges.SERVICE_CIDR_NAME, c));
    }
    if (clusterCidrObjects) {
      clusterCidrs = inform(client.resources(ClusterCIDR.class).runnableInformer(0), new Handler<>(this::applyClusterCidr,
          this::deleteClusterCidr));
      configured.clusterCidr().ifPresent(c -> standInUnlessPresent(clusterCidrs, c.name(), () -> addClusterCidr(c)));
    } else {
      configured.clusterCidr().ifPresent(this::addClusterCidr);
    }
    log.info("Service ranges from {}, pod ranges from {}", serviceCidrObjects ? "ServiceCIDR objects" : "configuration",
        clusterCidrObjects ? "ClusterCIDR objects" : "configuration");
    syncMetrics();
    running = true;
  }

  /** The ServiceCIDR informer's cache, when ServiceCIDRs are the source of Service ranges. */
  Optional<SharedIndexInformer<ServiceCIDR>> serviceCidrInformer() {
    return Optional.ofNullable(serviceCidrs);
  }

  /** The ClusterCIDR informer's cache, when ClusterCIDRs are the source of pod ranges. */
  Optional<SharedIndexInformer<ClusterCIDR>> clusterCidrInformer() {
    return Optional.ofNullable(clusterCidrs);
  }

  private void awaitApi(KubernetesClient client) {
    Instant deadline = Instant.now().plus(properties.kubernetes().startupTimeout());
    KubernetesClientException last = null;
    while (Instant.now().isBefore(deadline)) {
      try {
        client.getKubernetesVersion();
        return;
      } catch (KubernetesClientException e) {
        last = e;
        sleep(Duration.ofSeconds(1));
      }
    }
    throw new IllegalStateException("the Kubernetes API at " + client.getMasterUrl() + " did not answer within "
        + properties.kubernetes().startupTimeout().toSeconds() + " s (" + (last == null ? "no answer" : last.getMessage())
        + "); subrange reads its ranges from ServiceCIDR and ClusterCIDR objects there. Set"
        + " SUBRANGE_KUBERNETES_ENABLED=false to use the configuration alone", last);
  }

  /** True when API discovery lists the resource: its CRD is installed and established. */
  static boolean served(KubernetesClient client, String groupVersion, String plural) {
    APIResourceList resources = client.getApiResources(groupVersion);
    return resources != null && resources.getResources().stream().anyMatch(r -> plural.equals(r.getName()));
  }

  /**
   * Starts an informer, waits for its first list and applies what it found right away (the
   * handler's own calls may lag; applying twice changes nothing), so existing objects are in
   * the store before the admission port opens.
   */
  private <T extends HasMetadata> SharedIndexInformer<T> inform(SharedIndexInformer<T> informer, Handler<T> handler) {
    informer.addEventHandler(handler);
    informer.start().toCompletableFuture().join();
    informer.getStore().list().forEach(handler.apply());
    informers.add(informer);
    return informer;
  }

  /** Adds the configured default under its object name unless the object exists (it wins then). */
  private void standInUnlessPresent(SharedIndexInformer<?> informer, String name, Runnable standIn) {
    if (informer.getStore().getByKey(name) == null) {
      standIn.run();
    }
  }

  // ---- ServiceCIDR ------------------------------------------------------------------------

  private void applyServiceCidr(ServiceCIDR object) {
    String name = object.getMetadata().getName();
    List<Cidr> cidrs;
    try {
      cidrs = RangeObjects.serviceCidrs(object);
    } catch (IllegalArgumentException e) {
      log.warn("ServiceCIDR {} is ignored: {}", name, e.getMessage());
      return;
    }
    try {
      cidrs.forEach(cidr -> addServiceRange(name, cidr));
    } catch (IllegalArgumentException e) {
      log.error("ServiceCIDR {} changed its CIDRs to {}, which is not allowed; subrange keeps {}", name, cidrs,
          store.serviceRanges().get(name));
    }
    if (object.getMetadata().getDeletionTimestamp() != null) {
      store.markServiceRangeTerminating(name);
      log.info("ServiceCIDR {} is being deleted: it hands out no more addresses", name);
    }
    syncMetrics();
  }

  private void deleteServiceCidr(ServiceCIDR object) {
    String name = object.getMetadata().getName();
    if (!store.serviceRanges().containsKey(name)) {
      return;
    }
    try {
      store.removeServiceRange(name);
      log.info("ServiceCIDR {} is gone", name);
    } catch (IllegalStateException e) {
      // Only when someone removed the finalizer by hand: keep the range so what it holds stays known.
      store.markServiceRangeTerminating(name);
      log.warn("ServiceCIDR {} was deleted while in use; subrange keeps it terminating: {}", name, e.getMessage());
    }
    syncMetrics();
  }

  private void addServiceRange(String name, Cidr cidr) {
    if (!store.serviceRanges().getOrDefault(name, List.of()).contains(cidr)) {
      ConfiguredRanges.logServiceRange(name, cidr);
    }
    store.addServiceRange(name, cidr);
  }

  // ---- ClusterCIDR ------------------------------------------------------------------------

  private void applyClusterCidr(ClusterCIDR object) {
    String name = object.getMetadata().getName();
    ClusterCidr clusterCidr;
    try {
      clusterCidr = RangeObjects.clusterCidr(object);
    } catch (IllegalArgumentException e) {
      log.warn("ClusterCIDR {} is ignored: {}", name, e.getMessage());
      return;
    }
    try {
      addClusterCidr(clusterCidr);
    } catch (IllegalArgumentException e) {
      log.error("ClusterCIDR {} changed, which is not allowed; subrange keeps the first one: {}", name,
          e.getMessage());
    }
    if (object.getMetadata().getDeletionTimestamp() != null) {
      store.markClusterCidrTerminating(name);
      log.info("ClusterCIDR {} is being deleted: it gives no more pod CIDRs", name);
    }
    syncMetrics();
  }

  private void deleteClusterCidr(ClusterCIDR object) {
    String name = object.getMetadata().getName();
    if (!store.clusterCidrNames().contains(name)) {
      return;
    }
    try {
      store.removeClusterCidr(name);
      log.info("ClusterCIDR {} is gone", name);
    } catch (IllegalStateException e) {
      store.markClusterCidrTerminating(name);
      log.warn("ClusterCIDR {} was deleted while in use; subrange keeps it terminating: {}", name, e.getMessage());
    }
    syncMetrics();
  }

  private void addClusterCidr(ClusterCidr clusterCidr) {
    if (!store.clusterCidrNames().contains(clusterCidr.name())) {
      log.info("ClusterCIDR {}: {}", clusterCidr.name(), clusterCidr);
    }
    store.addClusterCidr(clusterCidr);
  }

  private void syncMetrics() {
    allocatorMetrics.syncRangeGauges();
    podCidrMetrics.syncGauges();
  }

  @Override
  public void stop() {
    informers.forEach(SharedIndexInformer::stop);
    informers.clear();
    running = false;
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  private static void sleep(Duration duration) {
    try {
      Thread.sleep(duration.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Informer callbacks: an added or updated object is applied, a deleted one removed. */
  private record Handler<T>(Consumer<T> apply, Consumer<T> delete)
      implements ResourceEventHandler<T> {

    @Override
    public void onAdd(T object) {
      apply.accept(object);
    }

    @Override
    public void onUpdate(T before, T after) {
      apply.accept(after);
    }

    @Override
    public void onDelete(T object, boolean deletedFinalStateUnknown) {
      delete.accept(object);
    }
  }
}
