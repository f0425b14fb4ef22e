package io.subrange.webhook.service;

import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.store.AllocationStore;
import io.subrange.webhook.admission.AdmissionDenied;
import io.subrange.webhook.config.SubrangeProperties;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.springframework.stereotype.Component;

/**
 * The Service IP families served right now: those with a live Service range (ranges come and go
 * with ServiceCIDR objects), primary first. The primary family is the first of
 * {@code subrange.service.cidrs}, as for kube-apiserver's {@code --service-cluster-ip-range}.
 */
@Component
public class ServiceFamilyResolver {

  private final AllocationStore store;
  private final IpFamily primary;

  public ServiceFamilyResolver(AllocationStore store, SubrangeProperties properties) {
    this.store = store;
    this.primary = properties.service().primaryFamily();
  }

  /** @throws AdmissionDenied when no family has a live range */
  public ServiceFamilies current() {
    Set<IpFamily> served = store.servedFamilies();
    List<IpFamily> ordered = new ArrayList<>();
    if (served.contains(primary)) {
      ordered.add(primary);
    }
    served.stream().filter(f -> f != primary).forEach(ordered::add);
    if (ordered.isEmpty()) {
      throw AdmissionDenied.invalid("no Service range is live: every ServiceCIDR is"
          + " being deleted or none exists; create a ServiceCIDR");
    }
    return new ServiceFamilies(ordered);
  }
}
