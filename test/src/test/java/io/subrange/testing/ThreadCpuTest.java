package io.subrange.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

class ThreadCpuTest {

  @Test
  void threadsAreSortedByWhatTheyDo() {
    assertThat(ThreadCpu.kindOf("reactor-http-ep")).isEqualTo("serving");
    assertThat(ThreadCpu.kindOf("subrange-store-")).isEqualTo("store");
    assertThat(ThreadCpu.kindOf("vert.x-eventloo")).isEqualTo("API client I/O");
    assertThat(ThreadCpu.kindOf("C1 CompilerThre")).isEqualTo("JIT");
    assertThat(ThreadCpu.kindOf("-1181756454-poo")).isEqualTo("watch events");  // cut at 15 characters
    assertThat(ThreadCpu.kindOf("subrange-events")).isEqualTo("watch events");
    assertThat(ThreadCpu.kindOf("tcp-balancer")).isEqualTo("balancer");
    assertThat(ThreadCpu.kindOf("-56565886-pool-")).isEqualTo("watch events");
    assertThat(ThreadCpu.kindOf("main")).isEqualTo("other");
  }

  /** This JVM's own threads: 300 ms of CPU burnt on this thread ("main": other) show up, per "create". */
  @Test
  @EnabledOnOs(OS.LINUX)
  void whatAThreadUsesIsCountedUnderItsKind() {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    List<ProcessHandle> self = List.of(ProcessHandle.current());
    ThreadCpu before = ThreadCpu.sample(self);
    long until = threads.getCurrentThreadCpuTime() + 300_000_000L;
    long sum = 0;
    while (threads.getCurrentThreadCpuTime() < until) {
      sum += Long.numberOfTrailingZeros(sum + System.nanoTime());
    }
    String described = ThreadCpu.sample(self).describeSince(before, 1);
    Matcher other = Pattern.compile("other (\\d+\\.\\d+)").matcher(described);
    assertThat(other.find()).as("%s (after %d)", described, sum).isTrue();
    // at least this thread's 300 ms, less a tick of rounding at each end; other threads only add
    assertThat(Double.parseDouble(other.group(1))).isGreaterThanOrEqualTo(280.0);
  }

