package io.subrange.webhook;

import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;

/** What went wrong in a future: the failure itself, and a one-line reason for logs and answers. */
public final class Failures {

  private Failures() {
  }

  /** The failure a future completed with, without the CompletionException a stage wraps it in. */
  public static Throwable cause(Throwable failure) {
    return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
  }

  /** {@code failure} as an unchecked exception to rethrow from a stage. */
  public static RuntimeException rethrowable(Throwable failure) {
    return failure instanceof RuntimeException runtime ? runtime : new CompletionException(failure);
  }

  /** The innermost cause's message ("timed out" for a timeout, the class name when it has none). */
  public static String rootMessage(Throwable failure) {
    Throwable root = failure;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    if (root instanceof TimeoutException) {
      return "timed out";
    }
    return root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
  }
}
