package io.subrange.testing;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HTTPGetAction;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Probe;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import javax.net.ssl.SSLSocket;

/**
 * What calls a subrange pod besides the API server, on loopback: the kubelet's probes as the
 * manifests declare them, and Prometheus' scrape of /metrics.
 *
 * <p>In a cluster these run from the pod's start and all the time it serves. Without them a
 * harness JVM ran its HTTP server code for the admission calls alone and met the probe and
 * metrics paths only when the harness read its metrics, and the JIT threw away and recompiled
 * shared Netty code inside a measured run (docs/performance.md, "Twelfth round"). With them the
 * probes' own CPU counts in a measured run as it does in a cluster.
 *
 * <p>As the kubelet probes (pkg/probe/http): a new connection per probe, closed after the
 * answer; over TLS without checking the certificate (this context trusts the harness's CA, which
 * costs the server the same handshake) and without resuming a session, so a full handshake each
 * time; success is a status from 200 to 399 within the probe's
 * timeout. The startup probe runs until it succeeds, then liveness and readiness run, each at its
 * own period, the first after a random part of it. Failures are counted, never acted on: the
 * harness restarts nothing.
 */
public final class KubeletProbes implements AutoCloseable {

  /**
   * Prometheus' scrape interval: the PodMonitor (manifests/monitoring/podmonitor.yaml) sets none,
   * so the scraping Prometheus' global one applies; kube-prometheus-stack's is 30 s.
   */
  static final Duration SCRAPE_INTERVAL = Duration.ofSeconds(30);

  /** One HTTP GET probe of a container: which one, where, how often, how long it may take. */
  public record HttpProbe(String kind, String path, String portName, boolean tls, Duration period,
      Duration timeout) {
  }

  /**
   * A pod to probe: its ports by the names its manifest gives them, and the CA its serving
   * certificate is signed by (null when it serves only plain HTTP).
   */
  public record Pod(String name, Map<String, Integer> ports, Certificates certificates, List<HttpProbe> probes) {

    /**
     * A process serving on {@code port} and, unless null, its metrics on {@code metricsPort}: the
     * probes on the port named {@code metrics} go to the latter, the others to the former. Without
     * a metrics port those probes are left out.
     */
    public static Pod of(String name, int port, Integer metricsPort, Certificates certificates,
        List<HttpProbe> declared) {
      List<HttpProbe> probes = declared.stream().filter(p -> metricsPort != null || !p.portName().equals(METRICS))
          .toList();
      Map<String, Integer> ports = new LinkedHashMap<>();
      probes.forEach(p -> ports.put(p.portName(), p.portName().equals(METRICS) ? metricsPort : port));
      return new Pod(name, ports, certificates, probes);
    }
  }

  /** The name both manifests give the metrics port. */
  private static final String METRICS = "metrics";
  private static final String STARTUP = "startup";

  /** The kubelet probes from a goroutine per probe: two threads keep one slow probe from holding up all the rest. */
  private final ScheduledExecutorService timer = Executors.newScheduledThreadPool(2, runnable -> {
    Thread thread = new Thread(runnable, "kubelet-probes");
    thread.setDaemon(true);
    return thread;
  });
  private final Map<String, Watch> watches = new ConcurrentHashMap<>();
  private final Map<Outcome, AtomicLong> counts = new ConcurrentHashMap<>();

  /** What a pod's probe of a kind came to: "readiness ok", "liveness failed". */
  private record Outcome(String pod, String outcome) {
  }

  /**
   * The HTTP probes of the first container of the Deployment in {@code manifests/<file>}, and a
   * Prometheus scrape of {@code /metrics} on its port named {@code metrics}.
   */
  public static List<HttpProbe> declared(RepoLayout repo, String file) {
    Path manifest = repo.manifests().resolve(file);
    Container container = repo.deployedContainer(file);
    List<HttpProbe> probes = new ArrayList<>();
    add(probes, STARTUP, container.getStartupProbe(), manifest);
    add(probes, "liveness", container.getLivenessProbe(), manifest);
    add(probes, "readiness", container.getReadinessProbe(), manifest);
    // Prometheus keeps its connection open between scrapes; a new one per scrape, as here, adds a
    // loopback TCP connect and the server's set-up of a channel every 30 s (plain HTTP).
    probes.add(new HttpProbe("scrape", "/metrics", METRICS, false, SCRAPE_INTERVAL, Duration.ofSeconds(10)));
    return List.copyOf(probes);
  }

