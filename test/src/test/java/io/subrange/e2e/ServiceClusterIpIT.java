package io.subrange.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.subrange.testing.ControlPlane;
import io.subrange.testing.SubrangeServer;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The walking skeleton on the real thing: kube-apiserver 1.20.2 calls subrange for every
 * Service CREATE, and what clients see is subrange's doing.
 *
 * <p>The range is {@value E2eCluster#SERVICE_CIDR}: 4096 addresses, so KEP-3070 gives a static
 * band of 256 (10.96.0.1-10.96.1.0) and a dynamic band of 10.96.1.1-10.96.15.254. These bounds
 * are written out here rather than computed with the allocator, so the test checks it.
 */
@ExtendWith(E2eCluster.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ServiceClusterIpIT {

  private static final String NAMESPACE = "e2e-clusterip";
  private static final long NETWORK = ipv4("10.96.0.0");
  private static final long STATIC_BAND = 256;
  private static final long USABLE = 4094;
  private static final String CIDR_LABEL = E2eCluster.SERVICE_CIDR;

  private E2eCluster cluster;
  private KubernetesClient client;
  private SubrangeServer subrange;
  private Map<String, Double> baseline;

  @BeforeAll
  void createNamespaceAndReadMetrics(E2eCluster cluster) {
    this.cluster = cluster;
    this.client = cluster.client();
    this.subrange = cluster.subrange();
    ControlPlane.ensureNamespace(client, NAMESPACE);
    baseline = counters();
  }

  @Test
  @Order(1)
  void hundredServicesWithoutClusterIpGetDistinctAddressesFromTheDynamicBand() {
    List<Service> created = IntStream.range(0, 100)
        .mapToObj(i -> client.services().inNamespace(NAMESPACE).resource(service("dyn-" + i, null)).create())
        .toList();
    Set<String> addresses = new HashSet<>();
    for (Service service : created) {
      String address = service.getSpec().getClusterIP();
      assertThat(address).as("clusterIP of " + service.getMetadata().getName()).isNotBlank();
      assertThat(service.getSpec().getClusterIPs()).containsExactly(address);
      long offset = ipv4(address) - NETWORK - 1;
      assertThat(offset).as(address + " is in the dynamic band").isBetween(STATIC_BAND, USABLE - 1);
      addresses.add(address);
    }
    assertThat(addresses).hasSize(100);
    // What the API server stored is what subrange assigned.
    Set<String> stored = client.services().inNamespace(NAMESPACE).list().getItems().stream()
        .map(s -> s.getSpec().getClusterIP()).collect(Collectors.toSet());
    assertThat(stored).containsAll(addresses);
  }

  @Test
  @Order(2)
  void aServiceAskingForTheTenthAddressGetsIt() {
    var result = cluster.kubectl("-n", NAMESPACE, "create", "service", "clusterip", "dns", "--clusterip=10.96.0.10",
        "--tcp=53:53");
    assertThat(result.exitCode()).as(result.stderr()).isZero();
    Service dns = client.services().inNamespace(NAMESPACE).withName("dns").get();
    assertThat(dns.getSpec().getClusterIP()).isEqualTo("10.96.0.10");
    assertThat(dns.getSpec().getClusterIPs()).containsExactly("10.96.0.10");
  }

  @Test
  @Order(3)
  void aServiceAskingForAnAddressAnotherHoldsIsDeniedWithSubrangesMessage() {
    var result = cluster.kubectl("-n", NAMESPACE, "create", "service", "clusterip", "thief", "--clusterip=10.96.0.10",
        "--tcp=80");
    assertThat(result.exitCode()).isNotZero();
    assertThat(result.stderr())
        .contains("admission webhook \"services.subrange.io\" denied the request")
        .contains("spec.clusterIP: 10.96.0.10 is already allocated to Service " + NAMESPACE + "/dns in "
            + E2eCluster.SERVICE_CIDR)
        .doesNotContain("provided IP is already allocated");  // the API server's own, generic message
    assertThat(client.services().inNamespace(NAMESPACE).withName("thief").get()).isNull();
  }

  @Test
  @Order(4)
  void aServerSideDryRunShowsAnAddressAndAllocatesNothing() {
    double allocatedBefore = allocatedIps();
    var result = cluster.kubectl("-n", NAMESPACE, "create", "service", "clusterip", "dry", "--tcp=80",
        "--dry-run=server", "-o", "jsonpath={.spec.clusterIP}");
    assertThat(result.exitCode()).as(result.stderr()).isZero();
    long offset = ipv4(result.stdout().trim()) - NETWORK - 1;
    assertThat(offset).as("dry-run address " + result.stdout()).isBetween(STATIC_BAND, USABLE - 1);
    assertThat(allocatedIps()).isEqualTo(allocatedBefore);
    assertThat(client.services().inNamespace(NAMESPACE).withName("dry").get()).isNull();
  }

  @Test
  @Order(5)
  void metricsCountWhatThisTestDid() {
    Map<String, Double> now = counters();
    assertThat(delta(now, "dynamic")).as("dynamic allocations").isEqualTo(100);
    assertThat(delta(now, "static")).as("static allocations").isEqualTo(1);
    assertThat(delta(now, "errors.static")).as("static allocation errors").isEqualTo(1);
    assertThat(delta(now, "errors.dynamic")).isZero();
    assertThat(delta(now, "allocated")).as("allocated_ips").isEqualTo(101);
    assertThat(delta(now, "available")).as("available_ips").isEqualTo(-101);
    assertThat(delta(now, "patched")).as("admission answers with a patch (100 + dns + dry run)").isEqualTo(102);
    assertThat(delta(now, "denied")).as("denied admissions").isEqualTo(1);
    assertThat(subrange.metric("subrange_clusterip_allocator_allocation_duration_seconds_count",
        Map.of("cidr", CIDR_LABEL))).isGreaterThanOrEqualTo(101);
  }

  private Map<String, Double> counters() {
    String allocations = "subrange_clusterip_allocator_allocation_total";
    String errors = "subrange_clusterip_allocator_allocation_errors_total";
    String admissions = "subrange_admission_requests_total";
    return Map.of(
        "dynamic", subrange.metric(allocations, Map.of("cidr", CIDR_LABEL, "scope", "dynamic")),
        "static", subrange.metric(allocations, Map.of("cidr", CIDR_LABEL, "scope", "static")),
        "errors.static", subrange.metric(errors, Map.of("cidr", CIDR_LABEL, "scope", "static")),
        "errors.dynamic", subrange.metric(errors, Map.of("cidr", CIDR_LABEL, "scope", "dynamic")),
        "allocated", allocatedIps(),
        "available", subrange.metric("subrange_clusterip_allocator_available_ips", Map.of("cidr", CIDR_LABEL)),
        "patched", subrange.metric(admissions, Map.of("kind", "Service", "operation", "CREATE", "result", "patched")),
        "denied", subrange.metric(admissions, Map.of("kind", "Service", "operation", "CREATE", "result", "denied")));
  }

  private double delta(Map<String, Double> now, String key) {
    return now.get(key) - baseline.get(key);
  }

  private double allocatedIps() {
    return subrange.metric("subrange_clusterip_allocator_allocated_ips", Map.of("cidr", CIDR_LABEL));
  }

  private static Service service(String name, String clusterIp) {
    return new ServiceBuilder()
        .withNewMetadata().withName(name).endMetadata()
        .withNewSpec().withClusterIP(clusterIp).addNewPort().withPort(80).endPort().endSpec()
        .build();
  }

  private static long ipv4(String text) {
    String[] parts = text.split("\\.");
    assertThat(parts).as("IPv4 address " + text).hasSize(4);
    long value = 0;
    for (String part : parts) {
      value = (value << 8) | Integer.parseInt(part);
    }
    return value;
  }
}
