package io.subrange.webhook.reconciler;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.subrange.allocator.net.IpAddress;
import io.subrange.webhook.kubernetes.KubernetesClients;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The reconciler's view of the objects that carry allocations: informers on every Service and
 * every Node. Their caches are what the store is compared with; their events drive releases.
 *
 * <p>Services come and go with every create and delete, so their informer has a client of its own
 * whose events are decoded and handled on the I/O thread that read them
 * ({@link KubernetesClients#forHandlersThatNeverBlock}): one wake-up per event instead of two. Its
 * handlers (the reconciler's Service events) must never block: they note what changed and hand
 * releases to the store, whose answers come on its committer. Nodes, whose handler assigns pod
 * CIDRs through the API, keep the shared client.
 *
 * <p>Not final: a test stands in for the index at a moment the informer changed it.
 */
public class ClusterObjects implements AutoCloseable {

  private final KubernetesClient serviceClient;
  private final SharedIndexInformer<Service> services;
  private final SharedIndexInformer<Node> nodes;

  private static final String CARRIED = "carried";

  public ClusterObjects(KubernetesClient client) {
    this.serviceClient = KubernetesClients.forHandlersThatNeverBlock(client.getConfiguration());
    this.services = serviceClient.services().inAnyNamespace().runnableInformer(0);
    this.services.addIndexers(Map.of(CARRIED, ClusterObjects::carriedValues));
    this.nodes = client.nodes().runnableInformer(0);
  }

  /** Index keys for what a Service carries: its ClusterIPs, and "port:N" for its NodePorts. */
  private static List<String> carriedValues(Service service) {
    List<String> values = new ArrayList<>();
    Carried.clusterIps(service).forEach(ip -> values.add(ip.toString()));
    Carried.nodePorts(service).forEach(port -> values.add("port:" + port));
    return values;
  }

  /** The Services that carry a ClusterIP now. */
  public List<Service> carrying(IpAddress address) {
    return services.getIndexer().byIndex(CARRIED, address.toString());
  }

  /** The Services that carry a NodePort now. */
  public List<Service> carryingNodePort(int port) {
    return services.getIndexer().byIndex(CARRIED, "port:" + port);
  }

  /** A handler of Service events; it runs on an I/O thread and must never block (see the class comment). */
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

  /** A Service by its informer key, "namespace/name" ({@link #keyOf}). */
  public Optional<Service> service(String key) {
    return Optional.ofNullable(services.getStore().getByKey(key));
  }

  /** A Service's key in the informer's cache. */
  static String keyOf(Service service) {
    return Cache.metaNamespaceKeyFunc(service);
  }

  public Optional<Node> node(String name) {
    return Optional.ofNullable(nodes.getStore().getByKey(name));
  }

  @Override
  public void close() {
    services.stop();
    nodes.stop();
    serviceClient.close();
  }
}
