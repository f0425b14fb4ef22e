package io.subrange.webhook.admission;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import io.fabric8.zjsonpatch.JsonPatch;
import java.util.Map;
import java.util.UUID;

/** Builds AdmissionReview requests as kube-apiserver sends them, and reads answers. */
final class AdmissionReviews {

  static final ObjectMapper JSON = new ObjectMapper();

  private AdmissionReviews() {
  }

  static ObjectNode service(String namespace, String name, String type, String clusterIp) {
    ObjectNode service = JSON.createObjectNode();
    service.put("apiVersion", "v1").put("kind", "Service");
    service.putObject("metadata").put("name", name).put("namespace", namespace);
    ObjectNode spec = service.putObject("spec");
    spec.put("type", type);
    if (clusterIp != null) {
      spec.put("clusterIP", clusterIp);
    }
    ObjectNode port = spec.putArray("ports").addObject();
    port.put("name", "http").put("port", 80).put("protocol", "TCP").put("targetPort", 8080);
    return service;
  }

  static ObjectNode review(String operation, JsonNode object, boolean dryRun) {
    ObjectNode review = JSON.createObjectNode();
    review.put("apiVersion", "admission.k8s.io/v1").put("kind", "AdmissionReview");
    ObjectNode request = review.putObject("request");
    request.put("uid", UUID.randomUUID().toString());
    String kind = object.path("kind").asText();
    String apiVersion = object.path("apiVersion").asText();
    int slash = apiVersion.indexOf('/');
    request.putObject("kind").put("group", slash < 0 ? "" : apiVersion.substring(0, slash))
        .put("version", slash < 0 ? apiVersion : apiVersion.substring(slash + 1)).put("kind", kind);
    request.put("namespace", object.path("metadata").path("namespace").asText(""));
    request.put("name", object.path("metadata").path("name").asText(""));
    request.put("operation", operation);
    request.put("dryRun", dryRun);
    request.set("object", object);
    return review;
  }

  static ObjectNode node(String name, Map<String, String> labels, String... podCidrs) {
    ObjectNode node = JSON.createObjectNode();
    node.put("apiVersion", "v1").put("kind", "Node");
    ObjectNode metadata = node.putObject("metadata").put("name", name);
    ObjectNode labelNode = metadata.putObject("labels");
    labels.forEach(labelNode::put);
    ObjectNode spec = node.putObject("spec");
    if (podCidrs.length > 0) {
      spec.put("podCIDR", podCidrs[0]);
      ArrayNode list = spec.putArray("podCIDRs");
      for (String cidr : podCidrs) {
        list.add(cidr);
      }
    }
    return node;
  }

  /** An UPDATE review carrying the stored object too. */
  static ObjectNode update(JsonNode oldObject, JsonNode object, boolean dryRun) {
    ObjectNode review = review("UPDATE", object, dryRun);
    ((ObjectNode) review.path("request")).set("oldObject", oldObject);
    return review;
  }

  /** The object as the API server stores it: the request's object with the answer's patch applied. */
  static JsonNode admitted(JsonNode request, JsonNode answer) {
    return JsonPatch.apply(patch(answer), request.path("request").path("object"));
  }

  static ObjectNode port(ObjectNode service, String name, int port, String protocol, Integer nodePort) {
    ObjectNode entry = ((ArrayNode) service.path("spec").path("ports")).addObject();
    entry.put("name", name).put("port", port).put("protocol", protocol).put("targetPort", port);
    if (nodePort != null) {
      entry.put("nodePort", nodePort);
    }
    return service;
  }

  static String uid(JsonNode review) {
    return review.path("request").path("uid").asText();
  }

  /** The decoded JSON Patch of an answer, or an empty array when there is none. */
  static ArrayNode patch(JsonNode answer) {
    String encoded = answer.path("response").path("patch").asText("");
    if (encoded.isEmpty()) {
      return JSON.createArrayNode();
    }
    try {
      return (ArrayNode) JSON.readTree(new String(Base64.getDecoder().decode(encoded), StandardCharsets.UTF_8));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** The value a patch sets at {@code path}, or null. */
  static JsonNode patchedValue(JsonNode answer, String path) {
    for (JsonNode op : patch(answer)) {
      if (op.path("path").asText().equals(path)) {
        return op.get("value");
      }
    }
    return null;
  }
}
