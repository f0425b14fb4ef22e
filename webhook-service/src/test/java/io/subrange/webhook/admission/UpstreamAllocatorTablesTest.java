package io.subrange.webhook.admission;

import static io.subrange.webhook.admission.AdmissionReviews.review;
import static io.subrange.webhook.admission.AdmissionReviews.service;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.subrange.allocator.net.IpAddress;
import java.math.BigInteger;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * kube-apiserver's allocator tables (kubernetes {@code pkg/registry/core/service/ipallocator}
 * {@code bitmap_test.go}, {@code portallocator/allocator_test.go} and their {@code storage/}
 * tests) through {@code /mutate}, on ranges small enough to fill: 192.168.1.0/25 (upstream's
 * TestAllocateReserved block) with 2001:db8:1::/112 beside it, and NodePorts 30000-30128
 * (upstream's portallocator TestAllocateReserved range).
 *
 * <p>A taken value is 422 and a full range 500, as upstream answers them. Deliberate differences,
 * documented in the README: IPv6 ranges are not capped at 2^16 addresses (KEP-1880
 * ranges up to /64), and /31 and /32 Service ranges are refused at start-up rather than served
 * empty (upstream's TestAllocateTiny).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "server.ssl.enabled=false",
    "management.server.port=0",
    "subrange.service.cidrs=192.168.1.0/25,2001:db8:1::/112",
    "subrange.service.node-port-range=30000-30128"})
@DirtiesContext
// By name: the IP table asks for 2001:db8:1::ffff, in the IPv6 range's dynamic band, and must run
// before the port table's 129 IPv6 Services draw addresses there at random, one of which may be it.
@TestMethodOrder(MethodOrderer.MethodName.class)
class UpstreamAllocatorTablesTest {

  @Autowired
  WebTestClient client;

  /**
   * ipallocator TestAllocate (its out-of-range and already-allocated checks), TestAllocateReserved
   * and storage TestAllocateReservedDynamicBlockExhausted: a /25 holds 126 addresses, the
   * static band is the first 16 (min(max(16, 128/16), 256)); dynamic allocation fills
   * .17-.126 first, the static band stays free for requests, and then the block is full.
   */
  @Test
  void ipallocatorTestAllocateReserved() {
    // TestAllocate "IPv4" outOfRange: another block, the network address, the broadcast address.
    for (String outside : new String[] {"192.168.0.1", "192.168.1.0", "192.168.1.127", "192.168.2.2"}) {
      assertRefused(service("ip", "out-" + outside.replace('.', '-'), "ClusterIP", outside), 422,
          "spec.clusterIP: " + outside);
    }
    // TestAllocate "IPv6" outOfRange: another block and the network address; the last address
    // of an IPv6 block is assignable (no broadcast).
    assertRefused(service("ip", "out-v6-net", "ClusterIP", "2001:db8:1::"), 422, "spec.clusterIP: 2001:db8:1::");
    assertRefused(service("ip", "out-v6-other", "ClusterIP", "2001:db8:2::2"), 422, "spec.clusterIP: 2001:db8:2::2");
    assertThat(create(service("ip", "v6-last", "ClusterIP", "2001:db8:1::ffff")).path("spec").path("clusterIP")
        .asText()).isEqualTo("2001:db8:1::ffff");

    Set<String> dynamic = new HashSet<>();
    for (int i = 0; i < 110; i++) {
      String ip = create(service("ip", "dyn-" + i, "ClusterIP", null)).path("spec").path("clusterIP").asText();
      long offset = offsetIn("192.168.1.0", ip);
      assertThat(offset).as(ip).isBetween(17L, 126L);
      assertThat(dynamic.add(ip)).as(ip + " twice").isTrue();
    }
    assertThat(dynamic).hasSize(110);  // .17 to .126, every one
    for (int i = 1; i <= 16; i++) {
      create(service("ip", "static-" + i, "ClusterIP", "192.168.1." + i));
    }
    // TestAllocate alreadyAllocated, and the block is full for dynamic allocation.
    assertRefused(service("ip", "again", "ClusterIP", "192.168.1.1"), 422,
        "spec.clusterIP: 192.168.1.1 is already allocated to Service ip/static-1");
    assertRefused(service("ip", "one-too-many", "ClusterIP", null), 500, "spec.clusterIPs[0]: no free IPv4 address is left in 192.168.1.0/25");
  }

  /**
   * portallocator TestAllocate (out of range: one below the base, one past the inclusive end),
   * TestAllocateReserved and storage TestAllocateReservedDynamicBlockExhausted: 30000-30128 holds
   * 129 ports, its static band is 16 (min(max(16, 129/32), 128)); dynamic allocation fills
   * 30016-30128, requests take 30000-30015, and then the range is full.
   */
  @Test
  void portallocatorTestAllocateReserved() {
    for (int outside : new int[] {29999, 30129, 20000, 1}) {
      assertRefused(nodePortService("out-" + outside, outside), 422, "spec.ports[0].nodePort: port " + outside);
    }
    Set<Integer> dynamic = new HashSet<>();
    for (int i = 0; i < 113; i++) {
      int port = create(nodePortService("dyn-" + i, null)).path("spec").path("ports").get(0).path("nodePort").asInt();
      assertThat(port).isBetween(30016, 30128);
      assertThat(dynamic.add(port)).as(port + " twice").isTrue();
    }
    for (int port = 30000; port <= 30015; port++) {
      create(nodePortService("static-" + port, port));
    }
    assertRefused(nodePortService("again", 30001), 422,
        "spec.ports[0].nodePort: port 30001 is already allocated to Service port/static-30001");
    assertRefused(nodePortService("one-too-many", null), 500, "spec.ports[0].nodePort: no free");
  }

  /** NodePort Services on IPv6 addresses, so the port table does not use up the /25. */
  private static ObjectNode nodePortService(String name, Integer nodePort) {
    ObjectNode svc = service("port", name, "NodePort", null);
    ((ObjectNode) svc.path("spec")).putArray("ipFamilies").add("IPv6");
    if (nodePort != null) {
      ((ObjectNode) svc.path("spec").path("ports").get(0)).put("nodePort", nodePort);
    }
    return svc;
  }

  private static long offsetIn(String network, String address) {
    BigInteger base = new BigInteger(1, IpAddress.parse(network).toBytes());
    return new BigInteger(1, IpAddress.parse(address).toBytes()).subtract(base).longValueExact();
  }

  private JsonNode create(ObjectNode service) {
    return new AdmissionClient(client).created(service);
  }

  private void assertRefused(ObjectNode service, int code, String messageStart) {
    new AdmissionClient(client).denied(review("CREATE", service, false), code, messageStart);
  }
}
