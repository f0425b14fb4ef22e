package io.subrange.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.subrange.testing.Processes;
import io.subrange.testing.RepoLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What ./run-local runs (LocalCluster) stops its API server, etcd and subrange when it gets
 * SIGTERM, as from a supervisor or `kill`, not only on Ctrl-C: they are its child processes and
 * would otherwise outlive it.
 */
class LocalRunStopsIT {

  @Test
  void sigtermStopsEveryProcessItStarted(@TempDir Path dir) throws Exception {
    Path out = dir.resolve("local.log");
    Process local = startLocalRun(out);
    List<ProcessHandle> started = startedChildrenThen(local, out, Process::destroy);  // SIGTERM
    assertThat(local.waitFor(60, TimeUnit.SECONDS)).as("the local run exits on SIGTERM").isTrue();
    // What must hold is that nothing outlives it. Its shutdown hook says "Stopping subrange,
    // kube-apiserver and etcd", but under Maven that line does not always reach the log, and the
    // hook has been seen cut short: the watcher (Processes.reapWhenGone) is what guarantees this.
    assertAllStop(started);
  }

  /** Killed outright (no shutdown hook runs), it still leaves nothing behind: a watcher stops them. */
  @Test
  void sigkillLeavesNothingBehindEither(@TempDir Path dir) throws Exception {
    Path out = dir.resolve("local.log");
    Process local = startLocalRun(out);
    List<ProcessHandle> started = startedChildrenThen(local, out, Process::destroyForcibly);  // SIGKILL
    assertThat(local.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertAllStop(started);
  }

  /** run-local's last step, as it runs it: Maven's exec:java in the foreground (exec'd, so signals reach Maven's JVM). */
  private static Process startLocalRun(Path out) throws Exception {
    ProcessBuilder builder = new ProcessBuilder("mvn", "-q", "-B", "-o", "-pl", "test", "exec:java@local")
        .directory(RepoLayout.locate().root().toFile()).redirectErrorStream(true).redirectOutput(out.toFile());
    builder.environment().put("SUBRANGE_LOCAL_PORT", String.valueOf(Processes.freePort()));
    builder.environment().put("SUBRANGE_LOCAL_METRICS_PORT", String.valueOf(Processes.freePort()));
    return builder.start();
  }

  /** Once the local run is ready, what it started; then {@code stop} is done to it, whatever happened. */
  private static List<ProcessHandle> startedChildrenThen(Process local, Path out, Consumer<Process> stop) {
    try {
      assertThat(Processes.pollUntil(Duration.ofSeconds(120), 500,
          () -> Processes.readOrEmpty(out).contains("Ctrl-C"))).as("local run ready: " + Processes.readOrEmpty(out))
          .isTrue();
      List<ProcessHandle> started = local.descendants().toList();
      assertThat(started).extracting(p -> p.info().command().orElse(""))
          .anyMatch(c -> c.endsWith("kube-apiserver")).anyMatch(c -> c.endsWith("etcd"))
          .filteredOn(c -> c.endsWith("java")).isNotEmpty();
      return started;
    } finally {
      stop.accept(local);
    }
  }

  private static void assertAllStop(List<ProcessHandle> started) {
    for (ProcessHandle child : started) {
      assertThat(Processes.pollUntil(Duration.ofSeconds(20), 200, () -> !child.isAlive()))
          .as("%s stopped with it", child.info().command().orElse("pid " + child.pid())).isTrue();
    }
  }
}
