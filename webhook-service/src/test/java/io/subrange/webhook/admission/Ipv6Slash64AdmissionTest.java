package io.subrange.webhook.admission;

import static io.subrange.webhook.admission.AdmissionReviews.patchedValue;
import static io.subrange.webhook.admission.AdmissionReviews.review;
import static io.subrange.webhook.admission.AdmissionReviews.service;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.subrange.allocator.ip.ServiceIpRange;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.http.MediaType;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/** /mutate with an IPv6 Service range as large as KEP-1880 allows: a whole /64. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "server.ssl.enabled=false",
    "management.server.port=0",
    "subrange.service.cidrs=fd00:10::/64"})
@AutoConfigureObservability
@DirtiesContext
class Ipv6Slash64AdmissionTest {

  private static final ServiceIpRange RANGE = ServiceIpRange.of(Cidr.parse("fd00:10::/64"));

  @Autowired
  WebTestClient client;

  @LocalManagementPort
  int managementPort;

  @Test
  void assignsDistinctAddressesFromTheDynamicBandOfTheWholeSlash64() {
    Set<IpAddress> seen = new HashSet<>();
    boolean upperHalf = false;
    for (int i = 0; i < 500; i++) {
      JsonNode answer = admit(review("CREATE", service("v6", "svc-" + i, "ClusterIP", null), false));
      IpAddress address = IpAddress.parse(patchedValue(answer, "/spec/clusterIP").asText());
      long offset = RANGE.offsetOf(address);
      assertThat(offset).as(address + " is assignable in the /64").isNotEqualTo(ServiceIpRange.NOT_ASSIGNABLE);
      assertThat(Long.compareUnsigned(offset, RANGE.staticBandSize())).as("dynamic band").isNotNegative();
      upperHalf |= offset < 0;
      assertThat(seen.add(address)).isTrue();
    }
    assertThat(upperHalf).as("addresses come from the whole /64, not a prefix of it").isTrue();
  }

  @Test
  void honoursTheLastAddressOfTheSlash64AndRefusesTheNetworkAddress() {
    ObjectNode last = service("v6", "last", "ClusterIP", "fd00:10::ffff:ffff:ffff:ffff");
    assertThat(admit(review("CREATE", last, false)).path("response").path("allowed").asBoolean()).isTrue();
    JsonNode network = admit(review("CREATE", service("v6", "net", "ClusterIP", "fd00:10::"), false));
    assertThat(network.path("response").path("status").path("code").asInt()).isEqualTo(422);
    assertThat(network.path("response").path("status").path("message").asText())
        .contains("fd00:10:: is the network address of fd00:10::/64");
  }

  @Test
  void reportsTheSizeOfTheRangeInMetrics() {
    admit(review("CREATE", service("v6", "metered", "ClusterIP", null), false));
    String text = WebTestClient.bindToServer().baseUrl("http://localhost:" + managementPort).build()
        .get().uri("/metrics").exchange().expectBody(String.class).returnResult().getResponseBody();
    String available = text.lines().filter(l -> l.startsWith("subrange_clusterip_allocator_available_ips{"))
        .findFirst().orElseThrow();
    double free = Double.parseDouble(available.substring(available.lastIndexOf(' ') + 1));
    assertThat(free).as("about 2^64 free addresses").isGreaterThan(1.8e19);
  }

  private JsonNode admit(ObjectNode request) {
    return client.post().uri("/mutate").contentType(MediaType.APPLICATION_JSON).bodyValue(request.toString())
        .exchange().expectStatus().isOk().expectBody(JsonNode.class).returnResult().getResponseBody();
  }
}
