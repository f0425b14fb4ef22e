package io.subrange.webhook.service;

import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.store.AllocationStore;
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

  /** The families with a live range; empty when there is none. */
  public ServiceFamilies current() {
    Set<IpFamily> served = store.servedFamilies();
    List<IpFamily> ordered = new ArrayList<>();
    if (served.contains(primary)) {
      ordered.add(primary);
    }
    served.stream().filter(f -> f != primary).forEach(ordered::add);
    return new ServiceFamilies(ordered);
  }
}
