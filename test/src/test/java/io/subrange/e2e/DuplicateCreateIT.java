package io.subrange.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A create of a name that exists answers what kube-apiserver alone answers: 409 AlreadyExists,
 * with nothing new held (issue: controllers treat IsAlreadyExists as success). A retried create
 * whose first attempt never landed still gets the values it holds.
 */
@ExtendWith(E2eCluster.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DuplicateCreateIT {

  private static final String NS = "duplicates";
  private E2eCluster cluster;

  @BeforeAll
  void namespace(E2eCluster cluster) {
    this.cluster = cluster;
    cluster.client().namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata()
        .build()).createOr(existing -> existing.update());
  }

  @Test
  void kubectlCreateTwiceSaysAlreadyExistsAndHoldsNothingNew(@TempDir Path dir) throws IOException {
    var first = cluster.kubectl("-n", NS, "create", "service", "nodeport", "demo", "--tcp=80");
    assertThat(first.exitCode()).as(first.stderr()).isZero();
    Service created = cluster.client().services().inNamespace(NS).withName("demo").get();
    double held = allocated();

    var second = cluster.kubectl("-n", NS, "create", "service", "nodeport", "demo", "--tcp=80");
    assertThat(second.exitCode()).isNotZero();
    // kubectl create service words every failure "failed to create"; the Status is upstream's.
    assertThat(second.stderr()).contains("services \"demo\" already exists");

    Path manifest = Files.writeString(dir.resolve("demo.yaml"), """
        apiVersion: v1
        kind: Service
        metadata: {name: demo, namespace: %s}
        spec: {type: NodePort, ports: [{port: 80}]}
        """.formatted(NS));
    for (String dryRun : new String[] {"--dry-run=none", "--dry-run=server"}) {
      var fromFile = cluster.kubectl("create", "-f", manifest.toString(), dryRun);
      assertThat(fromFile.exitCode()).isNotZero();
      assertThat(fromFile.stderr()).as(dryRun).startsWith("Error from server (AlreadyExists)")
          .contains("services \"demo\" already exists");
    }

    Service after = cluster.client().services().inNamespace(NS).withName("demo").get();
    assertThat(after.getSpec().getClusterIP()).isEqualTo(created.getSpec().getClusterIP());
    assertThat(after.getMetadata().getUid()).isEqualTo(created.getMetadata().getUid());
    assertThat(allocated()).as("no address held for the refused duplicate").isEqualTo(held);
  }

  @Test
  void theClientSeesReasonCodeAndDetailsAsUpstreamGivesThem() {
    Service service = new ServiceBuilder().withNewMetadata().withName("twice").withNamespace(NS).endMetadata()
        .withNewSpec().addNewPort().withPort(80).endPort().endSpec().build();
    cluster.client().services().inNamespace(NS).resource(service).create();
    try {
      cluster.client().services().inNamespace(NS).resource(service).create();
      throw new AssertionError("the duplicate create was admitted");
    } catch (KubernetesClientException e) {
      assertThat(e.getCode()).isEqualTo(409);
      assertThat(e.getStatus().getReason()).isEqualTo("AlreadyExists");
      assertThat(e.getStatus().getDetails().getName()).isEqualTo("twice");
      assertThat(e.getStatus().getDetails().getKind()).isEqualTo("services");
    }
  }

  /** ClusterIPs and NodePorts held. */
  private double allocated() {
    return cluster.subrange().metric("subrange_clusterip_allocator_allocated_ips", Map.of())
        + cluster.subrange().metric("subrange_nodeport_allocator_allocated_ports", Map.of());
  }
}
