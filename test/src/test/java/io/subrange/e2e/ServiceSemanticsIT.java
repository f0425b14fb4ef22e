package io.subrange.e2e;

import static io.subrange.e2e.E2eSupport.inCidr;
import static io.subrange.e2e.E2eSupport.indexIn;
import static io.subrange.e2e.E2eSupport.refused;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.ServicePortBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.subrange.testing.ControlPlane;
import java.math.BigInteger;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Every Service shape through the real API server with both webhooks: dual-stack families,
 * NodePorts (shared 53/TCP+UDP, requested, conflicting, out of range), LoadBalancers with and
 * without NodePorts and with a health check port, and updates between types.
 */
@ExtendWith(E2eCluster.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ServiceSemanticsIT {

  private static final String NAMESPACE = "e2e-services";
  private static final String V4 = E2eCluster.SERVICE_CIDR;
  private static final String V6 = E2eCluster.SERVICE_CIDR_V6;

  private E2eCluster cluster;
  private KubernetesClient client;

  @BeforeAll
  void namespace(E2eCluster cluster) {
    this.cluster = cluster;
    this.client = cluster.client();
    ControlPlane.ensureNamespace(client, NAMESPACE);
  }

  // ---- dual-stack ---------------------------------------------------------------------------

  @Test
  void preferDualStackGetsAnAddressInEachFamilyPrimaryFirst() {
    Service created = create(service("prefer").editSpec().withIpFamilyPolicy("PreferDualStack").endSpec().build());
    List<String> ips = created.getSpec().getClusterIPs();
    assertThat(ips).hasSize(2);
    assertThat(inCidr(V4, ips.get(0))).as(ips.get(0)).isTrue();
    assertThat(inCidr(V6, ips.get(1))).as(ips.get(1)).isTrue();
    assertThat(created.getSpec().getClusterIP()).isEqualTo(ips.get(0));
    assertThat(created.getSpec().getIpFamilies()).containsExactly("IPv4", "IPv6");
    // Dynamic band of each family: offsets from 256 (KEP-3070 for a /20 and a /112).
    assertThat(indexIn(V4, ips.get(0))).isGreaterThan(BigInteger.valueOf(256));
    assertThat(indexIn(V6, ips.get(1))).isGreaterThan(BigInteger.valueOf(256));
  }

  @Test
  void ipFamiliesSetTheOrder() {
    Service created = create(service("v6-first").editSpec().withIpFamilyPolicy("RequireDualStack")
        .withIpFamilies("IPv6").endSpec().build());
    assertThat(created.getSpec().getIpFamilies()).containsExactly("IPv6", "IPv4");
    assertThat(inCidr(V6, created.getSpec().getClusterIP())).isTrue();
  }

  @Test
  void invalidFamilyRequestsAreRefusedWithSubrangesMessage() {
    KubernetesClientException twoSingle = refused(() -> create(service("two-single").editSpec()
        .withIpFamilyPolicy("SingleStack").withIpFamilies("IPv4", "IPv6").endSpec().build()));
    assertThat(twoSingle.getMessage()).contains("denied the request: spec.ipFamilyPolicy: SingleStack allows one IP family");
    KubernetesClientException unknown = refused(() -> create(service("ipv5").editSpec().withIpFamilies("IPv5")
        .endSpec().build()));
    assertThat(unknown.getMessage()).contains("spec.ipFamilies[0]: unknown IP family \"IPv5\"");
  }

  // ---- NodePorts ----------------------------------------------------------------------------

  @Test
  void portsWithTheSameNumberShareOneNodePort() {
    Service created = create(service("dns", port("dns-tcp", 53, "TCP", null), port("dns-udp", 53, "UDP", null),
        port("http", 80, "TCP", null)).editSpec().withType("NodePort").endSpec().build());
    List<ServicePort> ports = created.getSpec().getPorts();
    assertThat(ports.get(0).getNodePort()).isEqualTo(ports.get(1).getNodePort()).isBetween(30086, 32767);
    assertThat(ports.get(2).getNodePort()).isBetween(30086, 32767).isNotEqualTo(ports.get(0).getNodePort());
  }

  @Test
  void aRequestedNodePortIsHonouredAndAConflictNamesItsHolder() {
    Service owner = create(service("np-owner", port("http", 80, "TCP", 30080)).editSpec().withType("NodePort")
        .endSpec().build());
    assertThat(owner.getSpec().getPorts().get(0).getNodePort()).isEqualTo(30080);
    var result = cluster.kubectl("-n", NAMESPACE, "create", "service", "nodeport", "np-thief", "--tcp=80",
        "--node-port=30080");
    assertThat(result.exitCode()).isNotZero();
    assertThat(result.stderr()).contains("admission webhook \"services.subrange.io\" denied the request:"
        + " spec.ports[0].nodePort: port 30080 is already allocated to Service " + NAMESPACE + "/np-owner in 30000-32767");
  }

  @Test
  void nodePortsOutsideTheRangeOrInvalidAreRefusedAndZeroMeansAny() {
    KubernetesClientException outside = refused(() -> create(service("np-outside", port("http", 80, "TCP", 8080))
        .editSpec().withType("NodePort").endSpec().build()));
    assertThat(outside.getCode()).isEqualTo(422);
    assertThat(outside.getMessage()).contains("spec.ports[0].nodePort: port 8080 is not in the NodePort range 30000-32767");
    KubernetesClientException huge = refused(() -> create(service("np-huge", port("http", 80, "TCP", 70000))
        .editSpec().withType("NodePort").endSpec().build()));
    assertThat(huge.getMessage()).contains("spec.ports[0].nodePort: 70000 is not a port number (1-65535)");
    // nodePort 0 is Kubernetes for "not set": a port is allocated.
    Service zero = create(service("np-zero", port("http", 80, "TCP", 0)).editSpec().withType("NodePort").endSpec()
        .build());
    assertThat(zero.getSpec().getPorts().get(0).getNodePort()).isBetween(30000, 32767);
  }

  @Test
  void loadBalancersGetNodePortsAndAHealthCheckPortUnlessToldNot() {
    Service local = create(service("lb-local").editSpec().withType("LoadBalancer").withExternalTrafficPolicy("Local")
        .endSpec().build());
    assertThat(local.getSpec().getPorts().get(0).getNodePort()).isBetween(30000, 32767);
    assertThat(local.getSpec().getHealthCheckNodePort()).isBetween(30000, 32767)
        .isNotEqualTo(local.getSpec().getPorts().get(0).getNodePort());

    // 30044 is in the static band (30000-30085), where no other Service's random draw lands.
    Service none = create(service("lb-none", port("http", 80, "TCP", null), port("https", 443, "TCP", 30044))
        .editSpec().withType("LoadBalancer").withAllocateLoadBalancerNodePorts(false).endSpec().build());
    assertThat(none.getSpec().getPorts().get(0).getNodePort()).as("none allocated").isNull();
    assertThat(none.getSpec().getPorts().get(1).getNodePort()).as("requested one honoured").isEqualTo(30044);
  }

  // ---- updates ------------------------------------------------------------------------------

  @Test
  void clusterIpToNodePortAllocatesPortsAndKeepsTheAddress() {
    Service created = create(service("grow").build());
    Service updated = client.services().inNamespace(NAMESPACE).withName("grow")
        .edit(s -> new ServiceBuilder(s).editSpec().withType("NodePort").endSpec().build());
    assertThat(updated.getSpec().getClusterIP()).isEqualTo(created.getSpec().getClusterIP());
    assertThat(updated.getSpec().getPorts().get(0).getNodePort()).isBetween(30000, 32767);
  }

  @Test
  void changingAnAssignedClusterIpIsRefused() {
    Service created = create(service("fixed").build());
    String other = created.getSpec().getClusterIP().equals("10.96.0.77") ? "10.96.0.78" : "10.96.0.77";
    KubernetesClientException refusal = refused(() -> client.services().inNamespace(NAMESPACE).withName("fixed")
        .edit(s -> new ServiceBuilder(s).editSpec().withClusterIP(other).withClusterIPs(other).endSpec().build()));
    assertThat(refusal.getMessage()).contains("spec.clusterIP: field is immutable: it is " + created.getSpec().getClusterIP());
  }

  @Test
  void becomingExternalNameDropsAddressesAndPortsAndComingBackAllocates() {
    create(service("flip").editSpec().withType("NodePort").endSpec().build());
    Service external = client.services().inNamespace(NAMESPACE).withName("flip").edit(s -> new ServiceBuilder(s)
        .editSpec().withType("ExternalName").withExternalName("example.com").withExternalTrafficPolicy(null).endSpec()
        .build());
    assertThat(external.getSpec().getClusterIP()).isNullOrEmpty();
    assertThat(external.getSpec().getClusterIPs()).isNullOrEmpty();
    assertThat(external.getSpec().getPorts().get(0).getNodePort()).isNull();

    Service back = client.services().inNamespace(NAMESPACE).withName("flip").edit(s -> new ServiceBuilder(s)
        .editSpec().withType("ClusterIP").withExternalName(null).endSpec().build());
    assertThat(inCidr(V4, back.getSpec().getClusterIP())).as(back.getSpec().getClusterIP()).isTrue();
  }

  @Test
  void addingTheSecondFamilyAllocatesIt() {
    Service created = create(service("widen").build());
    Service updated = client.services().inNamespace(NAMESPACE).withName("widen").edit(s -> new ServiceBuilder(s)
        .editSpec().withIpFamilyPolicy("PreferDualStack").endSpec().build());
    assertThat(updated.getSpec().getClusterIPs()).hasSize(2);
    assertThat(updated.getSpec().getClusterIPs().get(0)).isEqualTo(created.getSpec().getClusterIP());
    assertThat(inCidr(V6, updated.getSpec().getClusterIPs().get(1))).isTrue();
  }

  @Test
  void allocatedFieldsAReplaceOmitsComeBackFromTheStoredService() {
    Service manifest = service("replace", port("http", 80, "TCP", null)).editSpec().withType("LoadBalancer")
        .withExternalTrafficPolicy("Local").endSpec().build();
    Service created = create(manifest);
    // `kubectl replace` with the original manifest: no clusterIP, nodePorts or health check port.
    Service bare = new ServiceBuilder(manifest).editMetadata()
        .withResourceVersion(created.getMetadata().getResourceVersion()).endMetadata().build();
    Service replaced = client.services().inNamespace(NAMESPACE).resource(bare).update();
    assertThat(replaced.getSpec().getClusterIP()).isEqualTo(created.getSpec().getClusterIP());
    assertThat(replaced.getSpec().getPorts().get(0).getNodePort())
        .isEqualTo(created.getSpec().getPorts().get(0).getNodePort());
    assertThat(replaced.getSpec().getHealthCheckNodePort()).isEqualTo(created.getSpec().getHealthCheckNodePort());
  }

  /** kube-apiserver keeps an IPv6 address as written; so must subrange, on create and update. */
  @Test
  void ipv6AddressesAreStoredAsTheClientWroteThem() {
    Service created = create(service("v6-long").editSpec().withIpFamilyPolicy("RequireDualStack")
        .withClusterIPs("10.96.0.61", "fd00:96:0:0:0:0:0:61").endSpec().build());
    assertThat(created.getSpec().getClusterIPs()).containsExactly("10.96.0.61", "fd00:96:0:0:0:0:0:61");
    Service relabelled = client.services().inNamespace(NAMESPACE).withName("v6-long")
        .edit(s -> new ServiceBuilder(s).editMetadata().addToLabels("tier", "web").endMetadata().build());
    assertThat(relabelled.getSpec().getClusterIPs()).containsExactly("10.96.0.61", "fd00:96:0:0:0:0:0:61");
    // The same address spelled short is the same address, and it is taken.
    KubernetesClientException clash = refused(() -> create(service("v6-short").editSpec()
        .withIpFamilies("IPv6").withClusterIP("fd00:96::61").endSpec().build()));
    assertThat(clash.getMessage()).contains("fd00:96::61 is already allocated to Service " + NAMESPACE + "/v6-long");
  }

  /**
   * Upstream's TestUpdatePatchAllocatedValues "partial-swap-ports": p takes q's nodePort and q is
   * sent without one; q's old value is p's now, so q gets another, and the update goes through.
   */
  @Test
  void aPartialSwapOfNodePortsGoesThrough() {
    create(service("partial-swap", port("p", 867, "TCP", 30061), port("q", 5309, "TCP", 30062)).editSpec()
        .withType("NodePort").endSpec().build());
    Service swapped = client.services().inNamespace(NAMESPACE).withName("partial-swap").edit(s -> {
      Service changed = new ServiceBuilder(s).build();
      changed.getSpec().getPorts().get(0).setNodePort(30062);
      changed.getSpec().getPorts().get(1).setNodePort(null);
      return changed;
    });
    assertThat(swapped.getSpec().getPorts().get(0).getNodePort()).isEqualTo(30062);
    assertThat(swapped.getSpec().getPorts().get(1).getNodePort()).isNotEqualTo(30062).isBetween(30000, 32767);
  }

  /**
   * A name the API server would refuse only after admission is refused by subrange first, before
   * anything is held for it (a tab in it once broke the holder ledgers).
   */
  @Test
  void aServiceNameThatIsNotADnsLabelIsRefusedBeforeAnythingIsHeld() {
    KubernetesClientException refusal = refused(() -> create(service("bad\tname").editSpec().withType("NodePort")
        .endSpec().build()));
    assertThat(refusal.getCode()).isEqualTo(422);
    assertThat(refusal.getMessage()).contains("denied the request: metadata.name: \"bad\\u0009name\"");
  }

  // ---- helpers ------------------------------------------------------------------------------

  private Service create(Service service) {
    return client.services().inNamespace(NAMESPACE).resource(service).create();
  }

  private static ServiceBuilder service(String name, ServicePort... ports) {
    ServiceBuilder builder = new ServiceBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec()
        .addToSelector("app", name).endSpec();
    if (ports.length == 0) {
      builder.editSpec().addToPorts(port("http", 80, "TCP", null)).endSpec();
    } else {
      builder.editSpec().addToPorts(ports).endSpec();
    }
    return builder;
  }

  private static ServicePort port(String name, int port, String protocol, Integer nodePort) {
    return new ServicePortBuilder().withName(name).withPort(port).withProtocol(protocol)
        .withTargetPort(new IntOrString(port)).withNodePort(nodePort).build();
  }
}
