package io.subrange.webhook.ranges;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.subrange.allocator.podcidr.ClusterCidr;
import io.subrange.allocator.store.AllocationStore;
import io.subrange.allocator.store.RangeView;
import io.subrange.webhook.config.SubrangeProperties;
import io.subrange.webhook.ranges.model.ClusterCIDR;
import io.subrange.webhook.ranges.model.ClusterCIDRSpec;
import io.subrange.webhook.ranges.model.ServiceCIDR;
import io.subrange.webhook.ranges.model.ServiceCIDRSpec;
import io.subrange.webhook.ranges.model.ServiceCIDRStatus;
import io.subrange.webhook.ranges.model.ServiceCIDRUsage;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.stereotype.Component;

/**
 * Keeps range objects in step with the store; the acting reconciler runs it every
 * {@code subrange.kubernetes.reconcile-interval}:
 * <ul>
 *   <li>creates the configured defaults, ServiceCIDR {@value ConfiguredRanges#SERVICE_CIDR_NAME}
 *       and ClusterCIDR {@code default-cluster-cidr}, when they do not exist, as the API server
 *       makes its ServiceCIDR from its flags;
 *   <li>holds a range object's deletion with the finalizer {@value #FINALIZER} while values only
 *       it covers are in use (KEP-1880), and lets it go once they are not;
 *   <li>keeps ServiceCIDR status current: Ready and Terminating conditions, usage per CIDR.
 * </ul>
 */
@Component
public class RangeReconciler {

  static final String FINALIZER = "subrange.io/range-protection";
  private static final Logger log = LoggerFactory.getLogger(RangeReconciler.class);

  private final RangeSync sync;
  private final AllocationStore store;
  /** The configured defaults, worked out once (that logs what cannot be honoured, once). */
  private ConfiguredRanges configured;
  private final SubrangeProperties properties;
  private final KubernetesClient client;

  public RangeReconciler(RangeSync sync, AllocationStore store, SubrangeProperties properties,
      ObjectProvider<KubernetesClient> clients) {
    this.sync = sync;
    this.store = store;
    this.properties = properties;
    this.client = clients.getIfAvailable();
  }

  /** One pass over the range objects; the acting reconciler calls it (see ReconcilerRunner). */
  public synchronized void reconcile() {
    if (configured == null) {
      configured = ConfiguredRanges.from(properties);
    }
    sync.serviceCidrInformer().ifPresent(informer -> {
      if (informer.getStore().getByKey(ConfiguredRanges.SERVICE_CIDR_NAME) == null) {
        createDefault(new ServiceCIDR(ConfiguredRanges.SERVICE_CIDR_NAME,
            new ServiceCIDRSpec(configured.serviceCidrs().stream().map(Object::toString).toList())));
      }
      for (ServiceCIDR object : informer.getStore().list()) {
        reconcileServiceCidr(object);
      }
    });
    sync.clusterCidrInformer().ifPresent(informer -> {
      configured.clusterCidr().filter(c -> informer.getStore().getByKey(c.name()) == null)
          .ifPresent(c -> createDefault(new ClusterCIDR(c.name(), spec(c))));
      for (ClusterCIDR object : informer.getStore().list()) {
        reconcileClusterCidr(object);
      }
    });
  }

  private void createDefault(HasMetadata object) {
    try {
      client.resource(object).create();
      log.info("Created {} {} from the configuration", object.getKind(), object.getMetadata().getName());
    } catch (KubernetesClientException e) {
      if (e.getCode() != 409) {
        throw e;
      }
    }
  }

  private void reconcileServiceCidr(ServiceCIDR object) {
    String name = object.getMetadata().getName();
    if (!store.serviceRanges().containsKey(name)) {
      return;  // ignored as invalid (RangeSync logged why)
    }
    boolean deleting = object.getMetadata().getDeletionTimestamp() != null;
    long stranded = deleting ? store.serviceRangeInUseOnlyBy(name) : 0;
    if (!deleting) {
      ensureFinalizer(object, ServiceCIDR.class);
    } else if (stranded == 0) {
      releaseFinalizer(object, ServiceCIDR.class);
      return;
    }
    ServiceCIDRStatus desired = statusFor(object, deleting, stranded);
    if (!sameStatus(object.getStatus(), desired)) {
      client.resources(ServiceCIDR.class).withName(name).editStatus(current -> {
        current.setStatus(desired);
        return current;
      });
    }
  }

