package io.subrange.webhook.service;

import io.subrange.allocator.net.IpFamily;
import io.subrange.webhook.admission.AdmissionDenied;
import java.util.List;

/**
 * The IP families subrange can give new Service addresses in right now, primary first: the
 * primary family is what a Service gets when it does not ask (the first of
 * {@code subrange.service.cidrs}). Empty while no Service range is live (every ServiceCIDR is
 * being deleted): Services that need no new address are still admitted then.
 */
public record ServiceFamilies(List<IpFamily> configured) {

  public ServiceFamilies {
    configured = List.copyOf(configured);
  }

  /** @throws AdmissionDenied when no family has a live range */
  public IpFamily primary() {
    if (configured.isEmpty()) {
      throw noneLive();
    }
    return configured.get(0);
  }

  public boolean has(IpFamily family) {
    return configured.contains(family);
  }

  static AdmissionDenied noneLive() {
    return AdmissionDenied.invalid("no Service range is live: every ServiceCIDR is being deleted or none exists;"
        + " create a ServiceCIDR");
  }
}
