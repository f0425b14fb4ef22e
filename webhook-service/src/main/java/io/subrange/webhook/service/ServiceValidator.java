package io.subrange.webhook.service;

import io.fabric8.kubernetes.api.model.Service;
import io.subrange.allocator.store.AllocationException;
import io.subrange.allocator.store.AllocationStore;
import io.subrange.allocator.store.Holder;
import io.subrange.allocator.store.IpClaim;
import io.subrange.allocator.store.PortClaim;
import io.subrange.allocator.store.ReservationRequest;
import io.subrange.allocator.store.Scope;
import io.subrange.webhook.Failures;
import io.subrange.webhook.admission.AdmissionContext;
import io.subrange.webhook.admission.AdmissionTarget;
import io.subrange.webhook.admission.AllocationDenials;
import io.subrange.webhook.admission.ObjectKind;
import io.subrange.webhook.admission.Operation;
import io.subrange.webhook.admission.Validator;
import io.subrange.webhook.config.SubrangeProperties;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.springframework.stereotype.Component;

/**
 * Checks the addresses and ports a Service carries as it is stored, whether or not the mutating
 * webhook ran for it (it may have been registered later, or skipped): a value another object
 * holds is refused with the same message the mutating webhook gives, and a free one is recorded
 * as this Service's, so subrange never hands it out again. A value a webhook replica reserved
 * ahead and handed to this Service counts as its own: that replica names the Service its holder a
 * moment later (see {@code store/ReservedAhead}), and nothing is written here.
 *
 * <p>{@code manifests/} send it only the Services whose mutating entry fails open (kube-system's,
 * the API server's own); every other Service went through {@code /mutate}, which made the same
 * check. README ("/validate") says when to register it for all Services.
 */
@Component
public class ServiceValidator implements Validator<Service> {

  private final AllocationStore store;
  private final ServiceFamilyResolver families;
  private final int maxNodePorts;
  private final boolean nameOtherNamespaces;

  public ServiceValidator(AllocationStore store, ServiceFamilyResolver families, SubrangeProperties properties) {
    this.store = store;
    this.families = families;
    this.maxNodePorts = properties.service().maxNodePortsPerService();
    this.nameOtherNamespaces = properties.admission().nameOtherNamespacesHolders();
  }

  @Override
  public AdmissionTarget<Service> target() {
    return AdmissionTarget.of(ObjectKind.SERVICE, Service.class, Operation.CREATE, Operation.UPDATE);
  }

  @Override
  public CompletableFuture<List<String>> validate(AdmissionContext<Service> context) {
    ServiceAllocationPlan plan = ServiceAllocationPlan.normalising(context.object(), context.oldObject(), families.current());
    plan.requireAtMostNewNodePorts(maxNodePorts);
    // Only what the Service carries; empty fields are the mutating webhook's business.
    List<IpClaim> ips = plan.ipClaims().stream().filter(c -> c.scope() == Scope.STATIC).toList();
    List<PortClaim> ports = plan.portClaims().stream().filter(c -> c.scope() == Scope.STATIC).toList();
    if (ips.isEmpty() && ports.isEmpty()) {
      return CompletableFuture.completedFuture(List.of());
    }
    Holder holder = Holder.service(context.namespace(), context.name(), context.uid());
    // A value a replica reserved ahead and handed to this Service is named its own shortly after.
    ReservationRequest request = new ReservationRequest(holder, ips, ports, context.dryRun()).withReservedAheadAsHeld();
    return store.reserve(request)
        .handle((reservation, failure) -> {
          if (failure == null) {
            return plan.warnings(request, reservation);
          }
          Throwable cause = Failures.cause(failure);
          if (cause instanceof AllocationException refusal) {
            throw AllocationDenials.deny(plan.fieldOf(refusal.failedClaim()), refusal,
                "choose a free value, or leave the field empty to get one",
                taker -> nameOtherNamespaces || taker.namespace().equals(context.namespace()));
          }
          throw Failures.rethrowable(cause);
        });
  }
}
