package io.subrange.webhook.admission;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.CustomResource;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

/**
 * Turns a request body into an {@link AdmissionCall}, or says in one line why it cannot:
 * not JSON, not an {@code admission.k8s.io/v1} AdmissionReview, no {@code request} or
 * {@code uid}, or an object that is not the kind the request names.
 *
 * <p>It reads the body once, as a stream of tokens, and builds nothing it does not need:
 * {@code userInfo}, {@code options} and the like are skipped, and an embedded object is decoded
 * into the type its kind's handlers take as it is read, when {@code request.kind} came before it
 * (the API server writes it first). An object of a kind nobody here handles, or one that came
 * before {@code request.kind}, is only marked where it lies ({@link EmbeddedObject}) and decoded
 * from there if needed. Reading a Service's review takes about 30% less time, and allocates a
 * third, of what it took as a JSON tree with the object decoded from the tree
 * (ObjectDecodingBenchmark: 3.64 against 5.19 µs). The read limits of the
 * mapper ({@link JsonReadLimits}) hold on every token, skipped ones included; limits on what a
 * string may build hold where one is built. An object that does not decode into its type is
 * refused as it is read, so before what the checks after the read would refuse.
 */
@Component
public class AdmissionReviewReader {

  static final String API_VERSION = "admission.k8s.io/v1";
  static final String KIND = "AdmissionReview";

  /** Reads the review, and decodes embedded objects without {@code metadata.managedFields}. */
  private final ObjectMapper objects;
  /**
   * A reader for each handled kind, of the type its objects are decoded into as they are read:
   * made once, with the type and its deserializer resolved, which the mapper looks up on every
   * call otherwise.
   */
  private final Map<ObjectKind, ObjectReader> readers;

  @Autowired
  public AdmissionReviewReader(ObjectMapper mapper, List<Mutator<?>> mutators, List<Validator<?>> validators) {
    this(mapper, Stream.concat(mutators.stream().map(Mutator::target), validators.stream().map(Validator::target))
        .toList());
  }

  /**
   * A reader for the kinds of these handlers' targets (each kind decoded into one type). Custom
   * resources are not decoded as they are read: fabric8's {@code CustomResource} ignores the kind
   * and apiVersion an object states (it always reports its own), which {@link #requireKind}
   * checks; they are rare enough for the slower path.
   */
  public AdmissionReviewReader(ObjectMapper mapper, List<AdmissionTarget<?>> targets) {
    this.objects = mapper.copy().addMixIn(ObjectMeta.class, WithoutManagedFields.class);
    Map<ObjectKind, Class<?>> byKind = new HashMap<>();
    for (AdmissionTarget<?> target : targets) {
      Class<?> earlier = byKind.putIfAbsent(target.kind(), target.type());
      if (earlier != null && earlier != target.type()) {
        throw new IllegalStateException(target.kind() + " is handled as both " + earlier.getName() + " and "
            + target.type().getName());
      }
    }
    byKind.values().removeIf(CustomResource.class::isAssignableFrom);
    Map<ObjectKind, ObjectReader> readers = new HashMap<>();
    byKind.forEach((kind, type) -> readers.put(kind, objects.readerFor(type)));
    this.readers = Map.copyOf(readers);
  }

  /**
   * Drops {@code metadata.managedFields} when decoding: nothing in admission reads them, the patch
   * never covers them, and the model decodes every field path of them into nested maps
   * (ObjectDecodingBenchmark measures a Service's AdmissionReview with and without them).
   */
  @JsonIgnoreProperties("managedFields")
  private abstract static class WithoutManagedFields {
  }

