package io.subrange.webhook.lifecycle;

import io.subrange.webhook.config.SubrangeProperties;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;
import org.springframework.http.HttpHeaders;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * The time between SIGTERM and the server's graceful shutdown, during which this process still
 * answers but tells every caller to stop reusing its connection ({@code Connection: close}).
 *
 * <p>Why: kube-apiserver keeps connections to webhook pods alive and reuses them for later calls.
 * When a pod shuts down, a call written on such a connection just as the server closes it ends in
 * EOF, and with {@code failurePolicy: Fail} the Service create fails (seen in a rolling restart
 * on a real cluster). The pod is already out of the Service's endpoints when SIGTERM arrives, so
 * new connections go to other replicas; during the drain the old ones are closed after an answer,
 * never under a request.
 *
 * <p>This filter covers WebFlux's paths (probes); admission calls, answered ahead of Reactor
 * Netty's HTTP handling and WebFlux, ask {@link #draining} themselves (see AdmissionConnection).
 */
@Component
public class ShutdownDrain implements SmartLifecycle, WebFilter {

  private static final Logger log = LoggerFactory.getLogger(ShutdownDrain.class);

  private final Duration drain;
  private final ApplicationEventPublisher events;
  private volatile boolean running;
  private volatile boolean draining;

  @Autowired
  public ShutdownDrain(@Value("${subrange.shutdown.drain:5s}") Duration drain, SubrangeProperties properties,
      ApplicationEventPublisher events) {
    // Only admission has callers that keep connections: a reconciler stops at once.
    this(properties.role().admits() ? drain : Duration.ZERO, events);
  }

  ShutdownDrain(Duration drain, ApplicationEventPublisher events) {
    this.drain = drain;
    this.events = events;
  }

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    if (draining) {
      exchange.getResponse().beforeCommit(() -> {
        exchange.getResponse().getHeaders().set(HttpHeaders.CONNECTION, "close");
        return Mono.empty();
      });
    }
    return chain.filter(exchange);
  }

  @Override
  public void start() {
    running = true;
  }

  /** Runs first at shutdown (the highest phase), before the web server stops accepting. */
  @Override
  public void stop() {
    if (!drain.isZero() && !drain.isNegative()) {
      draining = true;
      AvailabilityChangeEvent.publish(events, this, ReadinessState.REFUSING_TRAFFIC);
      log.info("Shutting down: answering for {} ms more with Connection: close", drain.toMillis());
      try {
        Thread.sleep(drain.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    running = false;
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  @Override
  public int getPhase() {
    return SmartLifecycle.DEFAULT_PHASE;
  }

  /** True from the start of shutdown on. */
  public boolean draining() {
    return draining;
  }
}
