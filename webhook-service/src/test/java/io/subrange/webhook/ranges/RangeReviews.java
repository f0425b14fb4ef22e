package io.subrange.webhook.ranges;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.UUID;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * AdmissionReviews for ServiceCIDRs and ClusterCIDRs as kube-apiserver sends them to
 * {@code /validate} (cluster-scoped: no namespace), with {@code oldObject} for updates.
 */
final class RangeReviews {

  static final ObjectMapper JSON = new ObjectMapper();

  private final WebTestClient client;

  RangeReviews(WebTestClient client) {
    this.client = client;
  }

  static ObjectNode serviceCidr(String name, String... cidrs) {
    ObjectNode object = object("subrange.io/v1alpha1", "ServiceCIDR", name);
    ObjectNode spec = object.putObject("spec");
    var list = spec.putArray("cidrs");
    for (String cidr : cidrs) {
      list.add(cidr);
    }
    return object;
  }

  /** A ClusterCIDR without nodeSelector; null ranges and bits are left out. */
  static ObjectNode clusterCidr(String name, Integer perNodeHostBits, String ipv4, String ipv6) {
    ObjectNode object = object("networking.x-k8s.io/v1", "ClusterCIDR", name);
    ObjectNode spec = object.putObject("spec");
    if (perNodeHostBits != null) {
      spec.put("perNodeHostBits", perNodeHostBits);
    }
    if (ipv4 != null) {
      spec.put("ipv4", ipv4);
    }
    if (ipv6 != null) {
      spec.put("ipv6", ipv6);
    }
    return object;
  }

  static ObjectNode parse(String json) {
    try {
      return (ObjectNode) JSON.readTree(json);
    } catch (Exception e) {
      throw new IllegalArgumentException(e);
    }
  }

  private static ObjectNode object(String apiVersion, String kind, String name) {
    ObjectNode object = JSON.createObjectNode();
    object.put("apiVersion", apiVersion).put("kind", kind);
    object.putObject("metadata").put("name", name);
    return object;
  }

  static ObjectNode review(String operation, JsonNode object, JsonNode oldObject, boolean dryRun) {
    JsonNode subject = object != null ? object : oldObject;
    ObjectNode review = JSON.createObjectNode();
    review.put("apiVersion", "admission.k8s.io/v1").put("kind", "AdmissionReview");
    ObjectNode request = review.putObject("request");
    request.put("uid", UUID.randomUUID().toString());
    String apiVersion = subject.path("apiVersion").asText();
    int slash = apiVersion.indexOf('/');
    request.putObject("kind").put("group", apiVersion.substring(0, slash))
        .put("version", apiVersion.substring(slash + 1)).put("kind", subject.path("kind").asText());
    request.put("name", subject.path("metadata").path("name").asText(""));
    request.put("operation", operation);
    request.put("dryRun", dryRun);
    if (object != null) {
      request.set("object", object);
    }
    if (oldObject != null) {
      request.set("oldObject", oldObject);
    }
    return review;
  }

  /** The {@code response} of /validate for this review. */
  JsonNode validate(ObjectNode review) {
    JsonNode answer = client.post().uri("/validate").contentType(MediaType.APPLICATION_JSON)
        .bodyValue(review.toString())
        .exchange()
        .expectStatus().isOk()
        .expectBody(JsonNode.class).returnResult().getResponseBody();
    assertThat(answer.path("response").path("uid").asText()).isEqualTo(review.path("request").path("uid").asText());
    return answer.path("response");
  }

  JsonNode create(JsonNode object) {
    return validate(review("CREATE", object, null, false));
  }

  JsonNode update(JsonNode oldObject, JsonNode object) {
    return validate(review("UPDATE", object, oldObject, false));
  }

  static void assertAllowed(JsonNode response) {
    assertThat(response.path("allowed").asBoolean())
        .as("allowed, but was denied: %s", response.path("status").path("message").asText())
        .isTrue();
    assertThat(response.has("patch")).isFalse();
  }

  /** Denied with 422 Invalid and exactly this message. */
  static void assertInvalid(JsonNode response, String message) {
    assertThat(response.path("allowed").asBoolean()).as("denied").isFalse();
    assertThat(response.path("status").path("code").asInt()).isEqualTo(422);
    assertThat(response.path("status").path("reason").asText()).isEqualTo("Invalid");
    assertThat(response.path("status").path("message").asText()).isEqualTo(message);
  }
}
