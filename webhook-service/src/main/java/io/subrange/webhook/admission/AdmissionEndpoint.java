package io.subrange.webhook.admission;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.subrange.webhook.Failures;
import io.subrange.webhook.admission.AdmissionAnswers.Outcome;
import io.subrange.webhook.config.SubrangeProperties;
import io.subrange.webhook.lifecycle.ShutdownDrain;
import io.subrange.webhook.metrics.AdmissionMetrics;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;
import org.springframework.util.unit.DataSize;

/**
 * {@code POST /mutate} and {@code POST /validate}: the mutating and validating admission
 * webhooks. A well-formed AdmissionReview always gets an AdmissionReview back with the same uid;
 * a body that is not one gets HTTP 400 with a one-line reason; past the in-flight cap a request
 * is answered 429 before its body is read, a body larger than the limit 413, one that does not
 * arrive in time 408.
 *
 * <p>This is what an admission call means, whatever carries it; {@link AdmissionConnection}
 * carries it: a Netty handler on the main server's connections, ahead of Reactor Netty's HTTP
 * handling (see there for why).
 */
@Component
public class AdmissionEndpoint implements SmartLifecycle {

  private static final Logger log = LoggerFactory.getLogger(AdmissionEndpoint.class);
  private static final String UNKNOWN = "unknown";
  private static final String JSON = "application/json";
  private static final String TEXT = "text/plain;charset=UTF-8";

  private final AdmissionReviewReader reader;
  private final MutatingAdmission mutating;
  private final ValidatingAdmission validating;
  private final AdmissionMetrics metrics;
  private final ObjectMapper mapper;
  private final ShutdownDrain drain;
  private final int maxBodyBytes;
  private final boolean admits;
  /** Admissions being worked on; past the cap, requests are answered 429 before their bodies are read. */
  private final Semaphore inFlight;
  private final int maxInFlight;
  private final Duration bodyReadTimeout;
  /** Admission calls one connection serves before its answer closes it; 0 for no limit. */
  private final int callsPerConnection;
  /** How long an admission may take (said in the answer when a store write did not finish in it). */
  private final Duration admissionTimeout;
  private volatile boolean running;

  public AdmissionEndpoint(AdmissionReviewReader reader, MutatingAdmission mutating, ValidatingAdmission validating,
      AdmissionMetrics metrics, ObjectMapper mapper, ShutdownDrain drain,
      @Value("${spring.codec.max-in-memory-size:5MB}") DataSize maxBodySize, SubrangeProperties properties) {
    this.maxInFlight = properties.admission().maxInFlight();
    this.inFlight = new Semaphore(maxInFlight);
    this.bodyReadTimeout = properties.admission().bodyReadTimeout();
    this.callsPerConnection = properties.admission().callsPerConnection();
    this.admissionTimeout = properties.admission().timeout();
    this.admits = properties.role().admits();
    this.reader = reader;
    this.mutating = mutating;
    this.validating = validating;
    this.metrics = metrics;
    this.mapper = mapper;
    this.drain = drain;
    this.maxBodyBytes = (int) maxBodySize.toBytes();
    metrics.watchInFlight(() -> maxInFlight - inFlight.availablePermits(), maxInFlight);
  }

  /** The webhook a request path names ({@code mutate} or {@code validate}), or null for any other. */
  static String webhookOf(String uri) {
    int end = uri.indexOf('?');
    String path = end < 0 ? uri : uri.substring(0, end);
    return switch (path) {
      case "/mutate" -> "mutate";
      case "/validate" -> "validate";
      default -> null;
    };
  }

  /**
   * What a request for {@code webhook} gets before its body is read: null when it is taken (an
   * in-flight place is held for it until {@link #leave}), else the answer that turns it away.
   */
  Reply enter(String webhook, long started) {
    if (!admits) {
      // The reconciler runs the same jar; only the webhook role answers admission.
      return Reply.text(HttpResponseStatus.NOT_FOUND,
          "this process runs subrange.role=reconciler; admission is served by the webhook role");
    }
    if (!inFlight.tryAcquire()) {
      metrics.record(webhook, UNKNOWN, UNKNOWN, "throttled", System.nanoTime() - started);
      return Reply.text(HttpResponseStatus.TOO_MANY_REQUESTS, "subrange is working on " + maxInFlight
          + " admission requests already (subrange.admission.max-in-flight); retry shortly").retryAfterOneSecond();
    }
    return null;
  }