  public AdmissionCall read(byte[] body) {
    if (body == null || body.length == 0) {
      throw new MalformedAdmissionReviewException("empty body: expected an " + API_VERSION + " " + KIND);
    }
    Review review = parse(body);
    if (!API_VERSION.equals(review.apiVersion) || !KIND.equals(review.kind)) {
      throw new MalformedAdmissionReviewException("expected apiVersion " + API_VERSION + ", kind " + KIND
          + "; got apiVersion \"" + review.apiVersion + "\", kind \"" + review.kind + "\"");
    }
    Request request = review.request;
    if (request == null) {
      throw new MalformedAdmissionReviewException("AdmissionReview has no request object");
    }
    String uid = required(request.uid, "uid");
    if (request.kind == null) {
      throw new MalformedAdmissionReviewException("request.kind must be an object with group, version and kind");
    }
    Operation operation = operation(required(request.operation, "operation"));
    Embedded object = request.object;
    Embedded oldObject = request.oldObject;
    if (object == null && (operation == Operation.CREATE || operation == Operation.UPDATE)) {
      throw new MalformedAdmissionReviewException("request.object is missing for " + operation);
    }
    if (oldObject == null && operation == Operation.UPDATE) {
      throw new MalformedAdmissionReviewException("request.oldObject is missing for UPDATE");
    }
    requireKind(object, "request.object", request.kind);
    requireKind(oldObject, "request.oldObject", request.kind);
    return new AdmissionCall(uid, request.kind, operation, request.namespace, request.name, request.dryRun,
        object == null ? null : object.object(), oldObject == null ? null : oldObject.object());
  }

  // ---- one pass over the tokens: what is found, checked only once the whole body was read -------

  /** The review's fields subrange reads; a field that is missing or of the wrong type stays as its default. */
  private static final class Review {
    String apiVersion = "";
    String kind = "";
    Request request;
  }

  private static final class Request {
    String uid;
    ObjectKind kind;
    String operation;
    String namespace = "";
    String name = "";
    boolean dryRun;
    Embedded object;
    Embedded oldObject;
  }

  /** An embedded object where it lies, with the kind and apiVersion it states ("" when it states none). */
  private record Embedded(EmbeddedObject object, String kind, String apiVersion) {
  }

