package io.subrange.webhook.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.subrange.allocator.net.IpFamily;
import io.subrange.webhook.admission.AdmissionDenied;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** While no Service range is live (every ServiceCIDR being deleted), only new addresses are refused. */
class ServiceAllocationPlanTest {

  private static final ServiceFamilies NONE_LIVE = new ServiceFamilies(List.of());

  @Test
  void servicesThatNeedNoNewAddressArePlannedWithoutALiveRange() {
    assertThat(ServiceAllocationPlan.normalising(service("ExternalName", null), null, NONE_LIVE).ipClaims()).isEmpty();
    assertThat(ServiceAllocationPlan.normalising(service("ClusterIP", "None"), null, NONE_LIVE).ipClaims()).isEmpty();

    Service stored = service("ClusterIP", "10.96.0.20");
    Service relabelled = service("ClusterIP", "10.96.0.20");
    relabelled.getMetadata().setLabels(Map.of("tier", "web"));
    ServiceAllocationPlan update = ServiceAllocationPlan.normalising(relabelled, stored, NONE_LIVE);
    assertThat(update.ipClaims()).singleElement().satisfies(claim -> assertThat(claim.kept()).isTrue());
  }

  @Test
  void aNewAddressWithoutALiveRangeIsRefusedSayingWhy() {
    assertThatThrownBy(() -> ServiceAllocationPlan.normalising(service("ClusterIP", null), null, NONE_LIVE))
        .isInstanceOf(AdmissionDenied.class).hasMessageStartingWith("no Service range is live");
    assertThatThrownBy(() -> ServiceAllocationPlan.normalising(service("ClusterIP", "10.96.0.30"), null, NONE_LIVE))
        .isInstanceOf(AdmissionDenied.class).hasMessageStartingWith("no Service range is live");
    assertThatThrownBy(() -> ServiceAllocationPlan.normalising(service("ClusterIP", "fd00::5"), null,
        new ServiceFamilies(List.of(IpFamily.IPV4))))
        .isInstanceOf(AdmissionDenied.class).hasMessageContaining("IPv6 is not served here");
  }

  private static Service service(String type, String clusterIp) {
    return new ServiceBuilder().withNewMetadata().withNamespace("ns").withName("s").endMetadata()
        .withNewSpec().withType(type).withClusterIP(clusterIp)
        .withClusterIPs(clusterIp == null ? null : List.of(clusterIp)).withExternalName(
            "ExternalName".equals(type) ? "example.com" : null)
        .addNewPort().withPort(80).endPort().endSpec().build();
  }
}
