package io.subrange.e2e;

import static io.subrange.e2e.E2eSupport.inCidr;
import static io.subrange.e2e.E2eSupport.refused;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Nodes get pod CIDRs from the default ClusterCIDR made from subrange.pod.* ({@value E2eCluster#POD_CIDRS},
 * /24 IPv4 and, with one perNodeHostBits for both, /120 IPv6 blocks), through the real API server.
 */
@ExtendWith(E2eCluster.class)
class NodePodCidrIT {

  @Test
  void aNewNodeGetsABlockPerFamilyPrimaryFirst(E2eCluster cluster) {
    Node node = create(cluster.client(), new NodeBuilder().withNewMetadata().withName("pod-cidr-1").endMetadata().build());
    List<String> blocks = node.getSpec().getPodCIDRs();
    assertThat(blocks).hasSize(2);
    assertThat(blocks.get(0)).endsWith("/24");
    assertThat(inCidr("10.244.0.0/16", blocks.get(0).substring(0, blocks.get(0).indexOf('/')))).isTrue();
    assertThat(blocks.get(1)).endsWith("/120");
    assertThat(inCidr("fd00:244::/104", blocks.get(1).substring(0, blocks.get(1).indexOf('/')))).isTrue();
    assertThat(node.getSpec().getPodCIDR()).isEqualTo(blocks.get(0));
  }

  @Test
  void presetPodCidrsAreHonouredWhenFreeAndRefusedWhenTaken(E2eCluster cluster) {
    KubernetesClient client = cluster.client();
    Node kept = create(client, node("preset-1", "10.244.250.0/24", "fd00:244::fa00/120"));
    assertThat(kept.getSpec().getPodCIDRs()).containsExactly("10.244.250.0/24", "fd00:244::fa00/120");
    KubernetesClientException refusal = refused(() -> create(client, node("preset-2", "10.244.250.0/24",
        "fd00:244::fb00/120")));
    assertThat(refusal.getCode()).isEqualTo(409);
    assertThat(refusal.getMessage()).contains("denied the request: spec.podCIDRs: pod CIDR 10.244.250.0/24 of node"
        + " preset-2 is already allocated to node preset-1");
    KubernetesClientException malformed = refused(() -> create(client, node("preset-3", "10.244.251.1/24")));
    assertThat(malformed.getMessage()).contains("spec.podCIDRs[0]: \"10.244.251.1/24\" is not a CIDR: host bits are set");
  }

  @Test
  void podCidrsAnUpdateOmitsAreKeptAndNeverChange(E2eCluster cluster) {
    KubernetesClient client = cluster.client();
    // (A node that gets its blocks on a later update is covered by NodeAdmissionTest: the real
    // API server gives no way to create one without them while the webhook runs.)
    Node created = create(client, new NodeBuilder().withNewMetadata().withName("late-node").endMetadata().build());
    assertThat(created.getSpec().getPodCIDRs()).hasSize(2);
    Node relabelled = client.nodes().withName("late-node").edit(n -> new NodeBuilder(n).editMetadata()
        .addToLabels("zone", "b").endMetadata().editSpec().withPodCIDR(null).withPodCIDRs().endSpec().build());
    assertThat(relabelled.getSpec().getPodCIDRs()).as("omitted on update: kept")
        .isEqualTo(created.getSpec().getPodCIDRs());
    KubernetesClientException refusal = refused(() -> client.nodes().withName("late-node").edit(n -> new NodeBuilder(n)
        .editSpec().withPodCIDR("10.244.252.0/24").withPodCIDRs("10.244.252.0/24", "fd00:244::fc00/120").endSpec()
        .build()));
    assertThat(refusal.getMessage()).contains("spec.podCIDRs: field is immutable once set");
  }

  private static Node create(KubernetesClient client, Node node) {
    return client.nodes().resource(node).create();
  }

  private static Node node(String name, String... podCidrs) {
    return new NodeBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec().withPodCIDR(podCidrs[0])
        .withPodCIDRs(podCidrs).endSpec().build();
  }
}
