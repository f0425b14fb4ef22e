package io.subrange.webhook.admission;

import io.fabric8.kubernetes.api.model.StatusDetails;
import io.fabric8.kubernetes.api.model.StatusDetailsBuilder;

/**
 * A request subrange refuses, with the HTTP status code and Kubernetes {@code Status.reason}
 * the API server passes on to the client, and a message a person can act on.
 */
public final class AdmissionDenied extends RuntimeException {

  private final int code;
  private final String reason;
  /** Status.details, as kube-apiserver fills them for this reason; null for most denials. */
  private final StatusDetails details;

  private AdmissionDenied(int code, String reason, String message) {
    this(code, reason, message, null);
  }

  private AdmissionDenied(int code, String reason, String message, StatusDetails details) {
    super(message, null, false, false);
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  /**
   * 409 AlreadyExists, as kube-apiserver answers a create of a name that exists (the API server
   * passes code, reason and details on, so clients' IsAlreadyExists holds).
   *
   * @param resource the plural resource name, as upstream's message has it ("services")
   */
  public static AdmissionDenied alreadyExists(String resource, String name) {
    return new AdmissionDenied(409, "AlreadyExists", resource + " \"" + name + "\" already exists",
        new StatusDetailsBuilder().withName(name).withKind(resource).build());
  }

  /** 422: the request itself is wrong (malformed or out of range). */
  public static AdmissionDenied invalid(String message) {
    return new AdmissionDenied(422, "Invalid", message);
  }

  /** 409: a Node's pod CIDRs collide with another node's, or no ClusterCIDR has room for it. */
  public static AdmissionDenied conflict(String message) {
    return new AdmissionDenied(409, "Conflict", message);
  }

  /**
   * 500 InternalError: no value is left in the range, as kube-apiserver answers it ("failed to
   * allocate a serviceIP: range is full"); controllers requeue with backoff until one is freed.
   */
  public static AdmissionDenied rangeFull(String message) {
    return new AdmissionDenied(500, "InternalError", message);
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

  /** Status.details for the answer, or null when the denial carries none. */
  public StatusDetails details() {
    return details;
  }
}