  /**
   * Per process: 300 ms burnt on a serving thread ("reactor-http-…") count in the process's total
   * and under serving; a process the earlier sample did not have is left out.
   */
  @Test
  @EnabledOnOs(OS.LINUX)
  void eachProcessIsDescribedWithItsServingThreads() throws InterruptedException {
    List<ProcessHandle> self = List.of(ProcessHandle.current());
    ThreadCpu before = ThreadCpu.sample(self);
    CountDownLatch burnt = new CountDownLatch(1);
    CountDownLatch sampled = new CountDownLatch(1);
    Thread serving = new Thread(() -> {
      burn(300_000_000L);
      burnt.countDown();
      try {
        sampled.await();  // alive until sampled: an ended thread's CPU counts only in its process's total
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "reactor-http-test");
    serving.start();
    burnt.await();
    ThreadCpu after = ThreadCpu.sample(self);
    sampled.countDown();
    serving.join();
    String described = after.describeEachProcessSince(before, 1);
    Matcher process = Pattern.compile("^(\\d+\\.\\d+) \\(serving (\\d+\\.\\d+), JIT (\\d+\\.\\d+)\\)$")
        .matcher(described);
    assertThat(process.find()).as(described).isTrue();
    double total = Double.parseDouble(process.group(1));
    double servingMillis = Double.parseDouble(process.group(2));
    assertThat(servingMillis).as(described).isGreaterThanOrEqualTo(280.0);
    assertThat(total).as(described).isGreaterThanOrEqualTo(servingMillis);
    assertThat(after.describeEachProcessSince(ThreadCpu.sample(List.of()), 1)).isEmpty();
  }

  /** A thread that starts and ends between two samples still counts, as one that ended. */
  @Test
  @EnabledOnOs(OS.LINUX)
  void whatAThreadThatEndedUsedIsCountedToo() throws InterruptedException {
    List<ProcessHandle> self = List.of(ProcessHandle.current());
    ThreadCpu before = ThreadCpu.sample(self);
    Thread burner = new Thread(() -> burn(300_000_000L), "short-lived");
    burner.start();
    burner.join();
    awaitNoTaskNamed("short-lived");
    String described = ThreadCpu.sample(self).describeSince(before, 1);
    Matcher ended = Pattern.compile(ThreadCpu.ENDED + " (\\d+\\.\\d+)").matcher(described);
    assertThat(ended.find()).as(described).isTrue();
    // its 300 ms, less rounding: the process's and each live thread's times are whole ticks apiece
    assertThat(Double.parseDouble(ended.group(1))).isGreaterThanOrEqualTo(250.0);
  }

  /**
   * A thread that sleeps and is woken 200 times shows at least 200 wake-ups under its kind
   * ("subrange-store-…": store), and one that only burns CPU next to it adds none of its own there.
   */
  @Test
  @EnabledOnOs(OS.LINUX)
  void aThreadsWakeUpsAreCountedUnderItsKind() throws InterruptedException {
    List<ProcessHandle> self = List.of(ProcessHandle.current());
    CountDownLatch sampled = new CountDownLatch(1);
    CountDownLatch slept = new CountDownLatch(1);
    CountDownLatch resampled = new CountDownLatch(1);
    Thread sleeper = new Thread(() -> {
      try {
        sampled.await();
        for (int i = 0; i < 200; i++) {
          Thread.sleep(1);
        }
        slept.countDown();
        resampled.await();  // alive until sampled again: an ended thread's wake-ups are not counted
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "subrange-store-test");
    sleeper.start();
    awaitTaskNamed("subrange-store-");
    ThreadCpu before = ThreadCpu.sample(self);
    sampled.countDown();
    slept.await();
    ThreadCpu after = ThreadCpu.sample(self);
    resampled.countDown();
    sleeper.join();
    double store = after.wakeUpsPerCreateSince(before, 1).getOrDefault("store", 0.0);
    assertThat(store).as(after.describeWakeUpsSince(before, 1)).isGreaterThanOrEqualTo(200.0);
    assertThat(after.wakeUpsPerCreateSince(before, 100).get("store")).isEqualTo(store / 100);
  }

  @Test
  void wakeUpsAreReadFromTheStatusFile(@TempDir Path dir) throws IOException {
    Path status = dir.resolve("status");
    Files.writeString(status, "Name:\tjava\nState:\tS (sleeping)\nvoluntary_ctxt_switches:\t4711\n"
        + "nonvoluntary_ctxt_switches:\t12\n");
    assertThat(ThreadCpu.wakeUps(status)).isEqualTo(4711);
    assertThat(ThreadCpu.wakeUps(dir.resolve("gone"))).isZero();
  }

  private static void awaitTaskNamed(String prefix) throws InterruptedException {
    long deadline = System.nanoTime() + 5_000_000_000L;
    while (System.nanoTime() < deadline) {
      try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
        if (tasks.anyMatch(task -> comm(task).startsWith(prefix))) {
          return;
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      Thread.sleep(5);
    }
    throw new AssertionError("no OS thread named " + prefix + "… within 5 s");
  }

  /**
   * join() returns when the Java thread is done, a moment before its OS thread exits; sampled in
   * that moment it is still a live thread (kind "other"), not one that ended.
   */
  private static void awaitNoTaskNamed(String name) throws InterruptedException {
    long deadline = System.nanoTime() + 5_000_000_000L;
    while (System.nanoTime() < deadline) {
      try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
        if (tasks.noneMatch(task -> name.equals(comm(task)))) {
          return;
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      Thread.sleep(5);
    }
    throw new AssertionError("the OS thread " + name + " did not exit within 5 s of its join");
  }

  private static String comm(Path task) {
    try {
      return Files.readString(task.resolve("comm")).strip();
    } catch (IOException e) {
      return "";  // it exited while listed
    }
  }

  private static long burn(long nanos) {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long until = threads.getCurrentThreadCpuTime() + nanos;
    long sum = 0;
    while (threads.getCurrentThreadCpuTime() < until) {
      sum += Long.numberOfTrailingZeros(sum + System.nanoTime());
    }
    return sum;
  }
}