  /** Gives back the in-flight place {@link #enter} took. */
  void leave() {
    inFlight.release();
  }

  int maxBodyBytes() {
    return maxBodyBytes;
  }

  Duration bodyReadTimeout() {
    return bodyReadTimeout;
  }

  /** Whether a connection that has served {@code answered} admission calls is done (subrange.admission.calls-per-connection). */
  boolean connectionServed(int answered) {
    return callsPerConnection > 0 && answered >= callsPerConnection;
  }

  /** A connection closed after its last call, for the API server to open another. */
  void connectionRotated() {
    metrics.connectionRotated();
  }

  /** Whether answers should close their connections (the drain at shutdown). */
  boolean draining() {
    return drain.draining();
  }

  Reply tooLarge(String webhook, long started) {
    metrics.record(webhook, UNKNOWN, UNKNOWN, "invalid", System.nanoTime() - started);
    return Reply.text(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
        "body is larger than " + maxBodyBytes + " bytes (spring.codec.max-in-memory-size)");
  }

  Reply bodyTimedOut(String webhook, long started) {
    metrics.record(webhook, UNKNOWN, UNKNOWN, "invalid", System.nanoTime() - started);
    return Reply.text(HttpResponseStatus.REQUEST_TIMEOUT,
        "the request body did not arrive within " + bodyReadTimeout.toMillis() + " ms");
  }

  /** The caller went away while sending its body: nobody to answer. */
  void bodyAbandoned(String webhook, long started) {
    log.debug("A {} call's connection ended before its body did", webhook);
    metrics.record(webhook, UNKNOWN, UNKNOWN, "abandoned", System.nanoTime() - started);
  }

  /**
   * Admits one request body. The answer's future always completes normally: every failure is an
   * answer (400 for a body that is not an AdmissionReview, a 500 AdmissionReview for what goes
   * wrong while admitting, a plain 500 for a bug here).
   */
  Answering answer(String webhook, byte[] body, long started) {
    Function<AdmissionCall, CompletableFuture<Outcome>> admission =
        webhook.equals("mutate") ? mutating::admit : validating::admit;
    AdmissionCall call;
    try {
      call = reader.read(body);
    } catch (MalformedAdmissionReviewException e) {
      metrics.record(webhook, UNKNOWN, UNKNOWN, "invalid", System.nanoTime() - started);
      return Answering.now(Reply.text(HttpResponseStatus.BAD_REQUEST, e.getMessage()));
    } catch (RuntimeException e) {
      return Answering.now(bug(webhook, e, started));
    }
    Answering answering = new Answering(webhook, call, started);
    CompletableFuture<Outcome> outcome;
    try {
      outcome = admission.apply(call);
    } catch (RuntimeException e) {
      outcome = CompletableFuture.failedFuture(e);
    }
    answering.reply = outcome.handle((done, failure) -> {
      try {
        return answered(answering, done, failure);
      } catch (RuntimeException e) {
        return bug(webhook, e, started);
      }
    });
    return answering;
  }