  private Review parse(byte[] body) {
    try (JsonParser parser = objects.getFactory().createParser(body)) {
      JsonToken root = parser.nextToken();
      if (root == null) {
        throw new MalformedAdmissionReviewException("empty body: expected an " + API_VERSION + " " + KIND);
      }
      if (root != JsonToken.START_OBJECT) {
        throw new MalformedAdmissionReviewException("body is JSON but not an object: expected an "
            + API_VERSION + " " + KIND);
      }
      Review review = new Review();
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String field = parser.currentName();
        JsonToken value = parser.nextToken();
        switch (field) {
          case "apiVersion" -> review.apiVersion = text(parser);
          case "kind" -> review.kind = text(parser);
          case "request" -> review.request = value == JsonToken.START_OBJECT ? request(parser, body) : skip(parser);
          default -> parser.skipChildren();
        }
      }
      return review;
    } catch (JsonProcessingException e) {
      JsonLocation at = e.getLocation();
      String where = at == null ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr();
      throw new MalformedAdmissionReviewException("body is not JSON: " + e.getOriginalMessage() + where);
    } catch (IOException e) {
      throw new MalformedAdmissionReviewException("body could not be read: " + e.getMessage());
    }
  }

  private Request request(JsonParser parser, byte[] body) throws IOException {
    Request request = new Request();
    while (parser.nextToken() == JsonToken.FIELD_NAME) {
      String field = parser.currentName();
      JsonToken value = parser.nextToken();
      switch (field) {
        case "uid" -> request.uid = value == JsonToken.VALUE_STRING ? parser.getText() : skip(parser);
        case "kind" -> request.kind = value == JsonToken.START_OBJECT ? objectKind(parser) : skip(parser);
        case "operation" -> request.operation = value == JsonToken.VALUE_STRING ? parser.getText() : skip(parser);
        case "namespace" -> request.namespace = text(parser);
        case "name" -> request.name = text(parser);
        case "dryRun" -> request.dryRun = bool(parser);
        case "object" -> request.object = embedded(parser, body, "request.object", request.kind);
        case "oldObject" -> request.oldObject = embedded(parser, body, "request.oldObject", request.kind);
        default -> parser.skipChildren();
      }
    }
    return request;
  }

  /** {@code request.kind}: null unless version and kind are strings and kind is not blank. */
  private static ObjectKind objectKind(JsonParser parser) throws IOException {
    String group = "";
    String version = null;
    String kind = null;
    while (parser.nextToken() == JsonToken.FIELD_NAME) {
      String field = parser.currentName();
      JsonToken value = parser.nextToken();
      switch (field) {
        case "group" -> group = text(parser);
        case "version" -> version = value == JsonToken.VALUE_STRING ? parser.getText() : skip(parser);
        case "kind" -> kind = value == JsonToken.VALUE_STRING ? parser.getText() : skip(parser);
        default -> parser.skipChildren();
      }
    }
    return version == null || kind == null || kind.isBlank() ? null : new ObjectKind(group, version, kind);
  }

  /**
   * The object starting at the current token, or null for JSON null; refused when it is anything
   * else. Decoded as it is read when {@code kind} (request.kind, if it came first) is handled here.
   */
  private Embedded embedded(JsonParser parser, byte[] body, String where, ObjectKind kind) throws IOException {
    JsonToken token = parser.currentToken();
    if (token == JsonToken.VALUE_NULL) {
      return null;
    }
    if (token != JsonToken.START_OBJECT) {
      throw new MalformedAdmissionReviewException(where + " is not a JSON object");
    }
    long start = parser.currentTokenLocation().getByteOffset();
    ObjectReader reader = kind == null ? null : readers.get(kind);
    HasMetadata decoded = null;
    String statedKind = "";
    String statedApiVersion = "";
    if (reader != null) {
      decoded = decode(parser, reader, where, kind);
      statedKind = decoded.getKind() == null ? "" : decoded.getKind();
      statedApiVersion = decoded.getApiVersion() == null ? "" : decoded.getApiVersion();
    } else {
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String field = parser.currentName();
        parser.nextToken();
        switch (field) {
          case "kind" -> statedKind = text(parser);
          case "apiVersion" -> statedApiVersion = text(parser);
          default -> parser.skipChildren();
        }
      }
    }
    long end = parser.currentLocation().getByteOffset();
    if (start < 0 || end <= start) {
      // Only a body in UTF-16 or UTF-32 has no byte offsets; the API server sends UTF-8.
      throw new MalformedAdmissionReviewException("body is not UTF-8 JSON");
    }
    return new Embedded(new EmbeddedObject(objects, body, (int) start, (int) (end - start), decoded), statedKind,
        statedApiVersion);
  }

  /**
   * Decodes the object at the parser into its kind's type. The model's kinds and apiVersions
   * start as their own, so an object that states none passes {@link #requireKind}, as it did
   * before it was decoded here.
   */
  private HasMetadata decode(JsonParser parser, ObjectReader reader, String where, ObjectKind kind)
      throws IOException {
    try {
      return (HasMetadata) reader.readValue(parser);
    } catch (JsonProcessingException e) {
      // Broken JSON or a read limit, also deep inside the object (where databind wraps it), is
      // said as the body's fault, as when the body is read; anything else is the object's.
      for (Throwable cause = e; cause != null; cause = cause.getCause()) {
        if (cause instanceof StreamReadException || cause instanceof StreamConstraintsException) {
          throw (JsonProcessingException) cause;
        }
      }
      throw EmbeddedObject.invalid(where, kind, e);
    }
  }

  /** A scalar's text ("" for null); a structure is skipped and reads as "". */
  private static String text(JsonParser parser) throws IOException {
    JsonToken token = parser.currentToken();
    if (token.isStructStart()) {
      parser.skipChildren();
      return "";
    }
    return token == JsonToken.VALUE_NULL ? "" : parser.getText();
  }

  /** A scalar as JSON's truthiness has it ("true", non-zero numbers); false for anything else. */
  private static boolean bool(JsonParser parser) throws IOException {
    if (parser.currentToken().isStructStart()) {
      parser.skipChildren();
      return false;
    }
    return parser.getValueAsBoolean(false);
  }

  /** Skips the current value; null, for fields whose value must be of another type. */
  private static <T> T skip(JsonParser parser) throws IOException {
    parser.skipChildren();
    return null;
  }

  // ---- checks on what was found ------------------------------------------------------------

  private static String required(String value, String field) {
    if (value == null || value.isBlank()) {
      throw new MalformedAdmissionReviewException("request." + field + " is missing or not a string");
    }
    return value;
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

  /** An embedded object that states its kind must state the one request.kind names. */
  private static void requireKind(Embedded object, String where, ObjectKind expected) {
    if (object == null) {
      return;
    }
    String kind = object.kind();
    String apiVersion = object.apiVersion();
    if ((!kind.isEmpty() && !kind.equals(expected.kind()))
        || (!apiVersion.isEmpty() && !apiVersion.equals(expected.apiVersion()))) {
      throw new MalformedAdmissionReviewException(where + " is " + (apiVersion.isEmpty() ? "?" : apiVersion) + " "
          + (kind.isEmpty() ? "?" : kind) + ", but request.kind says " + expected);
    }
  }
}
