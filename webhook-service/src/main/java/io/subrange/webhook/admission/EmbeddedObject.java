package io.subrange.webhook.admission;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An object embedded in an AdmissionReview ({@code request.object}, {@code request.oldObject}):
 * decoded already when {@link AdmissionReviewReader} knew its type as it read it, and otherwise
 * still as the bytes it came in, which the handler of its kind decodes straight into its own type.
 */
public final class EmbeddedObject {

  private final ObjectMapper decoder;
  private final byte[] body;
  private final int offset;
  private final int length;
  /** Decoded as it was read; handed out once, as handlers change what they get. */
  private final AtomicReference<Object> decoded;

  /**
   * @param decoder what decodes it (without {@code metadata.managedFields}, see {@link AdmissionReviewReader})
   * @param body the whole request body
   * @param offset where the object starts in it
   * @param length how many bytes it takes
   * @param decoded the object decoded as it was read; null when it was not
   */
  EmbeddedObject(ObjectMapper decoder, byte[] body, int offset, int length, Object decoded) {
    this.decoder = decoder;
    this.body = body;
    this.offset = offset;
    this.length = length;
    this.decoded = new AtomicReference<>(decoded);
  }

  /**
   * The object as a handler's type, its own to change, or why it is not one ({@code where}: as the
   * request names it).
   */
  public <T> T decode(Class<T> type, String where, ObjectKind kind) {
    Object ready = decoded.getAndSet(null);
    if (type.isInstance(ready)) {
      return type.cast(ready);
    }
    try {
      return decoder.readValue(body, offset, length, type);
    } catch (JsonProcessingException e) {
      throw invalid(where, kind, e);
    } catch (IOException | IllegalArgumentException e) {
      throw new MalformedAdmissionReviewException(where + " is not a valid " + kind + ": " + e.getMessage());
    }
  }

  /** Whether it was decoded as it was read and that object is not handed out yet. */
  boolean decodedAsRead() {
    return decoded.get() != null;
  }

  static MalformedAdmissionReviewException invalid(String where, ObjectKind kind, JsonProcessingException e) {
    return new MalformedAdmissionReviewException(where + " is not a valid " + kind + ": " + e.getOriginalMessage());
  }
}
