package io.subrange.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/** Small helpers for the processes the harness runs, and for waiting on them. */
public final class Processes {

  private Processes() {
  }

  /** What a finished command printed, and how it exited. */
  public record Result(int exitCode, String stdout, String stderr) {
  }

  /** Sleeps; an interrupt fails the caller (and stays set). */
  public static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * Asks {@code condition} every {@code pollMillis} until it holds or {@code limit} has passed
   * (it is asked once more then); true when it held.
   */
  public static boolean pollUntil(Duration limit, long pollMillis, BooleanSupplier condition) {
    Instant deadline = Instant.now().plus(limit);
    while (true) {
      if (condition.getAsBoolean()) {
        return true;
      }
      if (!Instant.now().isBefore(deadline)) {
        return false;
      }
      sleep(pollMillis);
    }
  }

  /** Runs a command to completion and returns its exit code and output. */
  public static Result exec(List<String> command, Path workDir, long timeoutSeconds) {
    try {
      Path out = Files.createTempFile("subrange-cmd", ".out");
      Path err = Files.createTempFile("subrange-cmd", ".err");
      try {
        Process process = new ProcessBuilder(command).directory(workDir.toFile())
            .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
          process.destroyForcibly();
          throw new IllegalStateException(String.join(" ", command) + " did not finish in " + timeoutSeconds + " s");
        }
        return new Result(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
            Files.readString(err, StandardCharsets.UTF_8));
      } finally {
        Files.deleteIfExists(out);
        Files.deleteIfExists(err);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Runs a command to completion; returns its stdout, or fails with its output when it exits non-zero. */
  public static String run(List<String> command, Path workDir, long timeoutSeconds) {
    Result result = exec(command, workDir, timeoutSeconds);
    if (result.exitCode() != 0) {
      throw new IllegalStateException(String.join(" ", command) + " exited " + result.exitCode() + ":\n"
          + result.stdout() + result.stderr());
    }
    return result.stdout();
  }

  /**
   * A TCP port free now that no other process will be handed meanwhile: one outside the
   * kernel's ephemeral range (ip_local_port_range), which outgoing connections take their local
   * ports from, and never the same one twice in this JVM. A port from {@code new ServerSocket(0)}
   * is an ephemeral one, so in the seconds before a JVM started with it binds, any client's
   * connection could take it ("Port 36287 was already in use", seen on a fresh clone).
   */
  public static int freePort() {
    synchronized (HANDED_OUT) {
      int[] ephemeral = ephemeralRange();
      int span = PORTS_TO - PORTS_FROM + 1;
      int start = ThreadLocalRandom.current().nextInt(span);
      for (int i = 0; i < span; i++) {
        int port = PORTS_FROM + (start + i) % span;
        if ((port >= ephemeral[0] && port <= ephemeral[1]) || HANDED_OUT.contains(port) || !bindable(port)) {
          continue;
        }
        HANDED_OUT.add(port);
        return port;
      }
    }
    throw new IllegalStateException("no free port in " + PORTS_FROM + "-" + PORTS_TO);
  }

  /** Below NodePorts (30000-32767, which kube-proxy may hold) and the usual ephemeral range. */
  static final int PORTS_FROM = 20000;
  static final int PORTS_TO = 29999;
  private static final Set<Integer> HANDED_OUT = new HashSet<>();

  /** The kernel's ephemeral port range; Linux's default when it cannot be read. */
  static int[] ephemeralRange() {
    try {
      String[] range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim().split("\\s+");
      return new int[] {Integer.parseInt(range[0]), Integer.parseInt(range[1])};
    } catch (IOException | RuntimeException e) {
      return new int[] {32768, 60999};
    }
  }

  private static boolean bindable(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.bind(new InetSocketAddress(port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** A file's text, or "" while it does not exist yet (a process's output file before it writes). */
  public static String readOrEmpty(Path file) {
    try {
      return Files.exists(file) ? Files.readString(file) : "";
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The java executable running this JVM, to start the webhook jar with the same JDK. */
  public static String javaExecutable() {
    return ProcessHandle.current().info().command()
        .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
  }

  /** Stops a process: politely, then forcibly after {@code graceSeconds}. */
  /**
   * Starts a watcher that stops {@code children} (SIGTERM, then SIGKILL 5 s later) once
   * {@code parent} is gone, however it went: shutdown hooks do not run when a JVM is killed or
   * halted, and even on SIGTERM a hook can be cut short. Best effort: a watcher that cannot be
   * started is logged and skipped.
   */
  public static void reapWhenGone(ProcessHandle parent, List<ProcessHandle> children) {
    if (children.isEmpty()) {
      return;
    }
    String pids = children.stream().map(c -> String.valueOf(c.pid())).collect(Collectors.joining(" "));
    String script = "while kill -0 " + parent.pid() + " 2>/dev/null; do sleep 1; done; "
        + "kill " + pids + " 2>/dev/null; sleep 5; kill -9 " + pids + " 2>/dev/null; exit 0";
    try {
      new ProcessBuilder("setsid", "bash", "-c", script).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    } catch (IOException e) {
      System.err.println("Processes: no watcher for " + pids + ": " + e.getMessage());
    }
  }

  public static void stop(Process process, long graceSeconds) {
    if (process == null || !process.isAlive()) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(graceSeconds, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }
}