  private static void add(List<HttpProbe> probes, String kind, Probe probe, Path manifest) {
    if (probe == null) {
      return;
    }
    HTTPGetAction get = probe.getHttpGet();
    if (get == null) {
      throw new IllegalStateException(kind + " probe in " + manifest
          + " is not an HTTP GET: the harness probes only those");
    }
    IntOrString port = get.getPort();
    if (port.getStrVal() == null) {
      throw new IllegalStateException(kind + " probe in " + manifest
          + " names its port by number; the harness maps names");
    }
    // The kubelet's defaults where the manifest gives none: every 10 s, 1 s to answer.
    probes.add(new HttpProbe(kind, get.getPath(), port.getStrVal(), "HTTPS".equalsIgnoreCase(get.getScheme()),
        Duration.ofSeconds(orDefault(probe.getPeriodSeconds(), 10)),
        Duration.ofSeconds(orDefault(probe.getTimeoutSeconds(), 1))));
  }

  private static int orDefault(Integer value, int otherwise) {
    return value == null ? otherwise : value;
  }

  /**
   * Probes {@code pod} from now on as the kubelet does a container that has just started: its
   * startup probe until that succeeds, then the others. Called again for the same pod name (a
   * restarted process on the same ports), it starts over.
   */
  public void watch(Pod pod) {
    Watch watch = new Watch();
    Watch previous = watches.put(pod.name(), watch);
    if (previous != null) {
      previous.cancel();
    }
    pod.probes().stream().filter(p -> p.kind().equals(STARTUP)).findFirst().ifPresentOrElse(
        startup -> watch.schedule(() -> timer.schedule(() -> startupProbe(watch, pod, startup), 0,
            TimeUnit.MILLISECONDS)),
        () -> started(watch, pod));
  }

  /** The startup probe, again every period until it first succeeds; then the others start. */
  private void startupProbe(Watch watch, Pod pod, HttpProbe startup) {
    if (probe(pod, startup)) {
      started(watch, pod);
    } else {
      watch.schedule(() -> timer.schedule(() -> startupProbe(watch, pod, startup), startup.period().toMillis(),
          TimeUnit.MILLISECONDS));
    }
  }

  /** Every probe but the startup one, each at its period, the first after a random part of it. */
  private void started(Watch watch, Pod pod) {
    for (HttpProbe probe : pod.probes()) {
      if (!probe.kind().equals(STARTUP)) {
        long periodMillis = probe.period().toMillis();
        // Fixed delay: a late probe does not make the next ones run back to back (the kubelet's
        // ticker drops the ticks it missed).
        watch.schedule(() -> timer.scheduleWithFixedDelay(() -> probe(pod, probe),
            ThreadLocalRandom.current().nextLong(periodMillis), periodMillis, TimeUnit.MILLISECONDS));
      }
    }
  }

  /** Stops probing {@code podName} (it was stopped for good, or is about to be watched again). */
  public void forget(String podName) {
    Watch watch = watches.remove(podName);
    if (watch != null) {
      watch.cancel();
    }
  }

  /**
   * One pod's scheduled probes. Once cancelled it schedules nothing more: a startup probe that
   * succeeds while its pod is being forgotten starts no liveness or readiness probes.
   */
  private static final class Watch {
    private final List<ScheduledFuture<?>> futures = new ArrayList<>();
    private boolean cancelled;

    synchronized void schedule(Supplier<ScheduledFuture<?>> scheduling) {
      if (!cancelled) {
        futures.removeIf(ScheduledFuture::isDone);
        try {
          futures.add(scheduling.get());
        } catch (RejectedExecutionException e) {
          // closed
        }
      }
    }

    synchronized void cancel() {
      cancelled = true;
      futures.forEach(f -> f.cancel(false));
    }
  }