  private Reply answered(Answering answering, Outcome done, Throwable failure) {
    AdmissionCall call = answering.call;
    String webhook = answering.webhook;
    Outcome outcome = done;
    if (failure != null) {
      Throwable cause = Failures.cause(failure);
      if (cause instanceof MalformedAdmissionReviewException malformed) {
        if (answering.answered.compareAndSet(false, true)) {
          metrics.record(webhook, call.kind().kind(), call.operation().name(), "invalid",
              System.nanoTime() - answering.started);
        }
        return Reply.text(HttpResponseStatus.BAD_REQUEST, malformed.getMessage());
      }
      // Whatever else goes wrong is answered as an AdmissionReview the API server shows (500).
      outcome = AdmissionAnswers.failure(call, failure, admissionTimeout);
    }
    Reply reply = Reply.json(AdmissionAnswers.json(mapper, outcome));
    if (answering.answered.compareAndSet(false, true)) {
      metrics.record(webhook, call.kind().kind(), call.operation().name(), outcome.result(),
          System.nanoTime() - answering.started);
    }
    if (log.isDebugEnabled()) {
      log.debug("{} {} {} {}/{} uid={} dryRun={}: {}", webhook, call.operation(), call.kind(), call.namespace(),
          call.name(), call.uid(), call.dryRun(), outcome.result());
    }
    return reply;
  }

  /**
   * The caller went away before the answer: the API server gave up at the webhook's
   * timeoutSeconds (or the connection broke). Counted, so a budget too close to the timeout shows.
   */
  void abandoned(Answering answering) {
    if (answering.call != null && answering.answered.compareAndSet(false, true)) {
      AdmissionCall call = answering.call;
      metrics.record(answering.webhook, call.kind().kind(), call.operation().name(), "abandoned",
          System.nanoTime() - answering.started);
      log.info("{} {} {} {}/{} uid={}: the caller gave up after {} ms, before the answer", answering.webhook,
          call.operation(), call.kind(), call.namespace(), call.name(), call.uid(),
          (System.nanoTime() - answering.started) / 1_000_000);
    }
  }

  /** A bug, not bad input: said in one line, never with a stack trace to the caller. */
  private Reply bug(String webhook, Throwable e, long started) {
    log.error("Answering a {} call failed", webhook, e);
    metrics.record(webhook, UNKNOWN, UNKNOWN, "error", System.nanoTime() - started);
    return Reply.text(HttpResponseStatus.INTERNAL_SERVER_ERROR, "subrange failed to answer this request ("
        + e.getClass().getSimpleName() + "); see the subrange logs");
  }

  // ---- lifecycle: answers in progress end before the server stops ---------------------------------

  @Override
  public void start() {
    running = true;
  }

  /**
   * After the drain ({@link ShutdownDrain}, which stops first) and before the web server: waits
   * for admissions still being answered, at most the admission budget. Reactor Netty's graceful
   * shutdown waits for the requests it handles; these it does not see.
   */
  @Override
  public void stop() {
    running = false;
    try {
      if (inFlight.tryAcquire(maxInFlight, admissionTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
        inFlight.release(maxInFlight);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  @Override
  public int getPhase() {
    return SmartLifecycle.DEFAULT_PHASE - 1;
  }

  /** One admission being answered: what it asked (for metrics when its caller goes away), and the reply. */
  static final class Answering {
    private final String webhook;
    private final AdmissionCall call;
    private final long started;
    private final AtomicBoolean answered = new AtomicBoolean();
    private CompletableFuture<Reply> reply;

    private Answering(String webhook, AdmissionCall call, long started) {
      this.webhook = webhook;
      this.call = call;
      this.started = started;
    }

    static Answering now(Reply reply) {
      Answering answering = new Answering(null, null, 0);
      answering.reply = CompletableFuture.completedFuture(reply);
      return answering;
    }

    CompletableFuture<Reply> reply() {
      return reply;
    }
  }

  /** What is sent back: a status, a content type and the body as bytes. */
  record Reply(HttpResponseStatus status, String contentType, byte[] body, boolean retryLater) {

    static Reply json(byte[] body) {
      return new Reply(HttpResponseStatus.OK, JSON, body, false);
    }

    /** A one-line reason, newline-terminated as a terminal prints it. */
    static Reply text(HttpResponseStatus status, String reason) {
      return new Reply(status, TEXT, (reason + "\n").getBytes(StandardCharsets.UTF_8), false);
    }

    /** The same, saying {@code Retry-After: 1}. */
    Reply retryAfterOneSecond() {
      return new Reply(status, contentType, body, true);
    }
  }
}
