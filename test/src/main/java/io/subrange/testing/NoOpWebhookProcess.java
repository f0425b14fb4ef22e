package io.subrange.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * {@link NoOpWebhook} running as its own JVM, started as {@link SubrangeServer} starts subrange
 * (same java, heap, collector and JVM options, {@code -Dsubrange.jvm.options} included), with a
 * serving pair made the same way.
 */
public final class NoOpWebhookProcess implements AutoCloseable {

  private final Process process;
  private final int port;
  private final Certificates certificates;
  private final Path logFile;
  private final HttpClient tlsClient;

  private NoOpWebhookProcess(Process process, int port, Certificates certificates, Path logFile) {
    this.process = process;
    this.port = port;
    this.certificates = certificates;
    this.logFile = logFile;
    this.tlsClient = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .sslContext(certificates.trustingContext()).build();
  }

  /**
   * Starts the no-op webhook on a free loopback port and waits until it answers; its log goes to
   * workDir. With {@code patches}, its mutating answers to Service creates carry a patch
   * ({@link NoOpWebhook}).
   */
  public static NoOpWebhookProcess start(RepoLayout repo, Path workDir, boolean patches) {
    int port = Processes.freePort();
    Path logFile = workDir.resolve("no-op-webhook.log");
    Certificates certificates;
    Process process;
    try {
      Files.createDirectories(workDir);
      certificates = Certificates.make(repo, Files.createTempDirectory("subrange-noop-certs"));
      List<String> command = new ArrayList<>(List.of(Processes.javaExecutable()));
      command.addAll(SubrangeServer.containerJvm(repo, "deployment.yaml"));  // as subrange's replicas
      command.addAll(List.of("-cp", classpath(), NoOpWebhook.class.getName(), String.valueOf(port),
          certificates.dir().toString()));
      if (patches) {
        command.add("patch");
      }
      ProcessBuilder builder = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true)
          .redirectOutput(logFile.toFile());
      builder.environment().put("JAVA_TOOL_OPTIONS", SubrangeServer.jvmToolOptions(repo, port));
      process = builder.start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    NoOpWebhookProcess noOp = new NoOpWebhookProcess(process, port, certificates, logFile);
    try {
      noOp.awaitReady(Duration.ofSeconds(60));
      return noOp;
    } catch (RuntimeException e) {
      noOp.close();
      throw e;
    }
  }

  /**
   * The harness's own classpath. Under {@code mvn exec:java} the test module's classes and
   * dependencies are the URLs of the class loader that loaded this class ({@code java.class.path}
   * is Maven's there); run otherwise, they are {@code java.class.path}.
   */
  static String classpath() {
    if (!(NoOpWebhook.class.getClassLoader() instanceof URLClassLoader loader)) {
      return System.getProperty("java.class.path");
    }
    List<String> entries = new ArrayList<>();
    for (URL url : loader.getURLs()) {
      if ("file".equals(url.getProtocol())) {
        try {
          entries.add(Path.of(url.toURI()).toString());
        } catch (URISyntaxException e) {
          throw new IllegalStateException("classpath entry " + url, e);
        }
      }
    }
    return String.join(File.pathSeparator, entries);
  }

  private void awaitReady(Duration timeout) {
    Instant deadline = Instant.now().plus(timeout);
    while (Instant.now().isBefore(deadline)) {
      if (!process.isAlive()) {
        throw new IllegalStateException("the no-op webhook exited with " + process.exitValue()
            + " before it was ready:\n" + Processes.readOrEmpty(logFile));
      }
      // It prints its first line once every event loop's server listens.
      if (Processes.readOrEmpty(logFile).contains(NoOpWebhook.PREFIX)) {
        try {
          serviceCreates();
          return;
        } catch (IllegalStateException | UncheckedIOException e) {
          // not answering yet
        }
      }
      Processes.sleep(200);
    }
    throw new IllegalStateException("the no-op webhook was not ready in time:\n" + Processes.readOrEmpty(logFile));
  }

  /** Service CREATEs it has allowed so far (mutating and validating calls), from {@code GET /count}. */
  public double serviceCreates() {
    HttpRequest count = HttpRequest.newBuilder(URI.create(baseUrl() + "/count")).timeout(Duration.ofSeconds(2))
        .build();
    try {
      HttpResponse<String> response = tlsClient.send(count, HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new IllegalStateException("/count answered " + response.statusCode());
      }
      return Double.parseDouble(response.body().trim());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** What the server said about itself: where it listens, its TLS engine, its first connection's cipher. */
  public String describe() {
    return NoOpWebhook.PREFIX + Processes.readOrEmpty(logFile).lines()
        .filter(l -> l.startsWith(NoOpWebhook.PREFIX)).map(l -> l.substring(NoOpWebhook.PREFIX.length()))
        .collect(Collectors.joining("; "));
  }

  /** https://127.0.0.1:port */
  public String baseUrl() {
    return "https://127.0.0.1:" + port;
  }

  /**
   * This process as subrange's webhook pod would be probed ({@code declared}, from
   * manifests/deployment.yaml): the probes on its serving port; it has no metrics port to scrape.
   */
  public KubeletProbes.Pod pod(List<KubeletProbes.HttpProbe> declared) {
    return KubeletProbes.Pod.of("no-op", port, null, certificates, declared);
  }

  /** The CA that signed its serving certificate, as a webhook configuration's caBundle wants it. */
  public String caBundle() {
    return certificates.caBundle();
  }

  /** The process, for measuring what it used (CpuUse). */
  public ProcessHandle processHandle() {
    return process.toHandle();
  }

  @Override
  public void close() {
    Processes.stop(process, 5);
  }
}
