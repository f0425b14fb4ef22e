package io.subrange.webhook.ranges;

import io.subrange.webhook.admission.AdmissionContext;
import io.subrange.webhook.admission.AdmissionTarget;
import io.subrange.webhook.admission.AdmissionDenied;
import io.subrange.webhook.admission.Operation;
import io.subrange.webhook.admission.Validator;
import io.subrange.webhook.ranges.model.ServiceCIDR;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.springframework.stereotype.Component;

/**
 * Admits a ServiceCIDR only with ranges subrange can serve: one or two canonical CIDRs, each a
 * usable Service range, at most one per IP family. {@code spec.cidrs} never changes after
 * creation; updates that leave it alone (status, labels, finalizers, deletion) always pass, so
 * an object stored before this webhook existed can still be finalized.
 */
@Component
public class ServiceCidrValidator implements Validator<ServiceCIDR> {

  @Override
  public AdmissionTarget<ServiceCIDR> target() {
    return AdmissionTarget.of(ServiceCIDR.OBJECT_KIND, ServiceCIDR.class, Operation.CREATE, Operation.UPDATE);
  }

  @Override
  public CompletableFuture<List<String>> validate(AdmissionContext<ServiceCIDR> context) {
    ServiceCIDR old = context.oldObject();
    if (context.operation() == Operation.UPDATE && old != null) {
      List<String> before = cidrs(old);
      List<String> after = cidrs(context.object());
      if (!Objects.equals(before, after)) {
        throw AdmissionDenied.invalid("spec.cidrs: field is immutable: it is " + show(before) + " and the update"
            + " asks for " + show(after) + "; to change the ranges, create a new ServiceCIDR and delete this one");
      }
      return CompletableFuture.completedFuture(List.of());
    }
    try {
      RangeObjects.serviceCidrs(context.object());
    } catch (InvalidRangeObjectException e) {
      throw AdmissionDenied.invalid(e.getMessage());
    }
    return CompletableFuture.completedFuture(List.of());
  }

  private static List<String> cidrs(ServiceCIDR object) {
    return object == null || object.getSpec() == null ? null : object.getSpec().cidrs();
  }

  private static String show(List<String> cidrs) {
    return cidrs == null ? "unset" : cidrs.stream().map(c -> c == null ? "null" : "\"" + c + "\"")
        .collect(Collectors.joining(", ", "[", "]"));
  }
}
