package io.subrange.webhook.kubernetes;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;

/**
 * fabric8's serialization for subrange's API clients, cheaper on the two things every watch event
 * pays for (docs/performance.md, "Eleventh round"):
 *
 * <ul>
 *   <li>Objects are read without {@code metadata.managedFields}. Nothing in subrange reads them,
 *       and fabric8 builds every field path of them into nested maps: about a third of a Service
 *       event's bytes. Writes are unaffected: the API server keeps an object's
 *       managedFields when an update leaves them out.</li>
 *   <li>A watch event's object is decoded straight into its class. fabric8 decodes it into a JSON
 *       tree first, to find its kind, and then converts the tree; the API server writes {@code kind}
 *       and {@code apiVersion} first, so the class is known after two fields.</li>
 * </ul>
 *
 * <p>Any event that does not start that way (other fields first, a kind fabric8 has no class for,
 * anything unexpected) is decoded by fabric8 as before, so the result is the same either way.
 */
final class ClientSerialization extends KubernetesSerialization {

  private final ObjectMapper mapper;

  ClientSerialization() {
    this(mapperWithoutManagedFields());
  }

  private ClientSerialization(ObjectMapper mapper) {
    super(mapper, true);
    this.mapper = mapper;
  }

  private static ObjectMapper mapperWithoutManagedFields() {
    ObjectMapper mapper = new ObjectMapper();
    mapper.addMixIn(ObjectMeta.class, WithoutManagedFields.class);
    return mapper;
  }

  @JsonIgnoreProperties({"managedFields"})
  private abstract static class WithoutManagedFields {
  }

  @Override
  public <T> T unmarshal(String str, Class<T> type) {
    if (type == WatchEvent.class) {
      WatchEvent event = watchEvent(str);
      if (event != null) {
        return type.cast(event);
      }
    }
    return super.unmarshal(str, type);
  }

  /**
   * {@code {"type":…,"object":{"kind":…,"apiVersion":…,…}}} (either order of kind and apiVersion)
   * decoded with the object's class known from the start; null when the event is not of that
   * shape or its kind has no class, for fabric8 to decode.
   */
  WatchEvent watchEvent(String json) {
    try {
      Class<? extends KubernetesResource> objectClass = objectClass(json);
      if (objectClass == null) {
        return null;
      }
      try (JsonParser parser = mapper.createParser(json)) {
        String type = objectStart(parser);
        if (type == null) {
          return null;
        }
        Object decoded = mapper.readerFor(objectClass).readValue(parser);
        if (parser.nextToken() != JsonToken.END_OBJECT || parser.nextToken() != null) {
          return null;
        }
        WatchEvent event = new WatchEvent();
        event.setType(type);
        event.setObject(decoded);
        return event;
      }
    } catch (IOException | RuntimeException e) {
      return null;  // fabric8's own decoding says what is wrong with it
    }
  }

  /**
   * The class of the event's object, from its first two fields, read by a parser of its own (a
   * dozen tokens): the object is then decoded from its start by another, with no tokens to replay.
   */
  private Class<? extends KubernetesResource> objectClass(String json) throws IOException {
    try (JsonParser parser = mapper.createParser(json)) {
      if (objectStart(parser) == null) {
        return null;
      }
      String kind = null;
      String apiVersion = null;
      for (int i = 0; i < 2; i++) {
        String field = parser.nextFieldName();
        String value = parser.nextTextValue();
        if ("kind".equals(field) && value != null) {
          kind = value;
        } else if ("apiVersion".equals(field) && value != null) {
          apiVersion = value;
        } else {
          return null;
        }
      }
      return kind == null || apiVersion == null ? null : getRegisteredKubernetesResource(apiVersion, kind);
    }
  }

  /** Reads {@code {"type":…,"object":{}, leaving the parser on the object's start; the type, or null. */
  private static String objectStart(JsonParser parser) throws IOException {
    if (parser.nextToken() != JsonToken.START_OBJECT || !"type".equals(parser.nextFieldName())) {
      return null;
    }
    String type = parser.nextTextValue();
    if (type == null || !"object".equals(parser.nextFieldName()) || parser.nextToken() != JsonToken.START_OBJECT) {
      return null;
    }
    return type;
  }
}
