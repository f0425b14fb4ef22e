package io.subrange.webhook.admission;

import static io.subrange.webhook.admission.AdmissionReviews.port;
import static io.subrange.webhook.admission.AdmissionReviews.review;
import static io.subrange.webhook.admission.AdmissionReviews.service;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.subrange.allocator.store.AllocationStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;

/**
 * Hostile or odd input: it is refused with a clear answer, before anything is reserved, and the
 * service stays up. Every case asserts that nothing was held.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "server.ssl.enabled=false",
    "management.server.port=0",
    "subrange.service.cidrs=10.0.0.0/24",
    "subrange.admission.name-other-namespaces-holders=false"})
@DirtiesContext
class HostileInputTest {

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @LocalServerPort
  int port;

  @Autowired
  AllocationStore store;

  @Test
  void namesAndUidsThatAreNotKubernetesOnesAreRefusedBeforeAnythingIsHeld() throws Exception {
    int before = store.allocations().size();
    String longName = "a".repeat(64);
    assertRefused(service("ns", "web\tx", "ClusterIP", null), "metadata.name: \"web\\u0009x\"");
    assertRefused(service("ns", "web\nx", "NodePort", null), "metadata.name: \"web\\u000ax\"");
    assertRefused(service("ns", longName, "ClusterIP", null), "metadata.name: \"" + longName + "\" must be at most 63");
    assertRefused(service("ns", "x".repeat(1_000_000), "ClusterIP", null), "metadata.name: \"xxxx");
    assertRefused(service("ns", "Web", "ClusterIP", null), "metadata.name: \"Web\" must consist of lower case");
    assertRefused(service("ns", "1web", "ClusterIP", null), "metadata.name: \"1web\" must consist of lower case");
    assertRefused(service("ns\tx", "web", "ClusterIP", null), "metadata.namespace: \"ns\\u0009x\"");
    ObjectNode badUid = service("ns", "web", "ClusterIP", null);
    ((ObjectNode) badUid.path("metadata")).put("uid", "u\tid");
    assertRefused(badUid, "metadata.uid: \"u\\u0009id\"");
    assertThat(store.allocations()).as("nothing held").hasSize(before);

    // A Node's name is a DNS subdomain: dots allowed, a newline not.
    JsonNode node = post(review("CREATE", AdmissionReviews.node("node-1.example\n", java.util.Map.of()), false));
    assertThat(node.path("response").path("status").path("code").asInt()).isEqualTo(422);
    assertThat(node.path("response").path("status").path("message").asText()).startsWith("metadata.name:");
  }

  @Test
  void oneServiceCannotTakeMoreNodePortsThanTheCapAndRetriesTakeNothingMore() throws Exception {
    ObjectNode greedy = service("ns", "greedy", "NodePort", null);
    ((ArrayNode) greedy.path("spec").path("ports")).removeAll();
    for (int i = 0; i < 2768; i++) {
      port(greedy, "p" + i, 1000 + i, "TCP", null);
    }
    assertRefused(greedy, "spec.ports: this Service asks for 2768 new NodePorts; subrange gives at most 100");
    assertThat(store.nodePortUsage().used()).isZero();

    // At the cap, a create retried over and over (refused later by a quota, say) holds one set.
    ObjectNode atCap = service("ns", "at-cap", "NodePort", null);
    ((ArrayNode) atCap.path("spec").path("ports")).removeAll();
    for (int i = 0; i < 100; i++) {
      port(atCap, "p" + i, 1000 + i, "TCP", null);
    }
    for (int attempt = 0; attempt < 20; attempt++) {
      assertThat(post(review("CREATE", atCap, false)).path("response").path("allowed").asBoolean()).isTrue();
    }
    assertThat(store.nodePortUsage().used()).isEqualTo(100);
    // The range is still usable by everyone else.
    JsonNode other = post(review("CREATE", service("ns", "other", "NodePort", null), false));
    assertThat(other.path("response").path("allowed").asBoolean()).isTrue();
  }

  @Test
  void deepOrHugeJsonIsRefusedWhileReadAndTheServiceStaysUp() throws Exception {
    String deep = "{\"a\":".repeat(200) + "1" + "}".repeat(200);
    HttpResponse<String> nested = raw(deep);
    assertThat(nested.statusCode()).isEqualTo(400);
    assertThat(nested.body()).contains("nesting depth");

    ObjectNode review = review("CREATE", service("ns", "huge", "ClusterIP", null), false);
    ((ObjectNode) review.path("request").path("object").path("metadata")).putObject("annotations")
        .put("a", "x".repeat(2 * 1024 * 1024));
    HttpResponse<String> longString = raw(review.toString());
    assertThat(longString.statusCode()).isEqualTo(400);
    assertThat(longString.body()).contains("String value length");

    HttpResponse<String> tooLarge = raw("[" + "1,".repeat(3 * 1024 * 1024) + "1]");
    assertThat(tooLarge.statusCode()).isEqualTo(413);

    JsonNode fine = post(review("CREATE", service("ns", "after", "ClusterIP", null), false));
    assertThat(fine.path("response").path("allowed").asBoolean()).isTrue();
  }

  @Test
  void holdersInOtherNamespacesAreNotNamedWhenConfiguredSo() throws Exception {
    assertThat(post(review("CREATE", service("team-a", "owner", "ClusterIP", "10.0.0.11"), false))
        .path("response").path("allowed").asBoolean()).isTrue();
    JsonNode otherTenant = post(review("CREATE", service("team-b", "taker", "ClusterIP", "10.0.0.11"), false));
    String message = otherTenant.path("response").path("status").path("message").asText();
    assertThat(message).startsWith("spec.clusterIP: 10.0.0.11 is already allocated in 10.0.0.0/24").doesNotContain("team-a");
    JsonNode dryRun = post(review("CREATE", service("team-b", "taker", "ClusterIP", "10.0.0.11"), true));
    assertThat(dryRun.path("response").path("status").path("message").asText()).doesNotContain("team-a")
        .startsWith("spec.clusterIP: 10.0.0.11 is already allocated in 10.0.0.0/24");
    JsonNode sameTenant = post(review("CREATE", service("team-a", "taker", "ClusterIP", "10.0.0.11"), false));
    assertThat(sameTenant.path("response").path("status").path("message").asText())
        .contains("allocated to Service team-a/owner");
  }

  private void assertRefused(ObjectNode object, String messageStart) throws Exception {
    JsonNode answer = post(review("CREATE", object, false));
    assertThat(answer.path("response").path("allowed").asBoolean()).as(answer.toString()).isFalse();
    assertThat(answer.path("response").path("status").path("code").asInt()).isEqualTo(422);
    assertThat(answer.path("response").path("status").path("message").asText()).startsWith(messageStart);
  }

  private JsonNode post(ObjectNode review) throws Exception {
    HttpResponse<String> response = raw(review.toString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return AdmissionReviews.JSON.readTree(response.body());
  }

  private HttpResponse<String> raw(String body) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/mutate"))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
