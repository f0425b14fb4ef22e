package io.subrange.webhook.admission;

import com.fasterxml.jackson.core.Base64Variants;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.StatusDetails;
import io.subrange.webhook.Failures;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The answers a webhook gives (allowed, allowed with a patch, denied) and the translation of a
 * handler's failure into a denial, shared by the mutating and validating dispatchers; and the
 * answer written as the AdmissionReview the API server reads.
 */
final class AdmissionAnswers {

  private static final Logger log = LoggerFactory.getLogger(AdmissionAnswers.class);

  private AdmissionAnswers() {
  }

  /**
   * The outcome of one call: the answer's fields ({@code patch} the JSON Patch as JSON, null
   * without one; {@code status} only for a denial), and {@code result} naming it for metrics.
   */
  record Outcome(String uid, boolean allowed, byte[] patch, List<String> warnings, Status status, String result) {
  }

  static Outcome allowed(String uid, List<String> warnings) {
    return new Outcome(uid, true, null, warnings, null, "allowed");
  }

  /** Allowed with the patch; allowed alone when {@code patch} is null (nothing changed). */
  static Outcome patched(String uid, byte[] patch, List<String> warnings) {
    if (patch == null) {
      return allowed(uid, warnings);
    }
    return new Outcome(uid, true, patch, warnings, null, "patched");
  }

  private static Outcome denied(String uid, int code, String reason, String message, StatusDetails details,
      String result) {
    Status status = new StatusBuilder().withStatus("Failure").withCode(code).withReason(reason)
        .withMessage(message).withDetails(details).build();
    return new Outcome(uid, false, null, List.of(), status, result);
  }

  /** A handler's failure as the answer: its denial, a 503 on timeout, or a 500 that leaks no internals. */
  static Outcome failure(AdmissionCall call, Throwable failure, Duration timeout) {
    Throwable cause = Failures.cause(failure);
    if (cause instanceof AdmissionDenied denied) {
      return denied(call.uid(), denied.code(), denied.reason(), denied.getMessage(), denied.details(), "denied");
    }
    if (cause instanceof TimeoutException) {
      // The answer must not claim an allocation that is not durable; a late one is reclaimed.
      return denied(call.uid(), 503, "ServiceUnavailable", "subrange could not make the allocation for this"
          + " request durable within " + timeout.toMillis() + " ms; retry shortly", null, "denied");
    }
    log.error("Internal error admitting {} {} {}/{} (uid {})", call.operation(), call.kind(), call.namespace(),
        call.name(), call.uid(), cause);
    return denied(call.uid(), 500, "InternalError", "subrange failed to process this request ("
        + cause.getClass().getSimpleName() + "); nothing was allocated for it; see the subrange logs", null, "error");
  }

  /**
   * The answer as the API server reads it, written field by field: every create's answer is
   * written here, and going through the fabric8 model's builders and bean serializers took about
   * as much of a profile as the diff did (docs/performance.md, "Nineteenth round"). The patch
   * goes in as base64 (Jackson's binary: the standard alphabet with padding, no line breaks, as
   * Go's encoding/json reads a []byte). A denial's status is written by the mapper.
   */
  static byte[] json(ObjectMapper mapper, Outcome outcome) {
    int patchSize = outcome.patch() == null ? 0 : outcome.patch().length;
    ByteArrayOutputStream json = new ByteArrayOutputStream(256 + patchSize * 4 / 3);
    try (JsonGenerator out = mapper.createGenerator(json)) {
      out.writeStartObject();
      out.writeStringField("apiVersion", AdmissionReviewReader.API_VERSION);
      out.writeStringField("kind", AdmissionReviewReader.KIND);
      out.writeObjectFieldStart("response");
      out.writeStringField("uid", outcome.uid());
      out.writeBooleanField("allowed", outcome.allowed());
      if (outcome.patch() != null) {
        out.writeStringField("patchType", "JSONPatch");
        out.writeFieldName("patch");
        out.writeBinary(Base64Variants.MIME_NO_LINEFEEDS, outcome.patch(), 0, outcome.patch().length);
      }
      if (outcome.status() != null) {
        out.writeFieldName("status");
        out.writeObject(outcome.status());
      }
      if (!outcome.warnings().isEmpty()) {
        out.writeArrayFieldStart("warnings");
        for (String warning : outcome.warnings()) {
          out.writeString(warning);
        }
        out.writeEndArray();
      }
      out.writeEndObject();
      out.writeEndObject();
      out.flush();
      return json.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException("an AdmissionReview answer could not be written as JSON", e);
    }
  }
}
