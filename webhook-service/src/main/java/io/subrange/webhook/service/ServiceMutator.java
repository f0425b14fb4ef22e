package io.subrange.webhook.service;

import io.fabric8.kubernetes.api.model.Service;
import io.subrange.allocator.store.AllocationException;
import io.subrange.allocator.store.AllocationStore;
import io.subrange.allocator.store.Holder;
import io.subrange.allocator.store.IpClaim;
import io.subrange.allocator.store.PortClaim;
import io.subrange.allocator.store.ReservationRequest;
import io.subrange.webhook.Failures;
import io.subrange.webhook.admission.AdmissionContext;
import io.subrange.webhook.admission.AdmissionDenied;
import io.subrange.webhook.admission.AdmissionTarget;
import io.subrange.webhook.admission.AllocationDenials;
import io.subrange.webhook.admission.Mutator;
import io.subrange.webhook.admission.ObjectKind;
import io.subrange.webhook.admission.Operation;
import io.subrange.webhook.admission.PatchScope;
import io.subrange.webhook.config.SubrangeProperties;
import io.subrange.webhook.metrics.AllocatorMetrics;
import java.util.concurrent.CompletableFuture;
import org.springframework.stereotype.Component;

/**
 * Gives Services their ClusterIPs and NodePorts on create and update (see
 * {@link ServiceAllocationPlan} for the rules): every value one Service needs is reserved in
 * one request, granted together or not at all. Headless and ExternalName Services get no
 * address; what an update gives up is released only once the change is stored.
 */
@Component
public class ServiceMutator implements Mutator<Service> {

  private final AllocationStore store;
  private final AllocatorMetrics metrics;
  private final ServiceFamilyResolver families;
  private final ExistingServices existing;
  private final int maxNodePorts;
  private final boolean nameOtherNamespaces;

  public ServiceMutator(AllocationStore store, AllocatorMetrics metrics, ServiceFamilyResolver families,
      ExistingServices existing, SubrangeProperties properties) {
    this.store = store;
    this.metrics = metrics;
    this.families = families;
    this.existing = existing;
    this.maxNodePorts = properties.service().maxNodePortsPerService();
    this.nameOtherNamespaces = properties.admission().nameOtherNamespacesHolders();
  }

  @Override
  public AdmissionTarget<Service> target() {
    return AdmissionTarget.of(ObjectKind.SERVICE, Service.class, Operation.CREATE, Operation.UPDATE);
  }

  /** Only the spec changes: ClusterIPs, families and their policy, NodePorts. */
  @Override
  public PatchScope<Service> patchScope() {
    return PatchScope.field("spec", Service::getSpec);
  }

  @Override
  public CompletableFuture<Service> mutate(AdmissionContext<Service> context) {
    Service service = context.object();
    ServiceAllocationPlan plan = ServiceAllocationPlan.normalising(service, context.oldObject(), families.current());
    plan.requireAtMostNewNodePorts(maxNodePorts);
    if (plan.ipClaims().isEmpty() && plan.portClaims().isEmpty()) {
      return CompletableFuture.completedFuture(service);
    }
    Holder holder = Holder.service(context.namespace(), context.name(), context.uid());
    if (context.oldObject() == null && store.holdsAnythingFor(holder)) {
      // A create of a name that holds values: a retry keeps them; a duplicate of a stored
      // Service gets kube-apiserver's own answer, and nothing new is reserved for it.
      return existing.exists(context.namespace(), context.name()).thenCompose(exists -> {
        if (exists) {
          throw AdmissionDenied.alreadyExists("services", context.name());
        }
        return reserve(context, service, plan, holder);
      });
    }
    return reserve(context, service, plan, holder);
  }

  private CompletableFuture<Service> reserve(AdmissionContext<Service> context, Service service,
      ServiceAllocationPlan plan, Holder holder) {
    ReservationRequest request = new ReservationRequest(holder, plan.ipClaims(), plan.portClaims(), context.dryRun());
    long started = System.nanoTime();
    return store.reserve(request).handle((reservation, failure) -> {
      if (failure != null) {
        throw deny(plan, request, failure, context.namespace());
      }
      if (!request.dryRun()) {
        metrics.granted(reservation, System.nanoTime() - started);
      }
      plan.apply(reservation);
      plan.warnings(request, reservation).forEach(context::warn);
      return service;
    });
  }

  private RuntimeException deny(ServiceAllocationPlan plan, ReservationRequest request, Throwable failure,
      String namespace) {
    Throwable cause = Failures.cause(failure);
    if (!(cause instanceof AllocationException refusal)) {
      return Failures.rethrowable(cause);
    }
    if (!request.dryRun()) {
      metrics.refused(refusal);
    }
    return AllocationDenials.deny(plan.fieldOf(refusal.failedClaim()), refusal, hint(refusal.failedClaim()),
        holder -> nameOtherNamespaces || holder.namespace().equals(namespace));
  }

  private static String hint(Object claim) {
    if (claim instanceof PortClaim) {
      return "choose a free port, or leave it unset (0) to get one from the dynamic band";
    }
    if (claim instanceof IpClaim) {
      return "choose a free address, or leave spec.clusterIP empty to get one from the dynamic band";
    }
    return "";
  }
}
