package io.subrange.webhook.admission;

/** A body that is not a usable AdmissionReview; answered with HTTP 400 and this one-line reason. */
public final class MalformedAdmissionReviewException extends RuntimeException {

  public MalformedAdmissionReviewException(String reason) {
    super(reason.replaceAll("\\s+", " ").trim(), null, false, false);
  }
}
