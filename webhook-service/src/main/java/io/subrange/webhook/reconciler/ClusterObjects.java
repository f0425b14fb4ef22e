package io.subrange.webhook.reconciler;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.List;
import java.util.Optional;

/**
 * The reconciler's view of the objects that carry allocations: informers on every Service and
 * every Node. Their caches are what the store is compared with; their events drive releases.
 */
public final class ClusterObjects implements AutoCloseable {

  private final SharedIndexInformer<Service> services;
  private final SharedIndexInformer<Node> nodes;

  public ClusterObjects(KubernetesClient client) {
    this.services = client.services().inAnyNamespace().runnableInformer(0);
    this.nodes = client.nodes().runnableInformer(0);
  }

  void onServices(ResourceEventHandler<Service> handler) {
    services.addEventHandler(handler);
  }

  void onNodes(ResourceEventHandler<Node> handler) {
    nodes.addEventHandler(handler);
  }

  /** Starts both informers; they list, then watch. */
  public void start() {
    services.start();
    nodes.start();
  }

  /** True once both have listed everything: comparisons before that would see leaks everywhere. */
  public boolean synced() {
    return services.hasSynced() && nodes.hasSynced();
  }

  public List<Service> services() {
    return services.getStore().list();
  }

  public List<Node> nodes() {
    return nodes.getStore().list();
  }

  public Optional<Node> node(String name) {
    return Optional.ofNullable(nodes.getStore().getByKey(name));
  }

  @Override
  public void close() {
    services.stop();
    nodes.stop();
  }
}