  /** Probes and scrapes so far, by kind and outcome ("readiness ok", "liveness failed", ...), summed over the pods. */
  public Map<String, Long> counts() {
    Map<String, Long> snapshot = new TreeMap<>();
    counts.forEach((key, count) -> snapshot.merge(key.outcome(), count.get(), Long::sum));
    return snapshot;
  }

  /** The same for one pod. */
  public Map<String, Long> counts(String podName) {
    Map<String, Long> snapshot = new TreeMap<>();
    counts.forEach((key, count) -> {
      if (key.pod().equals(podName)) {
        snapshot.put(key.outcome(), count.get());
      }
    });
    return snapshot;
  }

  /** The counts since {@code before}, e.g. "liveness ok 3, readiness ok 6, scrape ok 1". */
  public String describeSince(Map<String, Long> before) {
    List<String> parts = new ArrayList<>();
    counts().forEach((key, count) -> {
      long since = count - before.getOrDefault(key, 0L);
      if (since > 0) {
        parts.add(key + " " + since);
      }
    });
    return parts.isEmpty() ? "none" : String.join(", ", parts);
  }

  /** The failures so far, over every kind. */
  public long failures() {
    return counts().entrySet().stream().filter(e -> e.getKey().endsWith(" failed")).mapToLong(Map.Entry::getValue)
        .sum();
  }

  private boolean probe(Pod pod, HttpProbe probe) {
    Integer port = pod.ports().get(probe.portName());
    boolean ok = port != null && get(pod, probe, port);
    counts.computeIfAbsent(new Outcome(pod.name(), probe.kind() + (ok ? " ok" : " failed")), k -> new AtomicLong())
        .incrementAndGet();
    return ok;
  }

  /**
   * One GET on a new connection, as the kubelet (or Prometheus, for a scrape) sends it; true for
   * a 2xx or 3xx, the answer read to its end, before the probe's timeout. The timeout covers the
   * whole exchange, connect, handshake and reads, as the kubelet's client timeout does.
   */
  private static boolean get(Pod pod, HttpProbe probe, int port) {
    long deadline = System.nanoTime() + probe.timeout().toNanos();
    // A new TLS context each time: it has no session to resume, so the server does a full
    // handshake, as for the kubelet's Go client, which keeps no sessions.
    try (Socket socket = probe.tls() ? pod.certificates().trustingContext().getSocketFactory().createSocket()
        : new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), remainingMillis(deadline));
      socket.setSoTimeout(remainingMillis(deadline));
      if (socket instanceof SSLSocket tls) {
        tls.startHandshake();
      }
      OutputStream out = socket.getOutputStream();
      out.write(request(probe, port).getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      socket.setSoTimeout(remainingMillis(deadline));
      int status = statusCode(in);
      // The answer to its end (the server closes after it: Connection: close), within the deadline.
      byte[] buffer = new byte[8192];
      do {
        socket.setSoTimeout(remainingMillis(deadline));
      } while (in.read(buffer) != -1);
      return status >= 200 && status < 400;
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /** The kubelet's probe request, or Prometheus' scrape (which asks for OpenMetrics first). */
  private static String request(HttpProbe probe, int port) {
    String client = probe.kind().equals("scrape")
        ? "User-Agent: Prometheus/2.45.0\r\nAccept: application/openmetrics-text;version=1.0.0,"
            + "application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\n"
        : "User-Agent: kube-probe/1.20\r\nAccept: */*\r\n";
    return "GET " + probe.path() + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\n" + client
        + "Connection: close\r\n\r\n";
  }

  /** Milliseconds left until {@code deadline}, at least 1; a timeout once it has passed. */
  private static int remainingMillis(long deadline) throws SocketTimeoutException {
    long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
    if (left <= 0) {
      throw new SocketTimeoutException("probe timed out");
    }
    return (int) left;
  }

  /** The status code of an HTTP/1.1 status line ("HTTP/1.1 200 OK"). */
  private static int statusCode(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    for (int c = in.read(); c != -1 && c != '\n'; c = in.read()) {
      line.append((char) c);
    }
    String[] parts = line.toString().trim().split(" ");
    if (parts.length < 2 || !parts[0].startsWith("HTTP/")) {
      throw new IOException("not an HTTP status line: " + line);
    }
    return Integer.parseInt(parts[1]);
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
