package io.subrange.webhook.admission;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.subrange.webhook.admission.AdmissionAnswers.Outcome;
import io.subrange.webhook.config.SubrangeProperties;
import io.subrange.webhook.lifecycle.ShutdownDrain;
import io.subrange.webhook.metrics.AdmissionMetrics;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.web.embedded.netty.NettyRouteProvider;
import org.springframework.stereotype.Component;
import org.springframework.util.unit.DataSize;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.channel.AbortedException;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * {@code POST /mutate} and {@code POST /validate}: the mutating and validating admission
 * webhooks. A well-formed AdmissionReview always gets an AdmissionReview back with the same uid;
 * a body that is not one gets HTTP 400 with a one-line reason.
 *
 * <p>Served as routes of the Reactor Netty server Spring Boot runs (a {@link NettyRouteProvider}:
 * same port, TLS and connections as the rest of the application), ahead of Spring WebFlux's
 * dispatch. Every Service create is a call here, and WebFlux's per-request machinery (the
 * exchange, handler mapping, argument and result handling, the reactive JSON encoder) was about
 * a third of the serving threads' samples; these routes read the body, admit it and write the
 * answer's bytes, nothing else. Every other path falls through to WebFlux.
 */
@Component
public class AdmissionEndpoint implements NettyRouteProvider {

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
  /** How long an admission may take (said in the answer when a store write did not finish in it). */
  private final Duration admissionTimeout;

