package io.subrange.webhook.ranges;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.subrange.webhook.admission.AdmissionContext;
import io.subrange.webhook.admission.AdmissionTarget;
import io.subrange.webhook.admission.Mutator;
import io.subrange.webhook.admission.Operation;
import io.subrange.webhook.ranges.model.ClusterCIDR;
import io.subrange.webhook.ranges.model.ServiceCIDR;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.springframework.stereotype.Component;

/**
 * Puts {@value RangeReconciler#FINALIZER} on a range object as it is created, as the API server
 * does for its own ServiceCIDRs: a range deleted a moment after it handed out its first value
 * must still wait, and a finalizer added later by {@link RangeReconciler} could come too late.
 */
final class RangeFinalizers {

  private RangeFinalizers() {
  }

  static <T extends HasMetadata> CompletableFuture<T> withFinalizer(T object) {
    List<String> finalizers = new ArrayList<>(object.getMetadata().getFinalizers());
    if (!finalizers.contains(RangeReconciler.FINALIZER)) {
      finalizers.add(RangeReconciler.FINALIZER);
      object.getMetadata().setFinalizers(finalizers);
    }
    return CompletableFuture.completedFuture(object);
  }

  @Component
  static class ForServiceCidrs implements Mutator<ServiceCIDR> {

    @Override
    public AdmissionTarget<ServiceCIDR> target() {
      return AdmissionTarget.of(ServiceCIDR.OBJECT_KIND, ServiceCIDR.class, Operation.CREATE);
    }

    @Override
    public CompletableFuture<ServiceCIDR> mutate(AdmissionContext<ServiceCIDR> context) {
      return withFinalizer(context.object());
    }
  }

  @Component
  static class ForClusterCidrs implements Mutator<ClusterCIDR> {

    @Override
    public AdmissionTarget<ClusterCIDR> target() {
      return AdmissionTarget.of(ClusterCIDR.OBJECT_KIND, ClusterCIDR.class, Operation.CREATE);
    }

    @Override
    public CompletableFuture<ClusterCIDR> mutate(AdmissionContext<ClusterCIDR> context) {
      return withFinalizer(context.object());
    }
  }
}
