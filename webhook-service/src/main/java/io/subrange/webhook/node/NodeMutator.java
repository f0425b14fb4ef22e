package io.subrange.webhook.node;

import io.fabric8.kubernetes.api.model.Node;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.podcidr.PodCidrAllocationException;
import io.subrange.allocator.store.AllocationStore;
import io.subrange.allocator.store.PodCidrUnavailableException;
import io.subrange.webhook.Failures;
import io.subrange.webhook.admission.AdmissionContext;
import io.subrange.webhook.admission.AdmissionDenied;
import io.subrange.webhook.admission.AdmissionTarget;
import io.subrange.webhook.admission.Mutator;
import io.subrange.webhook.admission.ObjectKind;
import io.subrange.webhook.admission.Operation;
import io.subrange.webhook.admission.PatchScope;
import io.subrange.webhook.config.SubrangeProperties;
import io.subrange.webhook.metrics.PodCidrMetrics;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.springframework.stereotype.Component;

/**
 * Gives Nodes their pod CIDRs on create, and on an update of a node that has none yet: blocks
 * from the best ClusterCIDR for the node's labels, primary family first, in
 * {@code spec.podCIDRs} (and {@code spec.podCIDR} = the first). Pod CIDRs a node already
 * carries are recorded when they fit a ClusterCIDR and are free, and refused (409) when another
 * node holds them; once set they never change.
 *
 * <p>A node that cannot get pod CIDRs (no ClusterCIDR selects it, or all that do are full) is
 * admitted without them and with a warning, as the upstream node IPAM controller leaves such a
 * node unassigned: refusing it would keep its kubelet from registering at all.
 */
@Component
public class NodeMutator implements Mutator<Node> {

  private final AllocationStore store;
  private final PodCidrMetrics metrics;
  private final IpFamily primary;

  public NodeMutator(AllocationStore store, PodCidrMetrics metrics, SubrangeProperties properties) {
    this.store = store;
    this.metrics = metrics;
    this.primary = NodePodCidrs.primaryFamily(properties);
  }

  @Override
  public AdmissionTarget<Node> target() {
    return AdmissionTarget.of(ObjectKind.NODE, Node.class, Operation.CREATE, Operation.UPDATE);
  }

  /** Only the spec changes: its pod CIDRs. */
  @Override
  public PatchScope<Node> patchScope() {
    return PatchScope.field("spec", Node::getSpec);
  }

  @Override
  public CompletableFuture<Node> mutate(AdmissionContext<Node> context) {
    Node node = context.object();
    if (context.oldObject() != null && !NodePodCidrs.carried(context.oldObject()).isEmpty()) {
      NodePodCidrs.keepStored(node, context.oldObject());
      return CompletableFuture.completedFuture(node);
    }
    List<Cidr> preset = NodePodCidrs.parse(NodePodCidrs.carried(node));
    long started = System.nanoTime();
    return store.reservePodCidrs(NodePodCidrs.view(node, context.name()), preset, context.dryRun())
        .handle((allocation, failure) -> {
          if (failure != null) {
            return refused(context, node, preset, failure);
          }
          if (!context.dryRun()) {
            metrics.granted(allocation, System.nanoTime() - started);
          }
          if (preset.isEmpty()) {
            NodePodCidrs.write(node, NodePodCidrs.inOrder(allocation, primary));
          }
          return node;
        });
  }

  private Node refused(AdmissionContext<Node> context, Node node, List<Cidr> preset, Throwable failure) {
    Throwable cause = Failures.cause(failure);
    if (!(cause instanceof PodCidrUnavailableException unavailable)) {
      throw Failures.rethrowable(cause);
    }
    if (!context.dryRun()) {
      metrics.refused(unavailable.reason());
    }
    PodCidrAllocationException.Reason reason = unavailable.reason();
    if (reason == PodCidrAllocationException.Reason.COLLISION) {
      throw AdmissionDenied.conflict("spec.podCIDRs: " + unavailable.getMessage());
    }
    if (reason == PodCidrAllocationException.Reason.NOT_IN_ANY_CLUSTER_CIDR) {
      context.warn(NodePodCidrs.unmanagedWarning(preset, context.name()));
    } else {
      context.warn("subrange: " + unavailable.getMessage());
    }
    return node;
  }
}
