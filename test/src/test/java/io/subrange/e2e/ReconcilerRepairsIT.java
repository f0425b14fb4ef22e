package io.subrange.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.subrange.testing.ControlPlane;
import io.subrange.testing.ReplicatedCluster;
import io.subrange.testing.ServiceValues;
import io.subrange.testing.StoredAllocations;
import io.subrange.testing.WebhookRegistration;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The reconciler's repairs on a real API server: Services created while the API server did not
 * call subrange (its webhook configuration was gone) carry values subrange never gave out; once
 * it is called again, the reconciler records what it can and reports what it cannot, as Events
 * on the Services, like kube-apiserver's own repair loops.
 */
@ExtendWith(ReplicatedE2e.class)
class ReconcilerRepairsIT {

  @Test
  void valuesGivenOutBehindSubrangesBackAreRecordedOrReported(ReplicatedCluster cluster) {
    KubernetesClient client = cluster.client();
    ControlPlane.ensureNamespace(client, "repairs");
    // Other tests' Services share this API server and subrange: take values neither holds.
    Set<String> taken = new HashSet<>();
    ServiceValues.byService(client).values().forEach(taken::addAll);
    StoredAllocations before = cluster.stored();
    taken.addAll(before.clusterIps().keySet());
    before.nodePorts().keySet().forEach(p -> taken.add(String.valueOf(p)));
    // A replica's pools reserved ahead ("clusterip/10.96.x.y", "nodeport/3xxxx"): a value in one
    // would be adopted as a reservation handed out, not reported as given out behind subrange's back.
    before.reservedAhead().keySet().forEach(value -> taken.add(value.substring(value.indexOf('/') + 1)));
    String inside = IntStream.range(200, 250).mapToObj(i -> "10.96.14." + i).filter(ip -> !taken.contains(ip))
        .findFirst().orElseThrow();
    int port = IntStream.range(32100, 32150).filter(p -> !taken.contains(String.valueOf(p))).findFirst().orElseThrow();
    WebhookRegistration.unregister(client, cluster::serviceCreatesAdmitted);
    try {
      create(client, "inside", inside, port);  // in subrange's 10.96.0.0/20
      create(client, "outside", "10.96.200.5", null);    // the API server's /16 only
    } finally {
      cluster.registerWebhooks();
    }

    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      assertThat(reasons(client, "inside")).contains("ClusterIPNotAllocated", "PortNotAllocated");
      assertThat(reasons(client, "outside")).contains("ClusterIPOutOfRange");
      StoredAllocations stored = cluster.stored();
      assertThat(stored.clusterIps()).containsEntry(inside, "repairs/inside");
      assertThat(stored.nodePorts()).containsEntry(port, "repairs/inside");
    });
    assertThat(message(client, "outside", "ClusterIPOutOfRange")).contains("10.96.200.5")
        .contains("10.96.0.0/20");

    KubernetesClientException refused = E2eSupport.refused(() -> create(client, "latecomer", inside, null));
    assertThat(refused.getMessage()).as("recorded, so a later request for it names its holder")
        .contains("repairs/inside");
    assertThat(cluster.reconciler().metric("subrange_reconciler_repairs_total",
        Map.of("kind", "clusterip", "type", "out_of_range"))).isGreaterThanOrEqualTo(1);

    client.services().inNamespace("repairs").delete();
  }

  private static Service create(KubernetesClient client, String name, String clusterIp, Integer nodePort) {
    return client.services().inNamespace("repairs").resource(new ServiceBuilder()
        .withNewMetadata().withName(name).endMetadata()
        .withNewSpec().withType(nodePort == null ? "ClusterIP" : "NodePort").withClusterIP(clusterIp)
        .addNewPort().withPort(80).withNodePort(nodePort).endPort().endSpec().build()).create();
  }

  private static List<String> reasons(KubernetesClient client, String service) {
    return events(client, service).stream().map(Event::getReason).toList();
  }

  private static String message(KubernetesClient client, String service, String reason) {
    return events(client, service).stream().filter(e -> reason.equals(e.getReason())).map(Event::getMessage)
        .findFirst().orElse("");
  }

  private static List<Event> events(KubernetesClient client, String service) {
    return client.v1().events().inNamespace("repairs").list().getItems().stream()
        .filter(e -> service.equals(e.getInvolvedObject().getName())).toList();
  }
}
