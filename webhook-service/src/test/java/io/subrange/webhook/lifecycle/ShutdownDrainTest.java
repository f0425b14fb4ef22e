package io.subrange.webhook.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.web.context.WebServerGracefulShutdownLifecycle;
import org.springframework.http.HttpHeaders;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import reactor.core.publisher.Mono;

class ShutdownDrainTest {

  @Test
  void duringShutdownAnswersGoOnButCloseTheirConnection() throws Exception {
    ShutdownDrain drain = new ShutdownDrain(Duration.ofMillis(600), event -> { });
    drain.start();
    assertThat(answer(drain).getResponse().getHeaders().getConnection()).isEmpty();

    long started = System.nanoTime();
    CompletableFuture<Void> stopping = CompletableFuture.runAsync(drain::stop);
    while (!drain.draining()) {
      Thread.onSpinWait();
    }
    MockServerWebExchange during = answer(drain);
    assertThat(during.getResponse().getHeaders().getFirst(HttpHeaders.CONNECTION)).isEqualTo("close");
    assertThat(stopping).as("the drain lasts its whole time").isNotDone();

    stopping.get(5, TimeUnit.SECONDS);
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(600));
    assertThat(drain.isRunning()).isFalse();
  }

  @Test
  void aZeroDrainStopsAtOnce() {
    ShutdownDrain drain = new ShutdownDrain(Duration.ZERO, event -> { });
    drain.start();
    drain.stop();
    assertThat(drain.draining()).isFalse();
    assertThat(answer(drain).getResponse().getHeaders().getConnection()).isEmpty();
  }

  @Test
  void itStopsBeforeTheWebServerStopsAccepting() {
    assertThat(new ShutdownDrain(Duration.ZERO, event -> { }).getPhase())
        .isGreaterThan(WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE);
  }

  private static MockServerWebExchange answer(ShutdownDrain drain) {
    MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.post("/mutate"));
    drain.filter(exchange, e -> e.getResponse().setComplete()).block();
    return exchange;
  }
}
