package io.subrange.e2e;

import static io.subrange.e2e.E2eSupport.refused;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.subrange.testing.ControlPlane;
import io.subrange.testing.WebhookRegistration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The validating webhook alone, with the MutatingWebhookConfiguration removed:
 * <ul>
 *   <li>a Node whose preset pod CIDRs another node holds is refused with subrange's message
 *       (the API server itself never checks pod CIDRs);
 *   <li>a Service that takes a free address without subrange is recorded, so once the mutating
 *       webhook is back, a request for that address names the Service that holds it;
 *   <li>a Service whose address is in no Service range subrange serves is refused (KEP-1880:
 *       every ClusterIP belongs to a ServiceCIDR).
 * </ul>
 * Services are validated only where the mutating entry fails open: kube-system's, and the API
 * server's own (labelled provider=kubernetes), which these Services are labelled as.
 * (For a Service asking for an address another Service holds, the 1.20 API server's own
 * allocator answers first, before validating webhooks run.)
 */
@ExtendWith(E2eCluster.class)
class ValidatingWithoutMutationIT {

  private static final String NAMESPACE = "e2e-validate";

  @Test
  void theValidatingWebhookGuardsAndRecordsWhatTheMutatingOneNeverSaw(E2eCluster cluster) throws Exception {
    KubernetesClient client = cluster.client();
    ControlPlane.ensureNamespace(client, NAMESPACE);
    client.nodes().resource(node("v-holder", "10.244.240.0/24", "fd00:244::f000/120")).create();
    Map<String, String> mutations = Map.of("webhook", "mutate");
    Service unseen;
    try {
      WebhookRegistration.unregisterMutating(client,
          () -> cluster.subrange().metric("subrange_admission_requests_total", WebhookRegistration.SERVICE_CREATES));
      double mutateCallsBefore = cluster.subrange().metric("subrange_admission_requests_total", mutations);

      KubernetesClientException refusal = refused(() -> client.nodes()
          .resource(node("v-clash", "10.244.240.0/24", "fd00:244::f100/120")).create());
      assertThat(refusal.getMessage()).contains("admission webhook \"nodes.subrange.io\" denied the request:"
          + " spec.podCIDRs: pod CIDR 10.244.240.0/24 of node v-clash is already allocated to node v-holder");

      unseen = client.services().inNamespace(NAMESPACE).resource(apiServers("unseen", "10.96.0.23")).create();
      // Inside the API server's 10.96.0.0/16 but outside every ServiceCIDR subrange serves.
      KubernetesClientException outside = refused(() -> client.services().inNamespace(NAMESPACE)
          .resource(apiServers("outside", "10.96.200.9")).create());
      assertThat(outside.getCode()).isEqualTo(422);
      assertThat(outside.getMessage()).contains("spec.clusterIPs[0]: 10.96.200.9 is not in any Service range");
      assertThat(cluster.subrange().metric("subrange_admission_requests_total", mutations))
          .as("the mutating webhook was not called").isEqualTo(mutateCallsBefore);
    } finally {
      cluster.reregister();
    }
    String address = unseen.getSpec().getClusterIP();
    KubernetesClientException later = refused(() -> client.services().inNamespace(NAMESPACE)
        .resource(service("later", address)).create());
    assertThat(later.getMessage()).contains("admission webhook \"services.subrange.io\" denied the request:")
        .contains(address + " is already allocated to Service " + NAMESPACE + "/unseen");
  }

  private static Service service(String name, String clusterIp) {
    return service(name, clusterIp, Map.of());
  }

  /** Labelled as the API server labels its own Service, so the validating webhook sees it. */
  private static Service apiServers(String name, String clusterIp) {
    return service(name, clusterIp, Map.of("provider", "kubernetes"));
  }

  private static Service service(String name, String clusterIp, Map<String, String> labels) {
    return new ServiceBuilder().withNewMetadata().withName(name).withLabels(labels).endMetadata().withNewSpec()
        .withClusterIP(clusterIp)
        .addNewPort().withPort(80).withTargetPort(new IntOrString(80)).endPort().endSpec().build();
  }

  private static Node node(String name, String... podCidrs) {
    return new NodeBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec().withPodCIDR(podCidrs[0])
        .withPodCIDRs(podCidrs).endSpec().build();
  }
}
