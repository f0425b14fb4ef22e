package io.subrange.webhook.admission;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.ServiceSpec;
import io.fabric8.zjsonpatch.JsonPatch;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PatchScopeTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final PatchScope<Service> SPEC = PatchScope.field("spec", Service::getSpec);

  @Test
  void aPatchOverTheSpecNamesPathsFromTheRootAndGivesTheMutatedObject() throws Exception {
    Service service = new ServiceBuilder().withNewMetadata().withName("web").withNamespace("team-a")
        .addNewManagedField().withManager("kubectl").withOperation("Update").endManagedField().endMetadata()
        .withNewSpec().withType("NodePort").addNewPort().withPort(80).endPort().endSpec().build();
    JsonNode request = JSON.valueToTree(service);
    PatchScope.Snapshot<Service> before = SPEC.before(JSON, service);

    service.getSpec().setClusterIP("10.96.0.10");
    service.getSpec().setClusterIPs(List.of("10.96.0.10"));
    service.getSpec().getPorts().get(0).setNodePort(30080);
    JsonNode patch = JSON.readTree(before.patchTo(service));

    assertThat(patch).allSatisfy(op -> assertThat(op.get("path").asText()).startsWith("/spec/"));
    assertThat(JsonPatch.apply(patch, request)).isEqualTo(JSON.valueToTree(service));
  }

  @Test
  void anObjectWithoutTheFieldIsDiffedWholeSoThePatchCanAddIt() throws Exception {
    Service service = new ServiceBuilder().withNewMetadata().withName("bare").endMetadata().build();
    JsonNode request = JSON.valueToTree(service);
    PatchScope.Snapshot<Service> before = SPEC.before(JSON, service);

    service.setSpec(new ServiceSpec());
    service.getSpec().setClusterIP("10.96.0.11");

    assertThat(JsonPatch.apply(JSON.readTree(before.patchTo(service)), request)).isEqualTo(JSON.valueToTree(service));
  }

  @Test
  void aChangeOutsideTheScopeIsNotPatched() {
    Service service = new ServiceBuilder().withNewMetadata().withName("web").endMetadata().withNewSpec()
        .withType("ClusterIP").endSpec().build();
    PatchScope.Snapshot<Service> before = SPEC.before(JSON, service);

    service.getMetadata().setLabels(Map.of("changed", "outside"));

    assertThat(before.patchTo(service)).as("no patch at all").isNull();
  }
}
