package io.subrange.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a Service with several endpoints is to the API server, on loopback: a TCP balancer that
 * hands each new connection to the next backend that accepts it, round robin. TLS passes
 * through untouched (every replica serves the same certificate), and the API server's webhook
 * client opens several connections under load, so requests spread over the replicas. A backend
 * that refuses connections (killed) is skipped; connections it held break, as they would in a
 * cluster.
 */
public final class TcpBalancer implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(TcpBalancer.class);

  private final ServerSocket server;
  private final List<Integer> backends;
  private final AtomicInteger next = new AtomicInteger();
  private final Map<Integer, AtomicLong> connections = new ConcurrentHashMap<>();
  private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
    Thread thread = new Thread(r, "tcp-balancer");
    thread.setDaemon(true);
    return thread;
  });
  private volatile boolean running = true;

  private TcpBalancer(ServerSocket server, List<Integer> backends) {
    this.server = server;
    this.backends = List.copyOf(backends);
    backends.forEach(port -> connections.put(port, new AtomicLong()));
  }

  /** Listens on a free loopback port and balances over the backends' loopback ports. */
  public static TcpBalancer start(List<Integer> backendPorts) {
    try {
      ServerSocket server = new ServerSocket();
      server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 512);
      TcpBalancer balancer = new TcpBalancer(server, backendPorts);
      balancer.threads.execute(balancer::accept);
      return balancer;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public int port() {
    return server.getLocalPort();
  }

  /** Connections handed to each backend so far. */
  public Map<Integer, Long> connectionsByBackend() {
    Map<Integer, Long> counts = new TreeMap<>();
    connections.forEach((port, count) -> counts.put(port, count.get()));
    return counts;
  }

  private void accept() {
    while (running) {
      try {
        Socket client = server.accept();
        threads.execute(() -> forward(client));
      } catch (IOException e) {
        if (running) {
          log.warn("balancer accept failed: {}", e.getMessage());
        }
      }
    }
  }

  private void forward(Socket client) {
    Socket backend = connectToNext();
    if (backend == null) {
      close(client);
      return;
    }
    threads.execute(() -> pipe(client, backend));
    pipe(backend, client);
  }

  private Socket connectToNext() {
    for (int tries = 0; tries < backends.size(); tries++) {
      int port = backends.get(Math.floorMod(next.getAndIncrement(), backends.size()));
      try {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
        connections.get(port).incrementAndGet();
        return socket;
      } catch (IOException e) {
        // down: the next one
      }
    }
    return null;
  }

  private static void pipe(Socket from, Socket to) {
    byte[] buffer = new byte[16384];
    try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
      int read;
      while ((read = in.read(buffer)) >= 0) {
        out.write(buffer, 0, read);
        out.flush();
      }
    } catch (IOException e) {
      // one side went away
    } finally {
      close(from);
      close(to);
    }
  }

  private static void close(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // closing anyway
    }
  }

  @Override
  public void close() {
    running = false;
    try {
      server.close();
    } catch (IOException e) {
      // closing anyway
    }
    threads.shutdownNow();
  }
}
