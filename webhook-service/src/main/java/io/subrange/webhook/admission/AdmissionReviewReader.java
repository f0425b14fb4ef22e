package io.subrange.webhook.admission;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import org.springframework.stereotype.Component;

/**
 * Turns a request body into an {@link AdmissionCall}, or says in one line why it cannot:
 * not JSON, not an {@code admission.k8s.io/v1} AdmissionReview, no {@code request} or
 * {@code uid}, or an object that is not the kind the request names.
 */
@Component
public class AdmissionReviewReader {

  static final String API_VERSION = "admission.k8s.io/v1";
  static final String KIND = "AdmissionReview";

  private final ObjectMapper mapper;

  public AdmissionReviewReader(ObjectMapper mapper) {
    this.mapper = mapper;
  }

  public AdmissionCall read(byte[] body) {
    if (body == null || body.length == 0) {
      throw new MalformedAdmissionReviewException("empty body: expected an " + API_VERSION + " " + KIND);
    }
    JsonNode review = parse(body);
    if (!review.isObject()) {
      throw new MalformedAdmissionReviewException("body is JSON but not an object: expected an "
          + API_VERSION + " " + KIND);
    }
    String apiVersion = review.path("apiVersion").asText("");
    String kind = review.path("kind").asText("");
    if (!API_VERSION.equals(apiVersion) || !KIND.equals(kind)) {
      throw new MalformedAdmissionReviewException("expected apiVersion " + API_VERSION + ", kind " + KIND
          + "; got apiVersion \"" + apiVersion + "\", kind \"" + kind + "\"");
    }
    JsonNode request = review.get("request");
    if (request == null || !request.isObject()) {
      throw new MalformedAdmissionReviewException("AdmissionReview has no request object");
    }
    String uid = requiredText(request, "uid");
    ObjectKind objectKind = objectKind(request.get("kind"));
    Operation operation = operation(requiredText(request, "operation"));
    JsonNode object = objectOrNull(request, "object");
    JsonNode oldObject = objectOrNull(request, "oldObject");
    if (object == null && (operation == Operation.CREATE || operation == Operation.UPDATE)) {
      throw new MalformedAdmissionReviewException("request.object is missing for " + operation);
    }
    if (oldObject == null && operation == Operation.UPDATE) {
      throw new MalformedAdmissionReviewException("request.oldObject is missing for UPDATE");
    }
    requireKind(object, "request.object", objectKind);
    requireKind(oldObject, "request.oldObject", objectKind);
    return new AdmissionCall(uid, objectKind, operation, request.path("namespace").asText(""),
        request.path("name").asText(""), request.path("dryRun").asBoolean(false), object, oldObject);
  }

  private JsonNode parse(byte[] body) {
    try {
      JsonNode node = mapper.readTree(body);
      if (node == null || node.isMissingNode()) {
        throw new MalformedAdmissionReviewException("empty body: expected an " + API_VERSION + " " + KIND);
      }
      return node;
    } catch (JsonProcessingException e) {
      JsonLocation at = e.getLocation();
      String where = at == null ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr();
      throw new MalformedAdmissionReviewException("body is not JSON: " + e.getOriginalMessage() + where);
    } catch (IOException e) {
      throw new MalformedAdmissionReviewException("body could not be read: " + e.getMessage());
    }
  }

  private static String requiredText(JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null || !value.isTextual() || value.asText().isBlank()) {
      throw new MalformedAdmissionReviewException("request." + field + " is missing or not a string");
    }
    return value.asText();
  }

  private static ObjectKind objectKind(JsonNode kind) {
    if (kind == null || !kind.isObject() || !kind.path("version").isTextual() || !kind.path("kind").isTextual()
        || kind.path("kind").asText().isBlank()) {
      throw new MalformedAdmissionReviewException("request.kind must be an object with group, version and kind");
    }
    return new ObjectKind(kind.path("group").asText(""), kind.path("version").asText(), kind.path("kind").asText());
  }

  private static Operation operation(String text) {
    for (Operation operation : Operation.values()) {
      if (operation.name().equals(text)) {
        return operation;
      }
    }
    throw new MalformedAdmissionReviewException("request.operation \"" + text
        + "\" is not one of CREATE, UPDATE, DELETE, CONNECT");
  }

  private static JsonNode objectOrNull(JsonNode request, String field) {
    JsonNode value = request.get(field);
    if (value == null || value.isNull()) {
      return null;
    }
    if (!value.isObject()) {
      throw new MalformedAdmissionReviewException("request." + field + " is not a JSON object");
    }
    withoutManagedFields(value);
    return value;
  }

  /**
   * Drops {@code metadata.managedFields}: nothing in admission reads them, the patch never
   * covers them, and the model decodes every field path of them into nested maps
   * (ObjectDecodingBenchmark measures a Service's AdmissionReview with and without them).
   */
  private static void withoutManagedFields(JsonNode object) {
    if (object.get("metadata") instanceof ObjectNode metadata) {
      metadata.remove("managedFields");
    }
  }

  /** An embedded object that states its kind must state the one request.kind names. */
  private static void requireKind(JsonNode object, String where, ObjectKind expected) {
    if (object == null) {
      return;
    }
    String kind = object.path("kind").asText("");
    String apiVersion = object.path("apiVersion").asText("");
    if ((!kind.isEmpty() && !kind.equals(expected.kind()))
        || (!apiVersion.isEmpty() && !apiVersion.equals(expected.apiVersion()))) {
      throw new MalformedAdmissionReviewException(where + " is " + (apiVersion.isEmpty() ? "?" : apiVersion) + " "
          + (kind.isEmpty() ? "?" : kind) + ", but request.kind says " + expected);
    }
  }
}
