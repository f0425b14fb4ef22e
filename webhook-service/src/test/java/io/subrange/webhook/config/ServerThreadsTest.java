package io.subrange.webhook.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.ReactiveHealthIndicator;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import reactor.core.publisher.Mono;

/**
 * Both HTTP servers (admission and management) run on exactly {@code subrange.admission.server-threads}
 * event loops, however many connections come: not on Reactor Netty's global loops (at least four).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "server.ssl.enabled=false",
    "management.server.port=0",
    "subrange.service.cidrs=10.0.0.0/24",
    "subrange.admission.server-threads=3"})
@DirtiesContext
class ServerThreadsTest {

  /** The threads the management server's health requests ran on. */
  static final Queue<String> HEALTH_THREADS = new ConcurrentLinkedQueue<>();

  @TestConfiguration
  static class WhereHealthRuns {

    @Bean
    ReactiveHealthIndicator whereHealthRuns() {
      return () -> Mono.fromCallable(() -> {
        HEALTH_THREADS.add(Thread.currentThread().getName());
        return Health.up().build();
      });
    }
  }

  /** Threads alive before this class's context started (other classes' contexts may be cached). */
  private static Set<Thread> before;

  @LocalServerPort
  int port;

  @Value("${local.management.port}")
  int managementPort;

  private final List<Socket> connections = new ArrayList<>();

  @BeforeAll
  static void threadsBeforeTheContext() {
    before = Thread.getAllStackTraces().keySet();
  }

  @Test
  void everyConnectionIsServedOnTheConfiguredLoops() throws IOException {
    for (int i = 0; i < 8; i++) {
      assertThat(get(port, "/livez")).startsWith("HTTP/1.1 200");
    }
    for (int i = 0; i < 3; i++) {
      assertThat(get(managementPort, "/health")).startsWith("HTTP/1.1 200");
    }

    // Threads, not names: two loop groups may name their threads alike.
    Set<Thread> serving = Thread.getAllStackTraces().keySet().stream()
        .filter(thread -> !before.contains(thread) && thread.getName().startsWith("reactor-http"))
        .collect(Collectors.toSet());
    assertThat(serving).hasSize(3).allMatch(thread -> thread.getName().startsWith("reactor-http-server-"));
    // Where the management server ran, whatever loops other test classes started before this one.
    assertThat(HEALTH_THREADS).hasSize(3).allMatch(name -> name.startsWith("reactor-http-server-"));
  }

  /** A GET on a connection of its own, kept open so that eleven connections are open at once. */
  private String get(int port, String path) throws IOException {
    Socket socket = new Socket("127.0.0.1", port);
    connections.add(socket);
    OutputStream out = socket.getOutputStream();
    out.write(("GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
    out.flush();
    InputStream in = socket.getInputStream();
    byte[] head = new byte[12];
    int read = 0;
    while (read < head.length) {
      int n = in.read(head, read, head.length - read);
      if (n < 0) {
        break;
      }
      read += n;
    }
    return new String(head, 0, read, StandardCharsets.US_ASCII);
  }

  @AfterEach
  void close() throws IOException {
    for (Socket socket : connections) {
      socket.close();
    }
  }
}