  private void reconcileClusterCidr(ClusterCIDR object) {
    String name = object.getMetadata().getName();
    if (!store.clusterCidrNames().contains(name)) {
      return;
    }
    if (object.getMetadata().getDeletionTimestamp() == null) {
      ensureFinalizer(object, ClusterCIDR.class);
    } else if (!store.clusterCidrInUse(name)) {
      releaseFinalizer(object, ClusterCIDR.class);
    }
  }

  private <T extends HasMetadata> void ensureFinalizer(T object, Class<T> type) {
    if (!object.getMetadata().getFinalizers().contains(FINALIZER)) {
      client.resources(type).withName(object.getMetadata().getName()).edit(current -> {
        if (!current.getMetadata().getFinalizers().contains(FINALIZER)) {
          current.getMetadata().getFinalizers().add(FINALIZER);
        }
        return current;
      });
    }
  }

  private <T extends HasMetadata> void releaseFinalizer(T object, Class<T> type) {
    if (object.getMetadata().getFinalizers().contains(FINALIZER)) {
      client.resources(type).withName(object.getMetadata().getName()).edit(current -> {
        current.getMetadata().getFinalizers().remove(FINALIZER);
        return current;
      });
      log.info("{} {} holds nothing any more; its deletion goes ahead", object.getKind(),
          object.getMetadata().getName());
    }
  }

  private ServiceCIDRStatus statusFor(ServiceCIDR object, boolean deleting, long stranded) {
    String name = object.getMetadata().getName();
    List<ServiceCIDRUsage> usage = new ArrayList<>();
    for (RangeView view : store.describeRanges()) {
      if (view.kind() == RangeView.Kind.SERVICE_IPS && view.name().equals(name)) {
        usage.add(ServiceCIDRUsage.of(view.usage()));
      }
    }
    Long generation = object.getMetadata().getGeneration();
    Condition ready = deleting
        ? condition(ServiceCIDRStatus.READY, "False", "Terminating", "being deleted: hands out no new addresses",
            generation)
        : condition(ServiceCIDRStatus.READY, "True", "Allocating", "hands out addresses", generation);
    Condition terminating = deleting
        ? condition(ServiceCIDRStatus.TERMINATING, "True", "InUse", stranded + " addresses that no other ServiceCIDR"
            + " covers are in use; deletion waits until they are released", generation)
        : condition(ServiceCIDRStatus.TERMINATING, "False", "NotDeleting", "not being deleted", generation);
    ServiceCIDRStatus current = object.getStatus();
    return new ServiceCIDRStatus(List.of(keepTransitionTime(current, ready), keepTransitionTime(current, terminating)),
        usage);
  }

  private static Condition condition(String type, String status, String reason, String message, Long generation) {
    return new ConditionBuilder().withType(type).withStatus(status).withReason(reason).withMessage(message)
        .withObservedGeneration(generation)
        .withLastTransitionTime(Instant.now().truncatedTo(ChronoUnit.SECONDS).toString()).build();
  }

  /** A condition whose status did not change keeps the time it last changed. */
  private static Condition keepTransitionTime(ServiceCIDRStatus current, Condition desired) {
    if (current == null) {
      return desired;
    }
    return current.condition(desired.getType())
        .filter(c -> Objects.equals(c.getStatus(), desired.getStatus()))
        .map(c -> new ConditionBuilder(desired).withLastTransitionTime(c.getLastTransitionTime()).build())
        .orElse(desired);
  }

  private static boolean sameStatus(ServiceCIDRStatus current, ServiceCIDRStatus desired) {
    return current != null && Objects.equals(current.usage(), desired.usage())
        && Objects.equals(current.conditions(), desired.conditions());
  }

  private static ClusterCIDRSpec spec(ClusterCidr clusterCidr) {
    return new ClusterCIDRSpec(null, clusterCidr.perNodeHostBits(),
        clusterCidr.ipv4() == null ? null : clusterCidr.ipv4().toString(),
        clusterCidr.ipv6() == null ? null : clusterCidr.ipv6().toString());
  }
}