  public AdmissionEndpoint(AdmissionReviewReader reader, MutatingAdmission mutating, ValidatingAdmission validating,
      AdmissionMetrics metrics, ObjectMapper mapper, ShutdownDrain drain,
      @Value("${spring.codec.max-in-memory-size:5MB}") DataSize maxBodySize, SubrangeProperties properties) {
    this.maxInFlight = properties.admission().maxInFlight();
    this.inFlight = new Semaphore(maxInFlight);
    this.bodyReadTimeout = properties.admission().bodyReadTimeout();
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

  @Override
  public HttpServerRoutes apply(HttpServerRoutes routes) {
    return routes
        .post("/mutate", (request, response) -> serve(request, response, "mutate", mutating::admit))
        .post("/validate", (request, response) -> serve(request, response, "validate", validating::admit));
  }

  /** Reads the body whatever its content type, so a wrong one is a 400 with a reason, not a 415. */
  private Publisher<Void> serve(HttpServerRequest request, HttpServerResponse response, String webhook,
      Function<AdmissionCall, CompletableFuture<Outcome>> admission) {
    long started = System.nanoTime();
    if (!admits) {
      // The reconciler runs the same jar; only the webhook role answers admission.
      return send(response, Reply.text(HttpResponseStatus.NOT_FOUND,
          "this process runs subrange.role=reconciler; admission is served by the webhook role"));
    }
    if (!inFlight.tryAcquire()) {
      metrics.record(webhook, UNKNOWN, UNKNOWN, "throttled", System.nanoTime() - started);
      response.header(HttpHeaderNames.RETRY_AFTER, "1");
      return send(response, Reply.text(HttpResponseStatus.TOO_MANY_REQUESTS, "subrange is working on " + maxInFlight
          + " admission requests already (subrange.admission.max-in-flight); retry shortly"));
    }
    AtomicBoolean released = new AtomicBoolean();
    Runnable release = () -> {
      if (released.compareAndSet(false, true)) {
        inFlight.release();
      }
    };
    return body(request.receive())
        .timeout(bodyReadDeadline(request))
        .flatMap(body -> admit(body, started, webhook, admission))
        .onErrorResume(BodyTooLargeException.class, e -> {
          metrics.record(webhook, UNKNOWN, UNKNOWN, "invalid", System.nanoTime() - started);
          return Mono.just(Reply.text(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
              "body is larger than " + maxBodyBytes + " bytes (spring.codec.max-in-memory-size)"));
        })
        .onErrorResume(TimeoutException.class, e -> {
          metrics.record(webhook, UNKNOWN, UNKNOWN, "invalid", System.nanoTime() - started);
          return Mono.just(Reply.text(HttpResponseStatus.REQUEST_TIMEOUT,
              "the request body did not arrive within " + bodyReadTimeout.toMillis() + " ms"));
        })
        .onErrorResume(e -> e instanceof AbortedException || e instanceof IOException, e -> {
          // The caller went away while sending its body: nobody to answer.
          log.debug("A {} call's connection ended before its body did: {}", webhook, e.toString());
          metrics.record(webhook, UNKNOWN, UNKNOWN, "abandoned", System.nanoTime() - started);
          return Mono.empty();
        })
        .onErrorResume(e -> {
          // A bug, not bad input: say so in one line, never with a stack trace to the caller.
          log.error("Answering a {} call failed", webhook, e);
          metrics.record(webhook, UNKNOWN, UNKNOWN, "error", System.nanoTime() - started);
          return Mono.just(Reply.text(HttpResponseStatus.INTERNAL_SERVER_ERROR, "subrange failed to answer this"
              + " request (" + e.getClass().getSimpleName() + "); see the subrange logs"));
        })
        .flatMap(reply -> Mono.from(send(response, reply)))
        .doFinally(signal -> release.run());
  }

  /**
   * Signals once {@link #bodyReadTimeout} has passed, kept by the connection's own event loop.
   * Reactor's {@code timeout(Duration)} keeps time on its parallel scheduler: for every call,
   * another thread woken to arm the timer and again to drop it, two system calls and a context
   * switch that cost more than the rest of the bookkeeping here (docs/performance.md, "Tenth
   * round"). The event loop arms and drops its own timers without waking anyone.
   */
  private Mono<Long> bodyReadDeadline(HttpServerRequest request) {
    EventLoop[] loop = new EventLoop[1];
    request.withConnection(connection -> loop[0] = connection.channel().eventLoop());
    if (loop[0] == null) {
      return Mono.delay(bodyReadTimeout);
    }
    return Mono.create(sink -> {
      ScheduledFuture<?> deadline = loop[0].schedule(() -> sink.success(0L), bodyReadTimeout.toNanos(),
          TimeUnit.NANOSECONDS);
      sink.onCancel(() -> deadline.cancel(false));
    });
  }

  /** The whole body, at most {@link #maxBodyBytes}; empty when there is none. */
  private Mono<byte[]> body(ByteBufFlux content) {
    return content
        .reduceWith(ByteArrayOutputStream::new, (collected, buffer) -> {
          int size = buffer.readableBytes();
          if (collected.size() + size > maxBodyBytes) {
            throw new BodyTooLargeException();
          }
          byte[] chunk = new byte[size];
          buffer.readBytes(chunk);
          collected.write(chunk, 0, size);
          return collected;
        })
        .map(ByteArrayOutputStream::toByteArray);
  }

  private Mono<Reply> admit(byte[] body, long started, String webhook,
      Function<AdmissionCall, CompletableFuture<Outcome>> admission) {
    AdmissionCall call;
    try {
      call = reader.read(body);
    } catch (MalformedAdmissionReviewException e) {
      metrics.record(webhook, UNKNOWN, UNKNOWN, "invalid", System.nanoTime() - started);
      return Mono.just(Reply.text(HttpResponseStatus.BAD_REQUEST, e.getMessage()));
    }
    String kind = call.kind().kind();
    String operation = call.operation().name();
    AtomicBoolean answered = new AtomicBoolean();
    return Mono.defer(() -> Mono.fromFuture(admission.apply(call)))
        // Whatever else goes wrong is answered as an AdmissionReview the API server shows (500).
        .onErrorResume(e -> !(e instanceof MalformedAdmissionReviewException),
            e -> Mono.just(AdmissionAnswers.failure(call, e, admissionTimeout)))
        .map(outcome -> {
          Reply reply = Reply.json(json(outcome));
          answered.set(true);
          metrics.record(webhook, kind, operation, outcome.result(), System.nanoTime() - started);
          if (log.isDebugEnabled()) {
            log.debug("{} {} {} {}/{} uid={} dryRun={}: {}", webhook, operation, kind, call.namespace(), call.name(),
                call.uid(), call.dryRun(), outcome.result());
          }
          return reply;
        })
        .onErrorResume(MalformedAdmissionReviewException.class, e -> {
          answered.set(true);
          metrics.record(webhook, kind, operation, "invalid", System.nanoTime() - started);
          return Mono.just(Reply.text(HttpResponseStatus.BAD_REQUEST, e.getMessage()));
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

  private byte[] json(Outcome outcome) {
    try {
      return mapper.writeValueAsBytes(outcome.review());
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("an AdmissionReview answer could not be written as JSON", e);
    }
  }

  private Publisher<Void> send(HttpServerResponse response, Reply reply) {
    if (drain.draining()) {
      response.keepAlive(false);  // Connection: close, as ShutdownDrain does for WebFlux's paths
    }
    return response.status(reply.status())
        .header(HttpHeaderNames.CONTENT_TYPE, reply.contentType())
        .header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(reply.body().length))
        .sendByteArray(Mono.just(reply.body()));
  }

  /** What is sent back: a status, and the body as bytes. */
  private record Reply(HttpResponseStatus status, String contentType, byte[] body) {

    static Reply json(byte[] body) {
      return new Reply(HttpResponseStatus.OK, JSON, body);
    }

    /** A one-line reason, newline-terminated as a terminal prints it. */
    static Reply text(HttpResponseStatus status, String reason) {
      return new Reply(status, TEXT, (reason + "\n").getBytes(StandardCharsets.UTF_8));
    }
  }

  /** The body went past {@link #maxBodyBytes}: answered 413 without reading the rest. */
  private static final class BodyTooLargeException extends RuntimeException {

    BodyTooLargeException() {
      super(null, null, false, false);
    }
  }
}
