package io.subrange.webhook.node;

import io.fabric8.kubernetes.api.model.Node;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.podcidr.PodCidrAllocationException;
import io.subrange.allocator.store.AllocationStore;
import io.subrange.allocator.store.PodCidrUnavailableException;
import io.subrange.webhook.Failures;
import io.subrange.webhook.admission.AdmissionContext;
import io.subrange.webhook.admission.AdmissionDenied;
import io.subrange.webhook.admission.AdmissionTarget;
import io.subrange.webhook.admission.ObjectKind;
import io.subrange.webhook.admission.Operation;
import io.subrange.webhook.admission.Validator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.springframework.stereotype.Component;

/**
 * Checks the pod CIDRs a Node carries as it is stored, whether or not the mutating webhook ran:
 * they may not change once set, and may not be blocks another node holds (409, the same message
 * the mutating webhook gives). Free ones inside a ClusterCIDR are recorded as this node's.
 */
@Component
public class NodeValidator implements Validator<Node> {

  private final AllocationStore store;

  public NodeValidator(AllocationStore store) {
    this.store = store;
  }

  @Override
  public AdmissionTarget<Node> target() {
    return AdmissionTarget.of(ObjectKind.NODE, Node.class, Operation.CREATE, Operation.UPDATE);
  }

  @Override
  public CompletableFuture<List<String>> validate(AdmissionContext<Node> context) {
    Node node = context.object();
    List<String> stored = context.oldObject() == null ? List.of() : NodePodCidrs.carried(context.oldObject());
    if (!stored.isEmpty() && !stored.equals(NodePodCidrs.carried(node))) {
      throw AdmissionDenied.invalid("spec.podCIDRs: field is immutable once set: it is " + stored
          + " and cannot become " + NodePodCidrs.carried(node));
    }
    boolean keptFromBefore = !stored.isEmpty();  // and unchanged, as just checked
    List<Cidr> carried = NodePodCidrs.parse(NodePodCidrs.carried(node));
    if (carried.isEmpty()) {
      return CompletableFuture.completedFuture(List.of());
    }
    return store.reservePodCidrs(NodePodCidrs.view(node, context.name()), carried, context.dryRun())
        .handle((allocation, failure) -> {
          if (failure == null) {
            return List.<String>of();
          }
          Throwable cause = Failures.cause(failure);
          if (cause instanceof PodCidrUnavailableException unavailable) {
            if (unavailable.reason() == PodCidrAllocationException.Reason.COLLISION) {
              if (keptFromBefore) {
                // The node had these blocks before this request (set before subrange saw it):
                // refusing the update would not undo that, only stop the node's other changes.
                return List.of("subrange: " + unavailable.getMessage() + "; the node had these pod CIDRs before"
                    + " this update, so the update is allowed and the conflict is left as it was");
              }
              throw AdmissionDenied.conflict("spec.podCIDRs: " + unavailable.getMessage());
            }
            return List.of(NodePodCidrs.unmanagedWarning(carried, context.name()));
          }
          throw Failures.rethrowable(cause);
        });
  }
}
