package io.subrange.webhook.admission;

import static io.subrange.webhook.admission.AdmissionReviews.patch;
import static io.subrange.webhook.admission.AdmissionReviews.patchedValue;
import static io.subrange.webhook.admission.AdmissionReviews.review;
import static io.subrange.webhook.admission.AdmissionReviews.service;
import static io.subrange.webhook.admission.AdmissionReviews.uid;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.subrange.allocator.ip.ServiceIpRange;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/** /mutate over real HTTP (plain, TLS is tested on its own) with the in-memory store. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "server.ssl.enabled=false",
    "management.server.port=0",
    "subrange.service.cidrs=10.0.0.0/24,fd00::/120"})
@AutoConfigureObservability  // Spring Boot tests turn metrics export off unless asked
@DirtiesContext
class AdmissionEndpointTest {

  private static final ServiceIpRange RANGE = ServiceIpRange.of(Cidr.parse("10.0.0.0/24"));
  /** The in-flight gauge at rest, as /metrics prints it. */
  private static final Pattern NONE_IN_FLIGHT =
      Pattern.compile("^subrange_admission_in_flight(\\{[^}]*\\})? 0\\.0$", Pattern.MULTILINE);

  @Autowired
  WebTestClient client;

  @LocalManagementPort
  int managementPort;

  @LocalServerPort
  int port;

  @Test
  void givesANewServiceAnAddressFromTheDynamicBand() {
    ObjectNode request = review("CREATE", service("default", "dynamic-one", "ClusterIP", null), false);
    JsonNode answer = admit(request);
    assertThat(answer.path("response").path("uid").asText()).isEqualTo(uid(request));
    assertThat(answer.path("response").path("allowed").asBoolean()).isTrue();
    assertThat(answer.path("response").path("patchType").asText()).isEqualTo("JSONPatch");
    IpAddress address = IpAddress.parse(patchedValue(answer, "/spec/clusterIP").asText());
    assertThat(RANGE.offsetOf(address)).isGreaterThanOrEqualTo(RANGE.staticBandSize());
    assertThat(patchedValue(answer, "/spec/clusterIPs").get(0).asText()).isEqualTo(address.toString());
    assertThat(patchedValue(answer, "/spec/ipFamilies").get(0).asText()).isEqualTo("IPv4");
    assertThat(patchedValue(answer, "/spec/ipFamilyPolicy").asText()).isEqualTo("SingleStack");
    assertThat(patch(answer)).hasSize(4);
  }

  @Test
  void honoursAFreeStaticAddressAndDeniesItToTheNextAskerNamingTheHolder() {
    JsonNode first = admit(review("CREATE", service("kube-system", "dns", "ClusterIP", "10.0.0.10"), false));
    assertThat(first.path("response").path("allowed").asBoolean()).isTrue();
    assertThat(patchedValue(first, "/spec/clusterIP")).isNull();
    assertThat(patchedValue(first, "/spec/clusterIPs").get(0).asText()).isEqualTo("10.0.0.10");

    JsonNode second = admit(review("CREATE", service("default", "impostor", "NodePort", "10.0.0.10"), false));
    JsonNode response = second.path("response");
    assertThat(response.path("allowed").asBoolean()).isFalse();
    assertThat(response.path("status").path("code").asInt()).isEqualTo(422);
    assertThat(response.path("status").path("message").asText())
        .isEqualTo("spec.clusterIP: 10.0.0.10 is already allocated to Service kube-system/dns in 10.0.0.0/24;"
            + " choose a free address, or leave spec.clusterIP empty to get one from the dynamic band");
  }

  @Test
  void deniesInvalidAndOutOfRangeAddressesWith422() {
    assertDenied(service("default", "bad", "ClusterIP", "10.0.0.300"), 422, "spec.clusterIP: \"10.0.0.300\" is not an IP address");
    assertDenied(service("default", "far", "ClusterIP", "10.1.0.5"), 422,
        "spec.clusterIP: 10.1.0.5 is not in any Service range (10.0.0.0/24)");
    assertDenied(service("default", "bcast", "ClusterIP", "10.0.0.255"), 422,
        "spec.clusterIP: 10.0.0.255 is the broadcast address of 10.0.0.0/24");
    assertDenied(service("default", "weird", "Weird", null), 422, "spec.type: \"Weird\" is not one of");
    ObjectNode mismatched = service("default", "mismatch", "ClusterIP", "10.0.0.20");
    ((ObjectNode) mismatched.path("spec")).putArray("clusterIPs").add("10.0.0.21");
    assertDenied(mismatched, 422, "spec.clusterIPs[0]: \"10.0.0.21\" must equal spec.clusterIP \"10.0.0.20\"");
  }

  @Test
  void leavesHeadlessAndExternalNameServicesAndOtherKindsAlone() {
    assertUntouched(review("CREATE", service("default", "headless", "ClusterIP", "None"), false));
    ObjectNode external = service("default", "ext", "ExternalName", null);
    ((ObjectNode) external.path("spec")).put("externalName", "example.com");
    assertUntouched(review("CREATE", external, false));
    ObjectNode pod = AdmissionReviews.JSON.createObjectNode().put("apiVersion", "v1").put("kind", "Pod");
    pod.putObject("metadata").put("name", "p").put("namespace", "default");
    assertUntouched(review("CREATE", pod, false));
    assertUntouched(review("DELETE", service("default", "later", "ClusterIP", null), false));
  }

  @Test
  void dryRunShowsAnAddressAndKeepsNothing() {
    double before = metric("subrange_clusterip_allocator_allocated_ips{application=\"subrange\",cidr=\"10.0.0.0/24\"}");
    JsonNode answer = admit(review("CREATE", service("default", "dry", "ClusterIP", null), true));
    assertThat(patchedValue(answer, "/spec/clusterIP").asText()).startsWith("10.0.0.");
    JsonNode staticDry = admit(review("CREATE", service("default", "dry2", "ClusterIP", "10.0.0.5"), true));
    assertThat(staticDry.path("response").path("allowed").asBoolean()).isTrue();
    assertThat(metric("subrange_clusterip_allocator_allocated_ips{application=\"subrange\",cidr=\"10.0.0.0/24\"}"))
        .isEqualTo(before);
    JsonNode real = admit(review("CREATE", service("default", "wet", "ClusterIP", "10.0.0.5"), false));
    assertThat(real.path("response").path("allowed").asBoolean()).as("the dry run reserved nothing").isTrue();
  }

  @Test
  void servesTheSecondFamilyWhenAskedForOneOfItsAddresses() {
    JsonNode answer = admit(review("CREATE", service("default", "v6", "ClusterIP", "fd00::a"), false));
    assertThat(answer.path("response").path("allowed").asBoolean()).isTrue();
    assertThat(patchedValue(answer, "/spec/clusterIPs").get(0).asText()).isEqualTo("fd00::a");
  }

  @Test
  void hundredsOfServicesNeverShareAnAddress() {
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < 150; i++) {
      JsonNode answer = admit(review("CREATE", service("load", "svc-" + i, "ClusterIP", null), false));
      assertThat(seen.add(patchedValue(answer, "/spec/clusterIP").asText())).isTrue();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "",
      "not json",
      "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"",
      "[1,2,3]",
      "{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\",\"request\":{}}",
      "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}",
      "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"kind\":{\"version\":\"v1\",\"kind\":\"Service\"},\"operation\":\"CREATE\"}}",
      "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"kind\":{\"version\":\"v1\",\"kind\":\"Service\"},\"operation\":\"PATCH\",\"object\":{}}}",
      "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"kind\":{\"version\":\"v1\",\"kind\":\"Service\"},\"operation\":\"CREATE\"}}",
      "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"kind\":{\"version\":\"v1\",\"kind\":\"Service\"},\"operation\":\"UPDATE\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Service\"}}}",
      "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"kind\":{\"version\":\"v1\",\"kind\":\"Service\"},\"operation\":\"CREATE\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}}}",
      "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"kind\":{\"version\":\"v1\",\"kind\":\"Service\"},\"operation\":\"CREATE\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"spec\":\"oops\"}}}",
  })
  void answersBadBodiesWith400AndOneLineThenKeepsServing(String body) {
    String reason = client.post().uri("/mutate").contentType(MediaType.APPLICATION_JSON).bodyValue(body.getBytes())
        .exchange()
        .expectStatus().isBadRequest()
        .expectHeader().contentTypeCompatibleWith(MediaType.TEXT_PLAIN)
        .expectBody(String.class).returnResult().getResponseBody();
    assertThat(reason).isNotBlank().endsWith("\n");
    assertThat(reason.strip()).doesNotContain("\n").doesNotContain("Exception").doesNotContain("\tat ");

    JsonNode next = admit(review("CREATE", service("default", "after-bad-" + Math.abs(body.hashCode()), "ClusterIP", null), false));
    assertThat(next.path("response").path("allowed").asBoolean()).isTrue();
  }

  @Test
  void namesTheProblemInTheReason() {
    assertThat(badRequest("not json")).startsWith("body is not JSON: ");
    assertThat(badRequest("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":"
        + "{\"uid\":\"u\",\"kind\":{\"version\":\"v1\",\"kind\":\"Service\"},\"operation\":\"CREATE\","
        + "\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}}}"))
        .isEqualTo("request.object is v1 Pod, but request.kind says v1 Service\n");
    assertThat(badRequest("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":"
        + "{\"kind\":{\"version\":\"v1\",\"kind\":\"Service\"},\"operation\":\"CREATE\"}}"))
        .isEqualTo("request.uid is missing or not a string\n");
    // A wrong content type is still read and judged by what it holds.
    String reason = client.post().uri("/mutate").contentType(MediaType.APPLICATION_FORM_URLENCODED).bodyValue("a=b")
        .exchange().expectStatus().isBadRequest().expectBody(String.class).returnResult().getResponseBody();
    assertThat(reason).startsWith("body is not JSON");
  }

  @Test
  void exposesPrometheusMetricsOnTheManagementPort() {
    admit(review("CREATE", service("metrics", "m1", "ClusterIP", null), false));
    // The answer can reach the client a moment before the request gives its place back (seen
    // once in CI): wait for the in-flight gauge to come back to 0.
    String text = await().atMost(Duration.ofSeconds(5)).until(this::metrics, t -> NONE_IN_FLIGHT.matcher(t).find());
    assertThat(text)
        .contains("subrange_clusterip_allocator_allocated_ips{")
        .contains("subrange_clusterip_allocator_available_ips{")
        .contains("subrange_clusterip_allocator_allocation_total{")
        .contains("subrange_clusterip_allocator_allocation_duration_seconds_bucket{")
        .contains("subrange_admission_requests_total{")
        .contains("subrange_admission_duration_seconds_bucket{")
        .containsPattern("(?m)^subrange_admission_max_in_flight(\\{[^}]*\\})? \\d+\\.0$")
        // Spring's per-request observation is off: subrange's own histogram times admissions.
        .doesNotContain("http_server_requests");
    admit(review("CREATE", service("metrics", "m2", "ClusterIP", null), false));
    String again = metrics();
    assertThat(sum(again, "subrange_admission_requests_total{") - sum(text, "subrange_admission_requests_total{"))
        .as("one more admission counted (its meters are remembered, not registered again)").isEqualTo(1.0);
  }

  private String metrics() {
    return WebTestClient.bindToServer().baseUrl("http://localhost:" + managementPort).build()
        .get().uri("/metrics").exchange().expectStatus().isOk().expectBody(String.class).returnResult()
        .getResponseBody();
  }

  private static double sum(String text, String prefix) {
    return text.lines().filter(line -> line.startsWith(prefix))
        .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1))).sum();
  }

  @Test
  void aNodeThatCannotGetPodCidrsIsAdmittedWithAWarning() {
    JsonNode response = admit(review("CREATE", AdmissionReviews.node("lonely", Map.of()), false))
        .path("response");
    assertThat(response.path("allowed").asBoolean()).isTrue();
    assertThat(response.has("patch")).isFalse();
    assertThat(response.path("warnings").get(0).asText())
        .contains("node lonely gets no pod CIDRs: no ClusterCIDR's nodeSelector matches");
  }

  @Test
  void answersProbesOnTheMainPort() {
    client.get().uri("/livez").exchange().expectStatus().isOk();
    client.get().uri("/readyz").exchange().expectStatus().isOk();
  }

  @Test
  void aCallerThatHangsUpHalfwayThroughItsBodyIsCountedAsAbandoned() throws Exception {
    String before = metrics();
    try (java.net.Socket socket = new java.net.Socket("127.0.0.1", port)) {
      socket.getOutputStream().write(("POST /mutate HTTP/1.1\r\nHost: subrange\r\nContent-Type: application/json\r\n"
          + "Content-Length: 1000\r\n\r\n{\"apiVersion\":").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      socket.getOutputStream().flush();
      Thread.sleep(200);  // the server has read part of the body when the connection ends
    }
    // Counted as abandoned (nobody is left to answer), not as an error of subrange's.
    String after = await().atMost(Duration.ofSeconds(5)).until(this::metrics,
        text -> sum(text, "subrange_admission_requests_total{") > sum(before, "subrange_admission_requests_total{"));
    assertThat(count(after, "abandoned") - count(before, "abandoned")).isEqualTo(1.0);
    assertThat(count(after, "error")).isEqualTo(count(before, "error"));
    assertThat(admit(review("CREATE", service("default", "after-hang-up", "ClusterIP", null), false))
        .path("response").path("allowed").asBoolean()).isTrue();
  }

  private static double count(String metrics, String result) {
    return metrics.lines().filter(line -> line.startsWith("subrange_admission_requests_total{")
            && line.contains("result=\"" + result + "\""))
        .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1))).sum();
  }

  @Test
  void admitsOnlyOnTheMainPortAndWithTheQueryTheApiServerAdds() {
    // The API server calls the configured path with ?timeout=5s appended.
    JsonNode answer = client.post().uri("/mutate?timeout=5s").contentType(MediaType.APPLICATION_JSON)
        .bodyValue(review("CREATE", service("default", "with-query", "ClusterIP", null), false).toString())
        .exchange().expectStatus().isOk().expectBody(JsonNode.class).returnResult().getResponseBody();
    assertThat(answer.path("response").path("allowed").asBoolean()).isTrue();
    // The routes are the main server's: the plain-HTTP management port must not allocate.
    WebTestClient management = WebTestClient.bindToServer().baseUrl("http://localhost:" + managementPort).build();
    for (String path : new String[] {"/mutate", "/validate"}) {
      management.post().uri(path).contentType(MediaType.APPLICATION_JSON)
          .bodyValue(review("CREATE", service("default", "via-management", "ClusterIP", null), false).toString())
          .exchange().expectStatus().isNotFound();
    }
  }

  private void assertDenied(ObjectNode object, int code, String messageStart) {
    JsonNode response = admit(review("CREATE", object, false)).path("response");
    assertThat(response.path("allowed").asBoolean()).isFalse();
    assertThat(response.path("status").path("code").asInt()).isEqualTo(code);
    assertThat(response.path("status").path("message").asText()).startsWith(messageStart);
  }

  private void assertUntouched(ObjectNode request) {
    JsonNode response = admit(request).path("response");
    assertThat(response.path("allowed").asBoolean()).isTrue();
    assertThat(response.has("patch")).isFalse();
  }

  private JsonNode admit(ObjectNode request) {
    return client.post().uri("/mutate").contentType(MediaType.APPLICATION_JSON).bodyValue(request.toString())
        .exchange()
        .expectStatus().isOk()
        .expectBody(JsonNode.class).returnResult().getResponseBody();
  }

  private String badRequest(String body) {
    return client.post().uri("/mutate").contentType(MediaType.APPLICATION_JSON).bodyValue(body)
        .exchange().expectStatus().isBadRequest().expectBody(String.class).returnResult().getResponseBody();
  }

  private double metric(String series) {
    String text = metrics();
    return text.lines().filter(l -> l.startsWith(series + " ")).map(l -> Double.parseDouble(l.substring(series.length() + 1)))
        .findFirst().orElseThrow(() -> new AssertionError("no series " + series));
  }
}
