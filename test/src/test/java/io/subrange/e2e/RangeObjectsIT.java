package io.subrange.e2e;

import static io.subrange.e2e.E2eSupport.refused;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.subrange.testing.ControlPlane;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * ServiceCIDR and ClusterCIDR objects on the real API server: the defaults subrange makes from
 * its configuration, ranges added and removed without a restart, deletion held while in use,
 * and the validating webhook's checks.
 */
@ExtendWith(E2eCluster.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RangeObjectsIT {

  private static final String NAMESPACE = "e2e-ranges";
  private static final ResourceDefinitionContext SERVICE_CIDRS = new ResourceDefinitionContext.Builder()
      .withGroup("subrange.io").withVersion("v1alpha1").withKind("ServiceCIDR").withPlural("servicecidrs")
      .withNamespaced(false).build();
  private static final ResourceDefinitionContext CLUSTER_CIDRS = new ResourceDefinitionContext.Builder()
      .withGroup("networking.x-k8s.io").withVersion("v1").withKind("ClusterCIDR").withPlural("clustercidrs")
      .withNamespaced(false).build();

  private E2eCluster cluster;
  private KubernetesClient client;

  /** Ranges this class adds must not serve other classes' Services: remove what can go. */
  @AfterAll
  void removeRanges() {
    for (String name : List.of("extra", "frozen")) {
      client.genericKubernetesResources(SERVICE_CIDRS).withName(name).delete();
    }
    for (String name : List.of("gpu-pool", "overlap-pool")) {
      client.genericKubernetesResources(CLUSTER_CIDRS).withName(name).delete();
    }
  }

  @BeforeAll
  void setUp(E2eCluster cluster) {
    this.cluster = cluster;
    this.client = cluster.client();
    ControlPlane.ensureNamespace(client, NAMESPACE);
  }

  @Test
  void theConfiguredRangesAreObjectsWithStatusAndAFinalizer() {
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      GenericKubernetesResource kubernetes = client.genericKubernetesResources(SERVICE_CIDRS).withName("kubernetes").get();
      assertThat(kubernetes).isNotNull();
      assertThat(kubernetes.getMetadata().getFinalizers()).contains("subrange.io/range-protection");
      assertThat(spec(kubernetes).get("cidrs")).isEqualTo(List.of(E2eCluster.SERVICE_CIDR, E2eCluster.SERVICE_CIDR_V6));
      assertThat(conditionStatus(kubernetes, "Ready")).isEqualTo("True");
      assertThat(client.genericKubernetesResources(CLUSTER_CIDRS).withName("default-cluster-cidr").get()).isNotNull();
    });
    var printed = cluster.kubectl("get", "servicecidrs", "kubernetes");
    assertThat(printed.exitCode()).as(printed.stderr()).isZero();
    assertThat(printed.stdout()).contains("READY").contains("True").contains(E2eCluster.SERVICE_CIDR);
  }

  @Test
  void aNewServiceCidrServesWithoutARestartAndItsDeletionWaitsWhileInUse() {
    // Inside the API server's own range (10.96.0.0/16), beside subrange's 10.96.0.0/20.
    GenericKubernetesResource created = createServiceCidr("extra", "10.96.32.0/24");
    assertThat(created.getMetadata().getFinalizers()).as("set as it was created").contains("subrange.io/range-protection");
    Service inExtra = await().atMost(Duration.ofSeconds(20)).ignoreExceptions()
        .until(() -> createService("in-extra", "10.96.32.5"), s -> s != null);
    assertThat(inExtra.getSpec().getClusterIP()).isEqualTo("10.96.32.5");

    client.genericKubernetesResources(SERVICE_CIDRS).withName("extra").delete();
    await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
      GenericKubernetesResource extra = client.genericKubernetesResources(SERVICE_CIDRS).withName("extra").get();
      assertThat(extra).as("held by its finalizer").isNotNull();
      assertThat(extra.getMetadata().getDeletionTimestamp()).isNotNull();
      assertThat(conditionStatus(extra, "Terminating")).isEqualTo("True");
      assertThat(conditionStatus(extra, "Ready")).isEqualTo("False");
    });
    KubernetesClientException refusal = refused(() -> createService("too-late", "10.96.32.6"));
    assertThat(refusal.getMessage()).contains("Service range 10.96.32.0/24 is being deleted");
  }

  @Test
  void aClusterCidrSelectingNodesServesThemWithoutARestart() {
    Map<String, Object> selector = Map.of("nodeSelectorTerms", List.of(Map.of("matchExpressions",
        List.of(Map.of("key", "pool", "operator", "In", "values", List.of("gpu"))))));
    createClusterCidr("gpu-pool", Map.of("nodeSelector", selector, "perNodeHostBits", 6, "ipv4", "10.250.0.0/24"));
    Node gpu = await().atMost(Duration.ofSeconds(20)).until(() -> {
      Node created = client.nodes().resource(new NodeBuilder().withNewMetadata().withName("gpu-" + System.nanoTime())
          .addToLabels("pool", "gpu").endMetadata().build()).create();
      if (created.getSpec().getPodCIDRs().isEmpty() || !created.getSpec().getPodCIDRs().get(0).startsWith("10.250.")) {
        client.nodes().resource(created).delete();  // made before the ClusterCIDR reached subrange
        return null;
      }
      return created;
    }, n -> n != null);
    assertThat(gpu.getSpec().getPodCIDRs()).singleElement().satisfies(c -> assertThat(c).startsWith("10.250.0.").endsWith("/26"));
  }

  @Test
  void aPodRangeOverlappingTheServiceRangeNeverGivesANodeServiceAddresses() {
    // 10.96.0.0/19 in /20 blocks: its first block is subrange's whole Service range, 10.96.0.0/20.
    Map<String, Object> selector = Map.of("nodeSelectorTerms", List.of(Map.of("matchExpressions",
        List.of(Map.of("key", "pool", "operator", "In", "values", List.of("overlap"))))));
    createClusterCidr("overlap-pool", Map.of("nodeSelector", selector, "perNodeHostBits", 12, "ipv4", "10.96.0.0/19"));
    Node node = await().atMost(Duration.ofSeconds(20)).until(() -> {
      Node created = client.nodes().resource(new NodeBuilder().withNewMetadata().withName("overlap-" + System.nanoTime())
          .addToLabels("pool", "overlap").endMetadata().build()).create();
      if (created.getSpec().getPodCIDRs().isEmpty() || !created.getSpec().getPodCIDRs().get(0).startsWith("10.96.")) {
        client.nodes().resource(created).delete();  // made before the ClusterCIDR reached subrange
        return null;
      }
      return created;
    }, n -> n != null);
    assertThat(node.getSpec().getPodCIDRs()).as("the first candidate, 10.96.0.0/20, is the Service range")
        .containsExactly("10.96.16.0/20");
    KubernetesClientException asked = refused(() -> client.nodes().resource(new NodeBuilder().withNewMetadata()
        .withName("overlap-preset").addToLabels("pool", "overlap").endMetadata().withNewSpec()
        .withPodCIDR("10.96.0.0/20").withPodCIDRs("10.96.0.0/20").endSpec().build()).create());
    assertThat(asked.getMessage()).contains("pod CIDR 10.96.0.0/20 of node overlap-preset overlaps the reserved range"
        + " 10.96.0.0/20");
  }

  @Test
  void invalidRangeObjectsAreRefusedWithAReason() {
    KubernetesClientException sameFamily = refused(() -> createServiceCidr("two-v4", "10.96.40.0/24", "10.96.41.0/24"));
    assertThat(sameFamily.getMessage()).contains("denied the request: spec.cidrs[1]: 10.96.41.0/24 is IPv4, like spec.cidrs[0]");
    KubernetesClientException hostBits = refused(() -> createServiceCidr("host-bits", "10.96.40.1/24"));
    assertThat(hostBits.getMessage()).contains("spec.cidrs[0]: \"10.96.40.1/24\" is not a CIDR: host bits are set");
    KubernetesClientException perNode = refused(() -> createClusterCidr("too-small", Map.of("perNodeHostBits", 2,
        "ipv4", "10.251.0.0/24")));
    assertThat(perNode.getMessage()).contains("spec.perNodeHostBits");

    createServiceCidr("frozen", "10.96.48.0/24");
    KubernetesClientException immutable = refused(() -> client.genericKubernetesResources(SERVICE_CIDRS)
        .withName("frozen").edit(o -> {
          o.setAdditionalProperty("spec", Map.of("cidrs", List.of("10.96.49.0/24")));
          return o;
        }));
    assertThat(immutable.getMessage()).contains("spec.cidrs").contains("immutable");
  }

  private GenericKubernetesResource createServiceCidr(String name, String... cidrs) {
    return client.genericKubernetesResources(SERVICE_CIDRS).resource(new GenericKubernetesResourceBuilder()
        .withApiVersion("subrange.io/v1alpha1").withKind("ServiceCIDR").withNewMetadata().withName(name).endMetadata()
        .addToAdditionalProperties("spec", Map.of("cidrs", List.of(cidrs))).build()).create();
  }

  private GenericKubernetesResource createClusterCidr(String name, Map<String, Object> spec) {
    return client.genericKubernetesResources(CLUSTER_CIDRS).resource(new GenericKubernetesResourceBuilder()
        .withApiVersion("networking.x-k8s.io/v1").withKind("ClusterCIDR").withNewMetadata().withName(name).endMetadata()
        .addToAdditionalProperties("spec", spec).build()).create();
  }

  private Service createService(String name, String clusterIp) {
    return client.services().inNamespace(NAMESPACE).resource(new ServiceBuilder().withNewMetadata().withName(name)
        .endMetadata().withNewSpec().withClusterIP(clusterIp).addNewPort().withPort(80)
        .withTargetPort(new IntOrString(80)).endPort().endSpec().build()).create();
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> spec(GenericKubernetesResource resource) {
    return (Map<String, Object>) resource.getAdditionalProperties().get("spec");
  }

  @SuppressWarnings("unchecked")
  private static String conditionStatus(GenericKubernetesResource resource, String type) {
    Map<String, Object> status = (Map<String, Object>) resource.getAdditionalProperties().get("status");
    if (status == null) {
      return null;
    }
    for (Map<String, Object> condition : (List<Map<String, Object>>) status.getOrDefault("conditions", List.of())) {
      if (type.equals(condition.get("type"))) {
        return (String) condition.get("status");
      }
    }
    return null;
  }
}
