package io.subrange.webhook.admission;

import io.subrange.webhook.admission.AdmissionAnswers.Outcome;
import io.subrange.webhook.config.SubrangeProperties;
import io.subrange.webhook.metrics.AdmissionMetrics;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.util.unit.DataSize;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * {@code POST /mutate} and {@code POST /validate}: the mutating and validating admission
 * webhooks. A well-formed AdmissionReview always gets an AdmissionReview back with the same uid;
 * a body that is not one gets HTTP 400 with a one-line reason.
 */
@RestController
public class AdmissionEndpoint {

  private static final Logger log = LoggerFactory.getLogger(AdmissionEndpoint.class);
  private static final String UNKNOWN = "unknown";

  private final AdmissionReviewReader reader;
  private final MutatingAdmission mutating;
  private final ValidatingAdmission validating;
  private final AdmissionMetrics metrics;
  private final int maxBodyBytes;
  private final boolean admits;
  /** Admissions being worked on; past the cap, requests are answered 429 before their bodies are read. */
  private final Semaphore inFlight;
  private final int maxInFlight;
  private final Duration bodyReadTimeout;

  public AdmissionEndpoint(AdmissionReviewReader reader, MutatingAdmission mutating, ValidatingAdmission validating,
      AdmissionMetrics metrics, @Value("${spring.codec.max-in-memory-size:5MB}") DataSize maxBodySize,
      SubrangeProperties properties) {
    this.maxInFlight = properties.admission().maxInFlight();
    this.inFlight = new Semaphore(maxInFlight);
    this.bodyReadTimeout = properties.admission().bodyReadTimeout();
    this.admits = properties.role().admits();
    this.reader = reader;
    this.mutating = mutating;
    this.validating = validating;
    this.metrics = metrics;
    this.maxBodyBytes = (int) maxBodySize.toBytes();
    metrics.watchInFlight(() -> maxInFlight - inFlight.availablePermits(), maxInFlight);
  }

  @PostMapping(path = "/mutate")
  public Mono<ResponseEntity<Object>> mutate(ServerHttpRequest request) {
    return serve(request, "mutate", mutating::admit);
  }

  @PostMapping(path = "/validate")
  public Mono<ResponseEntity<Object>> validate(ServerHttpRequest request) {
    return serve(request, "validate", validating::admit);
  }

  /** Reads the body whatever its content type, so a wrong one is a 400 with a reason, not a 415. */
  private Mono<ResponseEntity<Object>> serve(ServerHttpRequest request, String webhook,
      Function<AdmissionCall, CompletableFuture<Outcome>> admission) {
    long started = System.nanoTime();
    if (!admits) {
      // The reconciler runs the same jar; only the webhook role answers admission.
      return Mono.just(ResponseEntity.status(HttpStatus.NOT_FOUND).contentType(MediaType.TEXT_PLAIN)
          .body("this process runs subrange.role=reconciler; admission is served by the webhook role\n"));
    }
    if (!inFlight.tryAcquire()) {
      metrics.record(webhook, UNKNOWN, UNKNOWN, "throttled", System.nanoTime() - started);
      return Mono.just(ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS).header("Retry-After", "1")
          .contentType(MediaType.TEXT_PLAIN)
          .body("subrange is working on " + maxInFlight + " admission requests already"
              + " (subrange.admission.max-in-flight); retry shortly\n"));
    }
    AtomicBoolean released = new AtomicBoolean();
    Runnable release = () -> {
      if (released.compareAndSet(false, true)) {
        inFlight.release();
      }
    };
    return DataBufferUtils.join(request.getBody(), maxBodyBytes)
        .timeout(bodyReadTimeout)
        .map(buffer -> {
          byte[] bytes = new byte[buffer.readableByteCount()];
          buffer.read(bytes);
          DataBufferUtils.release(buffer);
          return bytes;
        })
        .defaultIfEmpty(new byte[0])
        .flatMap(body -> admit(body, started, webhook, admission))
        .onErrorResume(DataBufferLimitException.class, e -> {
          metrics.record(webhook, UNKNOWN, UNKNOWN, "invalid", System.nanoTime() - started);
          return Mono.just(ResponseEntity.status(HttpStatus.PAYLOAD_TOO_LARGE).contentType(MediaType.TEXT_PLAIN)
              .body("body is larger than " + maxBodyBytes + " bytes (spring.codec.max-in-memory-size)\n"));
        })
        .onErrorResume(TimeoutException.class, e -> {
          metrics.record(webhook, UNKNOWN, UNKNOWN, "invalid", System.nanoTime() - started);
          return Mono.just(ResponseEntity.status(HttpStatus.REQUEST_TIMEOUT).contentType(MediaType.TEXT_PLAIN)
              .body("the request body did not arrive within " + bodyReadTimeout.toMillis() + " ms\n"));
        })
        .doFinally(signal -> release.run());
  }

  private Mono<ResponseEntity<Object>> admit(byte[] body, long started, String webhook,
      Function<AdmissionCall, CompletableFuture<Outcome>> admission) {
    AdmissionCall call;
    try {
      call = reader.read(body);
    } catch (MalformedAdmissionReviewException e) {
      metrics.record(webhook, UNKNOWN, UNKNOWN, "invalid", System.nanoTime() - started);
      return Mono.just(badRequest(e.getMessage()));
    }
    String kind = call.kind().kind();
    String operation = call.operation().name();
    AtomicBoolean answered = new AtomicBoolean();
    return Mono.defer(() -> Mono.fromFuture(admission.apply(call)))
        .map(outcome -> {
          answered.set(true);
          metrics.record(webhook, kind, operation, outcome.result(), System.nanoTime() - started);
          log.debug("{} {} {} {}/{} uid={} dryRun={}: {}", webhook, operation, kind, call.namespace(), call.name(),
              call.uid(), call.dryRun(), outcome.result());
          return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body((Object) outcome.review());
        })
        .onErrorResume(MalformedAdmissionReviewException.class, e -> {
          answered.set(true);
          metrics.record(webhook, kind, operation, "invalid", System.nanoTime() - started);
          return Mono.just(badRequest(e.getMessage()));
        })
        .doOnCancel(() -> {
          // The caller went away first: the API server gave up at the webhook's timeoutSeconds
          // (or the connection broke). Counted, so a budget too close to the timeout shows.
          if (answered.compareAndSet(false, true)) {
            metrics.record(webhook, kind, operation, "abandoned", System.nanoTime() - started);
            log.info("{} {} {} {}/{} uid={}: the caller gave up after {} ms, before the answer", webhook, operation,
                kind, call.namespace(), call.name(), call.uid(), (System.nanoTime() - started) / 1_000_000);
          }
        });
  }

  private static ResponseEntity<Object> badRequest(String reason) {
    return ResponseEntity.badRequest().contentType(MediaType.TEXT_PLAIN).body(reason + "\n");
  }
}
