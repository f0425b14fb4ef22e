package io.subrange.webhook.reconciler;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.store.AllocationStore;
import io.subrange.allocator.store.PodCidrUnavailableException;
import io.subrange.webhook.Failures;
import io.subrange.webhook.node.NodePodCidrs;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives pod CIDRs to Nodes that have none, as kube-controller-manager's node IPAM controller does:
 * Nodes that registered before subrange was installed, or while its webhook was down (the Node
 * webhook fails open), would otherwise wait for an unrelated update. On a cluster whose pod
 * network comes from {@code spec.podCIDR} such a node has no pod network until then.
 *
 * <p>The blocks are reserved in the store first (durable, held by the node's name, exactly as
 * the webhook reserves them, so both agree on a node), then written with a JSON Patch that
 * tests the resourceVersion it read: a node that changed meanwhile is read again, and one that
 * got pod CIDRs from elsewhere keeps them (the webhook recorded those through the same store).
 */
final class PodCidrAssignment implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(PodCidrAssignment.class);
  private static final int ATTEMPTS = 5;

  private final AllocationStore store;
  private final KubernetesClient client;
  private final RepairEvents events;
  private final ReconcilerMetrics metrics;
  private final IpFamily primary;
  private final Set<String> inFlight = ConcurrentHashMap.newKeySet();
  /** API calls off the store's committer thread, which completes the reservations. */
  private final ExecutorService writer = Executors.newSingleThreadExecutor(r -> {
    Thread thread = new Thread(r, "subrange-podcidr-assign");
    thread.setDaemon(true);
    return thread;
  });

  PodCidrAssignment(AllocationStore store, KubernetesClient client, RepairEvents events, ReconcilerMetrics metrics,
      IpFamily primary) {
    this.store = store;
    this.client = client;
    this.events = events;
    this.metrics = metrics;
    this.primary = primary;
  }

  /** A node subrange should give pod CIDRs: it has none and is not being deleted. */
  static boolean needs(Node node) {
    return Carried.podCidrs(node).isEmpty() && node.getMetadata().getDeletionTimestamp() == null;
  }

  /**
   * Reserves and writes pod CIDRs for {@code node} when it needs them and no assignment for it
   * is under way; true when this call wrote them.
   */
  CompletableFuture<Boolean> assign(Node node) {
    String name = node.getMetadata().getName();
    if (!needs(node) || !inFlight.add(name)) {
      return CompletableFuture.completedFuture(false);
    }
    io.subrange.allocator.podcidr.NodeView view = NodePodCidrs.view(node, name);
    return store.reservePodCidrs(view, List.of(), false)
        .thenApplyAsync(allocation -> write(view, NodePodCidrs.inOrder(allocation, primary)), writer)
        .handle((written, failure) -> {
          inFlight.remove(name);
          if (failure == null) {
            return written;
          }
          Throwable cause = Failures.cause(failure);
          if (cause instanceof PodCidrUnavailableException unavailable) {
            // No ClusterCIDR selects it, or all that do are full: the node stays without, as
            // upstream leaves it, and says why once.
            events.warn(node, "CIDRNotAvailable", "No pod CIDRs for node " + name + ": " + unavailable.getMessage());
            return false;
          }
          throw Failures.rethrowable(cause);
        });
  }

  private boolean write(io.subrange.allocator.podcidr.NodeView view, List<String> blocks) {
    String name = view.name();
    for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
      Node current = client.nodes().withName(name).get();
      if (current == null || current.getMetadata().getDeletionTimestamp() != null) {
        return false;  // gone or going: the release path frees what it held
      }
      List<Cidr> carried = Carried.podCidrs(current);
      if (!carried.isEmpty()) {
        keepTheirs(view, blocks, carried);
        return false;
      }
      String patch = "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\""
          + current.getMetadata().getResourceVersion() + "\"},"
          + "{\"op\":\"add\",\"path\":\"/spec/podCIDR\",\"value\":\"" + blocks.get(0) + "\"},"
          + "{\"op\":\"add\",\"path\":\"/spec/podCIDRs\",\"value\":[\"" + String.join("\",\"", blocks) + "\"]}]";
      try {
        client.nodes().withName(name).patch(PatchContext.of(PatchType.JSON), patch);
        metrics.repair("podcidr", "assigned");
        log.info("Gave node {} pod CIDRs {}", name, blocks);
        return true;
      } catch (KubernetesClientException e) {
        // 409 or 422: the node changed after we read it (its test failed); read it again.
        if (e.getCode() != 409 && e.getCode() != 422) {
          throw e;
        }
      }
    }
    log.warn("Node {} kept changing; its pod CIDRs {} stay reserved and the next pass writes them", name, blocks);
    return false;
  }

  /**
   * The node got pod CIDRs from elsewhere between our reservation and our write (set while the
   * webhook was down, so the store never recorded them): it keeps them, the store holds those
   * for it instead of ours, and ours go back to the free blocks. Left as they were, the store
   * would hold blocks the node does not carry and let another node have the ones it does.
   */
  private void keepTheirs(io.subrange.allocator.podcidr.NodeView view, List<String> ours, List<Cidr> carried) {
    log.info("Node {} got pod CIDRs {} meanwhile; keeping them and freeing {}", view.name(), carried, ours);
    if (carried.stream().map(Cidr::toString).sorted().toList().equals(ours.stream().sorted().toList())) {
      return;
    }
    store.releasePodCidrs(view.name()).thenCompose(freed -> store.recordPodCidrs(view, carried)).join();
  }

  @Override
  public void close() {
    writer.shutdownNow();
  }
}
