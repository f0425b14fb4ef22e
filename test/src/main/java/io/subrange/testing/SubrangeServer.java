package io.subrange.testing;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Quantity;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * subrange's packaged jar running as its own process with TLS, configured the way a user
 * configures it: environment variables.
 */
public final class SubrangeServer implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(SubrangeServer.class);

  /** The JVM options manifests/configmap.yaml gives the containers ({@code JAVA_TOOL_OPTIONS}). */
  static String deployedJvmOptions(RepoLayout repo) {
    String options = repo.manifest("configmap.yaml", ConfigMap.class).getData().get("JAVA_TOOL_OPTIONS");
    if (options == null || options.isBlank()) {
      throw new IllegalStateException(
          "manifests/configmap.yaml has no JAVA_TOOL_OPTIONS for the harness to give its JVMs");
    }
    return options;
  }

  /**
   * What the JVM in a pod takes from its container rather than from options, for the first
   * container of the Deployment in {@code manifests/<deployment>}: in a container the JVM takes the
   * memory limit for the machine's memory, so its heap starts at {@code InitialRAMPercentage} of
   * it (1/64 unless set) and grows to {@code MaxRAMPercentage} of it, and with less than about 2
   * GB it picks the Serial collector.
   * {@code -XX:MaxRAM} gives the same heap sizes on a machine with more memory; the collector has
   * to be named, as the JVM would pick G1 here. Until the twenty-fourth round (docs/performance.md)
   * the harness gave a fixed 512 MB heap, which started at 1/64 of this machine's memory and
   * collected far less often than a pod does.
   */
  static List<String> containerJvm(RepoLayout repo, String deployment) {
    Quantity limit = repo.deployedContainer(deployment).getResources().getLimits().get("memory");
    return List.of("-XX:+UseSerialGC", "-XX:MaxRAM=" + Quantity.getAmountInBytes(limit).toBigIntegerExact());
  }

  private final Process process;
  private final Map<String, String> environment;
  private final int port;
  private final int managementPort;
  private final Certificates certificates;
  private final HttpClient tlsClient;
  private final HttpClient plainClient = HttpClient.newHttpClient();
  private final Path logFile;
  private final boolean tls;
  private Duration startupTime;
  private Instant started;

  private SubrangeServer(Process process, Map<String, String> environment, int port, int managementPort,
      Certificates certificates, Path logFile, boolean tls) {
    this.tls = tls;
    this.process = process;
    this.environment = Map.copyOf(environment);
    this.port = port;
    this.managementPort = managementPort;
    this.certificates = certificates;
    this.tlsClient = HttpClient.newBuilder().sslContext(certificates.trustingContext()).build();
    this.logFile = logFile;
  }

  /**
   * Starts the jar and waits until {@code /readyz} answers on its main port.
   *
   * @param environment extra environment, e.g. {@code SUBRANGE_SERVICE_CIDRS}
   */
  public static SubrangeServer start(RepoLayout repo, Certificates certificates, int port, int managementPort,
      Map<String, String> environment, Path logFile) {
    SubrangeServer server = launch(repo, certificates, port, managementPort, environment, logFile);
    server.awaitReady(Duration.ofSeconds(90));
    return server;
  }

  /** Starts the jar without waiting; {@link #awaitReady} waits. Several start side by side this way. */
  public static SubrangeServer launch(RepoLayout repo, Certificates certificates, int port, int managementPort,
      Map<String, String> environment, Path logFile) {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("SERVER_PORT", String.valueOf(port));
    env.put("MANAGEMENT_SERVER_PORT", String.valueOf(managementPort));
    env.put("SUBRANGE_TLS_CERT_DIR", certificates.dir().toString());
    // Nothing keeps connections to a harness JVM across a restart: stop at once.
    env.put("SUBRANGE_SHUTDOWN_DRAIN", "0s");
    env.putAll(environment);
    List<String> command = new ArrayList<>(List.of(Processes.javaExecutable()));
    command.addAll(containerJvm(repo, "reconciler".equals(env.get("SUBRANGE_ROLE")) ? "reconciler.yaml"
        : "deployment.yaml"));
    command.addAll(List.of("-jar", repo.webhookJar().toString()));
    env.putIfAbsent("JAVA_TOOL_OPTIONS", jvmToolOptions(repo, port, env.get("SUBRANGE_ROLE")));
    Instant started = Instant.now();
    Process process;
    boolean tls;
    try {
      Files.createDirectories(logFile.toAbsolutePath().getParent());
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
      builder.environment().putAll(env);
      // The process's whole environment decides, what it inherits from the harness included.
      tls = !"false".equalsIgnoreCase(builder.environment().get("SERVER_SSL_ENABLED"));
      process = builder.start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    SubrangeServer server = new SubrangeServer(process, environment, port, managementPort, certificates, logFile,
        tls);
    server.started = started;
    return server;
  }

  /**
   * {@code JAVA_TOOL_OPTIONS} for a JVM the harness starts to serve webhooks (subrange, or the
   * no-op baseline): as manifests/configmap.yaml runs subrange, with the JVM's default JIT (C1 then
   * C2; see docs/performance.md). Options from {@code -Dsubrange.jvm.options} come after and win
   * (e.g. -XX:TieredStopAtLevel=1 for C1 only, or a flight recording while measuring; {@code {port}}
   * tells the processes' files apart). A reconciler's JVM also gets
   * {@code -Dsubrange.reconciler.jvm.options}, after those (to measure it with another JIT, say).
   */
  static String jvmToolOptions(RepoLayout repo, int port) {
    return jvmToolOptions(repo, port, null);
  }

  private static String jvmToolOptions(RepoLayout repo, int port, String role) {
    String jvmOptions = System.getProperty("subrange.jvm.options", "");
    if ("reconciler".equals(role)) {
      jvmOptions += " " + System.getProperty("subrange.reconciler.jvm.options", "");
    }
    return (deployedJvmOptions(repo) + " " + jvmOptions).strip().replace("{port}", String.valueOf(port));
  }

  /**
   * Starts this server again, same ports and configuration, after it stopped or was killed,
   * without waiting; {@link #awaitReady} waits.
   */
  public SubrangeServer relaunch(RepoLayout repo) {
    if (process.isAlive()) {
      throw new IllegalStateException("still running");
    }
    return launch(repo, certificates, port, managementPort, environment, logFile);
  }

  /** Waits until {@code /readyz} answers 200 on the main port (over TLS unless {@code SERVER_SSL_ENABLED=false}). */
  public SubrangeServer awaitReady(Duration timeout) {
    awaitReady(Instant.now().plus(timeout));
    startupTime = Duration.between(started, Instant.now());
    log.info("subrange on {} (metrics http://127.0.0.1:{}/metrics) ready in {} ms, log {}", baseUrl(), managementPort,
        startupTime.toMillis(), logFile);
    return this;
  }

  /** Kills the process at once (SIGKILL), as a crashed node or an OOM kill would. */
  public void kill() {
    process.destroyForcibly();
    try {
      process.waitFor();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void awaitReady(Instant deadline) {
    HttpRequest ready = HttpRequest.newBuilder(URI.create(baseUrl() + "/readyz")).timeout(Duration.ofSeconds(2)).build();
    while (Instant.now().isBefore(deadline)) {
      if (!process.isAlive()) {
        throw new IllegalStateException("subrange exited with " + process.exitValue() + " before it was ready:\n"
            + tail());
      }
      try {
        HttpClient client = tls() ? tlsClient : plainClient;
        if (client.send(ready, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          return;
        }
      } catch (IOException e) {
        // not listening yet
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
      Processes.sleep(200);
    }
    Processes.stop(process, 5);
    throw new IllegalStateException("subrange was not ready in time:\n" + tail());
  }

  /**
   * https://127.0.0.1:port, or http:// for a process started with {@code SERVER_SSL_ENABLED=false}
   * (the reconciler, as manifests/reconciler.yaml runs it).
   */
  public String baseUrl() {
    return (tls() ? "https" : "http") + "://127.0.0.1:" + port;
  }

  /** Whether the main port serves TLS. */
  private boolean tls() {
    return tls;
  }

  public String mutateUrl() {
    return baseUrl() + "/mutate";
  }

  public int port() {
    return port;
  }

  public int managementPort() {
    return managementPort;
  }

  public Certificates certificates() {
    return certificates;
  }

  /** From process start to the first 200 from /readyz. */
  public Duration startupTime() {
    return startupTime;
  }

  /**
   * The Prometheus text from /metrics on the management port, fetched as Prometheus' scrape is
   * ({@link KubeletProbes#scrape}): a request of another shape would change what the JVM compiles.
   */
  public String metricsText() {
    return KubeletProbes.scrape(managementPort);
  }

  /**
   * The sum of every sample of {@code name} whose labels include all of {@code labels}
   * (0 when there is none), read from /metrics now.
   */
  public double metric(String name, Map<String, String> labels) {
    return PrometheusSamples.sum(metricsText(), name, labels);
  }

  /**
   * Every sample on /metrics now, from one scrape: for reading several numbers at one moment.
   * Each scrape runs the JVM's exposition code, which the measured JVMs then compile; the load
   * harness reads them once around each measured run, not once per number.
   */
  public List<PrometheusSamples.Sample> samples() {
    return PrometheusSamples.parse(metricsText());
  }

  /** The process, for measuring what it used (CpuUse). */
  public ProcessHandle processHandle() {
    return process.toHandle();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  private String tail() {
    try {
      List<String> lines = Files.readAllLines(logFile);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  @Override
  public void close() {
    Processes.stop(process, 15);
  }
}
