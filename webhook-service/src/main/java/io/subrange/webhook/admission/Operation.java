package io.subrange.webhook.admission;

/** The operations an AdmissionReview can carry. */
public enum Operation {
  CREATE, UPDATE, DELETE, CONNECT
}
