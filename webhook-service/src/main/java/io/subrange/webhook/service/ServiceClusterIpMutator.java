package io.subrange.webhook.service;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceSpec;
import io.subrange.allocator.net.AddressFormatException;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.store.AllocationException;
import io.subrange.allocator.store.AllocationStore;
import io.subrange.allocator.store.Holder;
import io.subrange.allocator.store.IpAssignment;
import io.subrange.allocator.store.IpClaim;
import io.subrange.allocator.store.ReservationRequest;
import io.subrange.webhook.admission.AdmissionContext;
import io.subrange.webhook.admission.AdmissionDenied;
import io.subrange.webhook.admission.AllocationDenials;
import io.subrange.webhook.admission.Mutator;
import io.subrange.webhook.admission.ObjectKind;
import io.subrange.webhook.admission.Operation;
import io.subrange.webhook.config.SubrangeProperties;
import io.subrange.webhook.metrics.AllocatorMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.springframework.stereotype.Component;

/**
 * Gives a new Service its ClusterIP. Without {@code spec.clusterIP} it gets a free address
 * from the dynamic band of the primary range; with one, the address is reserved if it is in
 * range and free, and the request denied otherwise. Headless and ExternalName Services need
 * no address and pass untouched.
 */
@Component
public class ServiceClusterIpMutator implements Mutator<Service> {

  static final String HEADLESS = "None";
  private static final Set<String> TYPES_WITH_CLUSTER_IP = Set.of("ClusterIP", "NodePort", "LoadBalancer");

  private final AllocationStore store;
  private final AllocatorMetrics metrics;
  private final SubrangeProperties properties;

  public ServiceClusterIpMutator(AllocationStore store, AllocatorMetrics metrics, SubrangeProperties properties) {
    this.store = store;
    this.metrics = metrics;
    this.properties = properties;
  }

  @Override
  public ObjectKind kind() {
    return ObjectKind.SERVICE;
  }

  @Override
  public Class<Service> type() {
    return Service.class;
  }

  @Override
  public Set<Operation> operations() {
    return Set.of(Operation.CREATE);
  }

  @Override
  public CompletableFuture<Service> mutate(AdmissionContext<Service> context) {
    Service service = context.object();
    if (service.getSpec() == null) {
      service.setSpec(new ServiceSpec());
    }
    ServiceSpec spec = service.getSpec();
    String type = spec.getType() == null ? "ClusterIP" : spec.getType();
    if ("ExternalName".equals(type)) {
      return CompletableFuture.completedFuture(service);
    }
    if (!TYPES_WITH_CLUSTER_IP.contains(type)) {
      throw AdmissionDenied.invalid("spec.type: \"" + type + "\" is not one of ClusterIP, NodePort,"
          + " LoadBalancer, ExternalName");
    }
    String requested = requestedClusterIp(spec);
    if (HEADLESS.equals(requested)) {
      return CompletableFuture.completedFuture(service);
    }
    IpClaim claim = requested == null
        ? IpClaim.dynamic(properties.service().primaryFamily())
        : IpClaim.specific(parse(requested));
    Holder holder = Holder.service(context.namespace(), context.name(), "");
    long started = System.nanoTime();
    return store.reserve(ReservationRequest.ips(holder, List.of(claim), context.dryRun()))
        .handle((reservation, failure) -> {
          if (failure != null) {
            throw deny(claim, failure, context.dryRun());
          }
          IpAssignment assigned = reservation.ips().get(0);
          if (!context.dryRun()) {
            metrics.allocated(assigned.range().toString(), assigned.scope(), System.nanoTime() - started);
          }
          String address = assigned.address().toString();
          spec.setClusterIP(address);
          List<String> clusterIps = new ArrayList<>();
          clusterIps.add(address);
          spec.setClusterIPs(clusterIps);
          return service;
        });
  }

  /** spec.clusterIP, or spec.clusterIPs[0] when only that is set; null when neither is. */
  private static String requestedClusterIp(ServiceSpec spec) {
    String single = emptyToNull(spec.getClusterIP());
    List<String> list = spec.getClusterIPs();
    String first = list == null || list.isEmpty() ? null : emptyToNull(list.get(0));
    if (single != null && first != null && !single.equals(first)) {
      throw AdmissionDenied.invalid("spec.clusterIPs[0]: \"" + first + "\" must equal spec.clusterIP \""
          + single + "\"");
    }
    return single != null ? single : first;
  }

  private static String emptyToNull(String value) {
    return value == null || value.isEmpty() ? null : value;
  }

  private static IpAddress parse(String requested) {
    try {
      return IpAddress.parse(requested);
    } catch (AddressFormatException e) {
      throw AdmissionDenied.invalid("spec.clusterIP: " + e.getMessage()
          + "; set a valid address, \"None\" for a headless Service, or leave it empty to get one");
    }
  }

  private RuntimeException deny(IpClaim claim, Throwable failure, boolean dryRun) {
    Throwable cause = failure instanceof CompletionException && failure.getCause() != null
        ? failure.getCause() : failure;
    if (!(cause instanceof AllocationException refusal)) {
      return cause instanceof RuntimeException runtime ? runtime : new CompletionException(cause);
    }
    if (!dryRun) {
      metrics.failed(cidrOf(claim), claim.scope());
    }
    return AllocationDenials.deny("spec.clusterIP", refusal,
        "choose a free address, or leave spec.clusterIP empty to get one from the dynamic band");
  }

  /** The range a failed claim was aimed at, for the errors metric's cidr label. */
  private String cidrOf(IpClaim claim) {
    return properties.service().cidrs().stream()
        .filter(c -> claim.requested() == null ? c.family() == claim.family() : c.contains(claim.requested()))
        .map(Object::toString)
        .findFirst()
        .orElse("none");
  }
}
