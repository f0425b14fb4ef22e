package io.subrange.webhook.ranges.view;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.math.BigInteger;
import java.util.Base64;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * {@code GET /ranges} on the management port over real HTTP, after allocating through
 * {@code POST /mutate} on the main port.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "server.ssl.enabled=false",
    "management.server.port=0",
    "subrange.service.cidrs=10.0.0.0/24,fd00::/64"})
@AutoConfigureObservability
@DirtiesContext
class RangesEndpointTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @Autowired
  WebTestClient client;

  @LocalManagementPort
  int managementPort;

  private String dynamicAddress;

  /** The same named Services every time: creating one again gets the address it holds. */
  @BeforeEach
  void allocate() {
    admit("kube-system", "dns", "10.0.0.10");
    admit("default", "v6-static", "fd00::a");
    dynamicAddress = admit("default", "web", null);
  }

  @Test
  void answersJsonByDefaultWithBandsCountsAndStaticHolders() {
    JsonNode ranges = getJson(null);
    JsonNode v4 = serviceRange(ranges, "10.0.0.0/24");
    assertThat(v4.path("name").asText()).isEqualTo("kubernetes");
    assertThat(v4.path("family").asText()).isEqualTo("IPv4");
    assertThat(v4.path("terminating").asBoolean()).isFalse();
    assertThat(v4.path("size").asLong()).isEqualTo(254);
    assertThat(v4.path("used").asLong()).isEqualTo(2);
    assertThat(v4.path("free").asLong()).isEqualTo(252);
    assertThat(v4.path("staticBand").toString())
        .isEqualTo("{\"range\":\"10.0.0.1-10.0.0.16\",\"size\":16,\"used\":1,\"free\":15}");
    assertThat(v4.path("dynamicBand").toString())
        .isEqualTo("{\"range\":\"10.0.0.17-10.0.0.254\",\"size\":238,\"used\":1,\"free\":237}");
    assertThat(v4.path("staticBandHolders").toString())
        .isEqualTo("[{\"address\":\"10.0.0.10\",\"holder\":\"Service kube-system/dns\"}]");
    assertThat(dynamicAddress).as("the dynamic Service is counted in the dynamic band").startsWith("10.0.0.");

    JsonNode nodePorts = ranges.path("nodePorts");
    assertThat(nodePorts).hasSize(1);
    assertThat(nodePorts.get(0).path("ports").asText()).isEqualTo("30000-32767");
    assertThat(nodePorts.get(0).path("size").asLong()).isEqualTo(2768);
    assertThat(nodePorts.get(0).path("staticBand").path("range").asText()).isEqualTo("30000-30085");
    assertThat(nodePorts.get(0).path("staticBand").path("size").asLong()).isEqualTo(86);
    assertThat(ranges.path("podCidrs").isArray()).isTrue();
  }

  @Test
  void countsTheSlash64Exactly() {
    JsonNode v6 = serviceRange(getJson(null), "fd00::/64");
    assertThat(v6.path("family").asText()).isEqualTo("IPv6");
    assertThat(v6.path("size").isBigInteger()).isTrue();
    assertThat(v6.path("size").bigIntegerValue()).isEqualTo(new BigInteger("18446744073709551615"));
    assertThat(v6.path("used").bigIntegerValue()).isEqualTo(BigInteger.ONE);
    assertThat(v6.path("free").bigIntegerValue()).isEqualTo(new BigInteger("18446744073709551614"));
    assertThat(v6.path("staticBand").path("range").asText()).isEqualTo("fd00::1-fd00::100");
    assertThat(v6.path("dynamicBand").path("size").bigIntegerValue())
        .isEqualTo(new BigInteger("18446744073709551359"));
    assertThat(v6.path("staticBandHolders").get(0).path("address").asText()).isEqualTo("fd00::a");
    assertThat(v6.path("staticBandHolders").get(0).path("holder").asText()).isEqualTo("Service default/v6-static");
  }

  @Test
  void answersJsonWheneverTheAcceptHeaderAllowsIt() {
    for (String accept : new String[] {"*/*", "application/json", "application/json, text/plain, */*",
        "text/plain;q=0.9, */*;q=0.1", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}) {
      management().get().uri("/ranges").header(HttpHeaders.ACCEPT, accept).exchange()
          .expectStatus().isOk()
          .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_JSON)
          .expectBody().jsonPath("$.serviceRanges[0].cidr").isEqualTo("10.0.0.0/24");
    }
  }

  @Test
  void answersTextPlainWithBandLinesAndHolders() {
    String text = management().get().uri("/ranges").accept(MediaType.TEXT_PLAIN).exchange()
        .expectStatus().isOk()
        .expectHeader().contentTypeCompatibleWith(MediaType.TEXT_PLAIN)
        .expectBody(String.class).returnResult().getResponseBody();
    assertThat(text).contains(
        "10.0.0.0/24  kubernetes  IPv4  254 addresses  2 used  252 free\n"
            + "  static   10.0.0.1-10.0.0.16    [#.........]  1 of 16 used\n"
            + "  dynamic  10.0.0.17-10.0.0.254  [#.........]  1 of 238 used\n"
            + "  static band holders\n"
            + "    10.0.0.10  Service kube-system/dns\n");
    assertThat(text).contains("fd00::/64  kubernetes  IPv6  18446744073709551615 addresses  1 used"
        + "  18446744073709551614 free\n");
    assertThat(text).contains("    fd00::a  Service default/v6-static\n");
    assertThat(text).contains("NodePorts\n30000-32767  nodeports  2768 ports  0 used  2768 free\n");
    assertThat(text).as("no negative count").doesNotContainPattern("\\s-[0-9]");
    assertThat(text.lines()).allSatisfy(line -> assertThat(line.length()).isLessThan(100));
  }

  @Test
  void answersTextForAnyTextTypeWithoutJson() {
    management().get().uri("/ranges").header(HttpHeaders.ACCEPT, "text/*").exchange()
        .expectStatus().isOk()
        .expectHeader().contentType("text/plain;charset=UTF-8")
        .expectBody(String.class).value(text -> assertThat(text).startsWith("Service ranges\n"));
  }

  @Test
  void refusesAnAcceptItCannotProduceWith406() {
    management().get().uri("/ranges").accept(MediaType.IMAGE_PNG).exchange()
        .expectStatus().isEqualTo(406);
    management().get().uri("/ranges").accept(MediaType.APPLICATION_XML).exchange()
        .expectStatus().isEqualTo(406);
  }

  private WebTestClient management() {
    return WebTestClient.bindToServer().baseUrl("http://localhost:" + managementPort).build();
  }

  private JsonNode getJson(String accept) {
    WebTestClient.RequestHeadersSpec<?> request = management().get().uri("/ranges");
    if (accept != null) {
      request = request.header(HttpHeaders.ACCEPT, accept);
    }
    return request.exchange().expectStatus().isOk()
        .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_JSON)
        .expectBody(JsonNode.class).returnResult().getResponseBody();
  }

  private static JsonNode serviceRange(JsonNode ranges, String cidr) {
    for (JsonNode range : ranges.path("serviceRanges")) {
      if (range.path("cidr").asText().equals(cidr)) {
        return range;
      }
    }
    throw new AssertionError("no Service range " + cidr + " in " + ranges);
  }

  /** Creates a Service through /mutate and returns the address it holds. */
  private String admit(String namespace, String name, String clusterIp) {
    ObjectNode service = JSON.createObjectNode().put("apiVersion", "v1").put("kind", "Service");
    service.putObject("metadata").put("namespace", namespace).put("name", name);
    ObjectNode spec = service.putObject("spec").put("type", "ClusterIP");
    if (clusterIp != null) {
      spec.put("clusterIP", clusterIp);
    }
    spec.putArray("ports").addObject().put("port", 80).put("protocol", "TCP");
    ObjectNode review = JSON.createObjectNode().put("apiVersion", "admission.k8s.io/v1").put("kind", "AdmissionReview");
    ObjectNode request = review.putObject("request").put("uid", UUID.randomUUID().toString());
    request.putObject("kind").put("group", "").put("version", "v1").put("kind", "Service");
    request.put("namespace", namespace).put("name", name).put("operation", "CREATE").put("dryRun", false);
    request.set("object", service);
    JsonNode answer = client.post().uri("/mutate").contentType(MediaType.APPLICATION_JSON).bodyValue(review.toString())
        .exchange().expectStatus().isOk().expectBody(JsonNode.class).returnResult().getResponseBody();
    assertThat(answer.path("response").path("allowed").asBoolean()).as(answer.toString()).isTrue();
    return clusterIp != null ? clusterIp : patchedClusterIp(answer);
  }

  private static String patchedClusterIp(JsonNode answer) {
    try {
      byte[] patch = Base64.getDecoder().decode(answer.path("response").path("patch").asText());
      for (JsonNode op : JSON.readTree(patch)) {
        if (op.path("path").asText().equals("/spec/clusterIP")) {
          return op.path("value").asText();
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    throw new AssertionError("no clusterIP in " + answer);
  }
}
