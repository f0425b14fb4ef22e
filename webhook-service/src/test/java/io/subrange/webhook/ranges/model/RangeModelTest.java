package io.subrange.webhook.ranges.model;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.api.model.NodeSelectorBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.subrange.allocator.band.RangeUsage;
import io.subrange.webhook.admission.ObjectKind;
import java.util.List;
import org.junit.jupiter.api.Test;

class RangeModelTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void kindsAreClusterScopedWithTheirAdmissionKinds() {
    assertThat(Namespaced.class.isAssignableFrom(ServiceCIDR.class)).isFalse();
    assertThat(Namespaced.class.isAssignableFrom(ClusterCIDR.class)).isFalse();
    assertThat(new ServiceCIDR().getScope()).isEqualTo("Cluster");
    assertThat(new ClusterCIDR().getScope()).isEqualTo("Cluster");
    assertThat(ServiceCIDR.OBJECT_KIND).isEqualTo(new ObjectKind("subrange.io", "v1alpha1", "ServiceCIDR"));
    assertThat(ClusterCIDR.OBJECT_KIND).isEqualTo(new ObjectKind("networking.x-k8s.io", "v1", "ClusterCIDR"));
    assertThat(new ServiceCIDR().getApiVersion()).isEqualTo(ServiceCIDR.OBJECT_KIND.apiVersion());
    assertThat(new ClusterCIDR().getApiVersion()).isEqualTo(ClusterCIDR.OBJECT_KIND.apiVersion());
  }

  @Test
  void writesOnlyWhatIsSet() {
    JsonNode service = JSON.valueToTree(new ServiceCIDR("kubernetes", ServiceCIDRSpec.of("10.96.0.0/12")));
    assertThat(service.toString()).isEqualTo("{\"apiVersion\":\"subrange.io/v1alpha1\",\"kind\":\"ServiceCIDR\","
        + "\"metadata\":{\"name\":\"kubernetes\"},\"spec\":{\"cidrs\":[\"10.96.0.0/12\"]}}");
    JsonNode cluster = JSON.valueToTree(new ClusterCIDR("v6", new ClusterCIDRSpec(null, 16, null, "fd00::/48")));
    assertThat(cluster.toString()).isEqualTo("{\"apiVersion\":\"networking.x-k8s.io/v1\",\"kind\":\"ClusterCIDR\","
        + "\"metadata\":{\"name\":\"v6\"},\"spec\":{\"perNodeHostBits\":16,\"ipv6\":\"fd00::/48\"}}");
  }

  @Test
  void readsWhatNodeIpamControllerWrites() throws Exception {
    String yaml = """
        apiVersion: networking.x-k8s.io/v1
        kind: ClusterCIDR
        metadata:
          name: gpu
          resourceVersion: "42"
        spec:
          nodeSelector:
            nodeSelectorTerms:
            - matchExpressions:
              - key: gpu
                operator: In
                values: ["true"]
          perNodeHostBits: 8
          ipv4: 10.245.0.0/16
          ipv6: ""
        """;
    ClusterCIDR object = new KubernetesSerialization().unmarshal(yaml, ClusterCIDR.class);
    assertThat(object.getMetadata().getName()).isEqualTo("gpu");
    assertThat(object.getSpec()).isEqualTo(new ClusterCIDRSpec(new NodeSelectorBuilder().addNewNodeSelectorTerm()
        .addNewMatchExpression().withKey("gpu").withOperator("In").withValues("true").endMatchExpression()
        .endNodeSelectorTerm().build(), 8, "10.245.0.0/16", ""));
    assertThat(JSON.readValue(JSON.writeValueAsString(object), ClusterCIDR.class).getSpec())
        .isEqualTo(object.getSpec());
  }

  @Test
  void statusRoundTripsWithCountsAsUnsignedDecimalStrings() throws Exception {
    // A /64: 2^64-1 assignable addresses, which a long holds only as an unsigned value.
    RangeUsage slash64 = new RangeUsage("fd00::/64", -1L, 256, 3, 1);
    ServiceCIDRUsage usage = ServiceCIDRUsage.of(slash64);
    assertThat(usage).isEqualTo(new ServiceCIDRUsage("fd00::/64", "18446744073709551615", "3",
        "18446744073709551612", "1", "2"));

    ServiceCIDR object = new ServiceCIDR("v6", ServiceCIDRSpec.of("fd00::/64"));
    object.setStatus(new ServiceCIDRStatus(List.of(new io.fabric8.kubernetes.api.model.Condition(
        "2024-05-01T10:00:00Z", "serving fd00::/64", 1L, "Serving", "True", ServiceCIDRStatus.READY)),
        List.of(usage)));
    String json = JSON.writeValueAsString(object);
    assertThat(json).contains("\"usage\":[{\"cidr\":\"fd00::/64\",\"size\":\"18446744073709551615\",\"used\":\"3\","
        + "\"free\":\"18446744073709551612\",\"staticBandUsed\":\"1\",\"dynamicBandUsed\":\"2\"}]");
    ServiceCIDR read = new KubernetesSerialization().unmarshal(json, ServiceCIDR.class);
    assertThat(read.getStatus()).isEqualTo(object.getStatus());
    assertThat(read.getStatus().condition(ServiceCIDRStatus.READY)).get()
        .extracting(io.fabric8.kubernetes.api.model.Condition::getStatus).isEqualTo("True");
    assertThat(read.getStatus().condition(ServiceCIDRStatus.TERMINATING)).isEmpty();
  }
}
