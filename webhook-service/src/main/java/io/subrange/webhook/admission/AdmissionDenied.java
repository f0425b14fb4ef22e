package io.subrange.webhook.admission;

/**
 * A request subrange refuses, with the HTTP status code and Kubernetes {@code Status.reason}
 * the API server passes on to the client, and a message a person can act on.
 */
public final class AdmissionDenied extends RuntimeException {

  private final int code;
  private final String reason;

  private AdmissionDenied(int code, String reason, String message) {
    super(message, null, false, false);
    this.code = code;
    this.reason = reason;
  }

  /** 422: the request itself is wrong (malformed or out of range). */
  public static AdmissionDenied invalid(String message) {
    return new AdmissionDenied(422, "Invalid", message);
  }

  /** 409: the request collides with what others hold, or nothing is left to give. */
  public static AdmissionDenied conflict(String message) {
    return new AdmissionDenied(409, "Conflict", message);
  }

  /** 503: subrange could not make the allocation durable; retrying later may work. */
  public static AdmissionDenied unavailable(String message) {
    return new AdmissionDenied(503, "ServiceUnavailable", message);
  }

  public int code() {
    return code;
  }

  public String reason() {
    return reason;
  }
}
