package io.subrange.webhook.reconciler;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Events on the objects the reconciler repairs, as kube-apiserver's repair loops write them
 * (reasons ClusterIPOutOfRange, ClusterIPAlreadyAllocated, ClusterIPNotAllocated,
 * PortOutOfRange, PortAlreadyAllocated, PortNotAllocated, CIDRNotAvailable, ...), so
 * {@code kubectl describe} shows what happened. One event per object, reason and message: a
 * problem that persists is not reported again every pass.
 */
public class RepairEvents {

  static final String COMPONENT = "subrange-reconciler";
  private static final Logger log = LoggerFactory.getLogger(RepairEvents.class);

  private final KubernetesClient client;
  private final Set<String> reported = ConcurrentHashMap.newKeySet();

  public RepairEvents(KubernetesClient client) {
    this.client = client;
  }

  /** A Warning event on {@code object}, once; true when this call reported it. */
  public boolean warn(HasMetadata object, String reason, String message) {
    String uid = object.getMetadata().getUid();
    if (!reported.add(uid + "|" + reason + "|" + message)) {
      return false;
    }
    log.warn("{} {}: {}: {}", object.getKind(), object.getMetadata().getNamespace() == null
        ? object.getMetadata().getName() : object.getMetadata().getNamespace() + "/" + object.getMetadata().getName(),
        reason, message);
    String namespace = object.getMetadata().getNamespace() == null ? "default" : object.getMetadata().getNamespace();
    String now = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    try {
      client.v1().events().inNamespace(namespace).resource(new EventBuilder()
          .withNewMetadata()
          .withGenerateName(object.getMetadata().getName() + ".")
          .withNamespace(namespace)
          .endMetadata()
          .withNewInvolvedObject()
          .withApiVersion(object.getApiVersion())
          .withKind(object.getKind())
          .withNamespace(object.getMetadata().getNamespace())
          .withName(object.getMetadata().getName())
          .withUid(uid)
          .withResourceVersion(object.getMetadata().getResourceVersion())
          .endInvolvedObject()
          .withType("Warning")
          .withReason(reason)
          .withMessage(message)
          .withNewSource(COMPONENT, null)
          .withReportingComponent(COMPONENT)
          .withFirstTimestamp(now)
          .withLastTimestamp(now)
          .withCount(1)
          .build()).create();
    } catch (KubernetesClientException e) {
      log.warn("Could not record event {} on {} {}: {}", reason, object.getKind(), object.getMetadata().getName(),
          e.getMessage());
    }
    return true;
  }

  /** Forgets what was reported about objects that are gone, so memory stays bounded. */
  public void retainOnly(Set<String> liveUids) {
    reported.removeIf(key -> !liveUids.contains(key.substring(0, key.indexOf('|'))));
  }
}
