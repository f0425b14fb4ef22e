package io.subrange.testing;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HTTPGetAction;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Probe;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
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

  /** The name both manifests give the metrics port. */
  private static final String METRICS = "metrics";

  /** Prometheus' scrape of /metrics, with its default 10 s timeout. */
  private static final HttpProbe SCRAPE = new HttpProbe("scrape", "/metrics", METRICS, false, SCRAPE_INTERVAL,
      Duration.ofSeconds(10));

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
    probes.add(SCRAPE);
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

  /** One probe: true for a 2xx or 3xx, the whole answer read before the probe's timeout. */
  private static boolean get(Pod pod, HttpProbe probe, int port) {
    try {
      int status = Answer.of(exchange(probe, pod.certificates(), port)).status();
      return status >= 200 && status < 400;
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /**
   * The text of /metrics on {@code port} (plain HTTP), fetched with the very request the scrape
   * probe sends every {@link #SCRAPE_INTERVAL}. The harness reads subrange's counters this way,
   * just before and after each measured run. It read them with Java's HttpClient before, whose
   * plain-HTTP GET asks for an h2c upgrade ("Connection: Upgrade, HTTP2-Settings", "Upgrade:
   * h2c", "Content-Length: 0"), a request nothing else sends a subrange pod: every JVM then
   * threw away C2's code for Netty's request decoding (unstable_if) 0.5-0.7 s before
   * the run, and recompiled it inside the run (docs/performance.md, "Twenty-eighth round").
   *
   * @throws IllegalStateException unless it answers 200
   * @throws UncheckedIOException when the exchange fails or times out
   */
  public static String scrape(int port) {
    Answer answer;
    try {
      answer = Answer.of(exchange(SCRAPE, null, port));
    } catch (IOException e) {
      throw new UncheckedIOException("scraping /metrics on port " + port, e);
    }
    if (answer.status() != 200) {
      throw new IllegalStateException("/metrics on port " + port + " answered " + answer.status());
    }
    return new String(answer.body(), StandardCharsets.UTF_8);
  }

  /**
   * One GET on a new connection, as the kubelet (or Prometheus, for a scrape) sends it: the
   * answer as the server wrote it, read to its end (the server closes after it: Connection:
   * close). The probe's timeout covers the whole exchange, connect, handshake and reads, as the
   * kubelet's client timeout does.
   *
   * @param certificates the CA to trust when the probe is over TLS; unused otherwise
   */
  private static byte[] exchange(HttpProbe probe, Certificates certificates, int port) throws IOException {
    long deadline = System.nanoTime() + probe.timeout().toNanos();
    // A new TLS context each time: it has no session to resume, so the server does a full
    // handshake, as for the kubelet's Go client, which keeps no sessions.
    try (Socket socket = probe.tls() ? certificates.trustingContext().getSocketFactory().createSocket()
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
      ByteArrayOutputStream answer = new ByteArrayOutputStream();
      byte[] buffer = new byte[8192];
      int read;
      do {
        socket.setSoTimeout(remainingMillis(deadline));
        read = in.read(buffer);
        if (read > 0) {
          answer.write(buffer, 0, read);
        }
      } while (read != -1);
      return answer.toByteArray();
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

  /** An HTTP/1.1 answer read to its end: its status and its body, de-chunked. */
  record Answer(int status, byte[] body) {

    static Answer of(byte[] raw) throws IOException {
      String text = new String(raw, StandardCharsets.ISO_8859_1);
      int headersEnd = text.indexOf("\r\n\r\n");
      if (headersEnd < 0) {
        throw new IOException("the answer ended inside its headers");
      }
      String[] lines = text.substring(0, headersEnd).split("\r\n");
      String[] statusLine = lines[0].split(" ");
      if (statusLine.length < 2 || !statusLine[0].startsWith("HTTP/")) {
        throw new IOException("not an HTTP status line: " + lines[0]);
      }
      int status;
      try {
        status = Integer.parseInt(statusLine[1]);
      } catch (NumberFormatException e) {
        throw new IOException("not an HTTP status line: " + lines[0], e);
      }
      boolean chunked = false;
      int contentLength = -1;
      for (int i = 1; i < lines.length; i++) {
        int colon = lines[i].indexOf(':');
        String name = colon < 0 ? lines[i] : lines[i].substring(0, colon).trim();
        String value = colon < 0 ? "" : lines[i].substring(colon + 1).trim();
        if (name.equalsIgnoreCase("Transfer-Encoding")) {
          chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
        } else if (name.equalsIgnoreCase("Content-Length")) {
          contentLength = Integer.parseInt(value);
        }
      }
      int start = headersEnd + 4;
      if (chunked) {
        return new Answer(status, dechunk(raw, start));
      }
      int end = contentLength < 0 ? raw.length : start + contentLength;
      if (end > raw.length) {
        throw new IOException("the answer ended " + (end - raw.length) + " bytes short of its Content-Length");
      }
      return new Answer(status, Arrays.copyOfRange(raw, start, end));
    }

    /** The body of a chunked answer from {@code start}: each chunk's hex size line, its bytes, CRLF; 0 ends. */
    private static byte[] dechunk(byte[] raw, int start) throws IOException {
      ByteArrayOutputStream body = new ByteArrayOutputStream();
      int at = start;
      while (true) {
        int lineEnd = indexOfCrLf(raw, at);
        if (lineEnd < 0) {
          throw new IOException("the answer ended inside a chunk's size");
        }
        String sizeLine = new String(raw, at, lineEnd - at, StandardCharsets.ISO_8859_1);
        int semicolon = sizeLine.indexOf(';');
        int size = Integer.parseInt((semicolon < 0 ? sizeLine : sizeLine.substring(0, semicolon)).trim(), 16);
        at = lineEnd + 2;
        if (size == 0) {
          return body.toByteArray();
        }
        if (at + size > raw.length) {
          throw new IOException("the answer ended inside a chunk");
        }
        body.write(raw, at, size);
        at += size + 2;
      }
    }

    private static int indexOfCrLf(byte[] raw, int from) {
      for (int i = from; i + 1 < raw.length; i++) {
        if (raw[i] == '\r' && raw[i + 1] == '\n') {
          return i;
        }
      }
      return -1;
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
