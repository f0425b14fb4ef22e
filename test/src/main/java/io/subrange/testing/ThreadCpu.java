package io.subrange.testing;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Where a JVM's CPU goes, by what its threads do: the operating system's per-thread accounting
 * ({@code /proc/<pid>/task/<tid>/stat}, Linux only; elsewhere every sample is empty), summed by
 * the thread's name. {@link CpuUse} says which process; this says which part of subrange inside it
 * (serving the admission calls, the store's committer, the API client, the JIT), so a change
 * can be aimed at the part that costs, and the JIT's share shows code still being compiled
 * during a measured run.
 *
 * <p>Each sample sums the threads alive at that moment: a thread that ends between two samples
 * takes its CPU out of the second, so a kind whose threads come and go (fabric8's executor) can
 * read low over a run; differences below zero are left out.
 */
final class ThreadCpu {

  /** Linux's USER_HZ: the unit of the stat file's times, 100 on every mainstream kernel. */
  private static final double MILLIS_PER_TICK = 10.0;

  /** What the threads do, by the start of their names (as the kernel keeps them: 15 characters). */
  private static final List<Map.Entry<String, String>> KINDS = List.of(
      Map.entry("reactor-http", "serving"),
      Map.entry("subrange-store", "store"),  // the committer and the shard writer
      Map.entry("subrange-reconc", "reconciler passes"),
      Map.entry("vert.x-eventloo", "API client I/O"),
      Map.entry("C1 CompilerThre", "JIT"),
      Map.entry("C2 CompilerThre", "JIT"),
      Map.entry("VM Thread", "JVM"),
      Map.entry("VM Periodic", "JVM"),
      Map.entry("GC ", "JVM"));

  private final Map<String, Long> ticksByKind;

  private ThreadCpu(Map<String, Long> ticksByKind) {
    this.ticksByKind = ticksByKind;
  }

  /** What the processes' threads have used so far, by kind. */
  static ThreadCpu sample(List<ProcessHandle> processes) {
    Map<String, Long> ticks = new LinkedHashMap<>();
    for (ProcessHandle process : processes) {
      Path tasks = Path.of("/proc", Long.toString(process.pid()), "task");
      try (DirectoryStream<Path> threads = Files.newDirectoryStream(tasks)) {
        for (Path thread : threads) {
          addThread(thread.resolve("stat"), ticks);
        }
      } catch (IOException | RuntimeException e) {
        // not Linux, or the process is gone: nothing to add
      }
    }
    return new ThreadCpu(ticks);
  }

  private static void addThread(Path stat, Map<String, Long> ticks) {
    String line;
    try {
      line = Files.readString(stat);
    } catch (IOException e) {
      return;  // the thread ended meanwhile
    }
    int open = line.indexOf('(');
    int close = line.lastIndexOf(')');
    if (open < 0 || close < open) {
      return;
    }
    String name = line.substring(open + 1, close);
    String[] fields = line.substring(close + 2).split(" ");
    try {
      // fields[0] is the state (stat's third field); utime and stime are stat's 14th and 15th.
      long used = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
      ticks.merge(kindOf(name), used, Long::sum);
    } catch (RuntimeException e) {
      // a line not as documented: this thread is left out, the others still count
    }
  }

  static String kindOf(String threadName) {
    for (Map.Entry<String, String> kind : KINDS) {
      if (threadName.startsWith(kind.getKey())) {
        return kind.getValue();
      }
    }
    // fabric8's executor ("-<hash>-pool-<n>-thread-<m>", cut to "-1181756454-poo"): watch
    // events decoded, informer caches and handlers
    return threadName.contains("-poo") ? "watch events" : "other";
  }

  /** "serving 0.66, API client I/O 0.10, ..." in ms per create since {@code before}, largest first; "" if unknown. */
  String describeSince(ThreadCpu before, long creates) {
    if (creates <= 0 || ticksByKind.isEmpty()) {
      return "";
    }
    return ticksByKind.entrySet().stream()
        .map(e -> Map.entry(e.getKey(), e.getValue() - before.ticksByKind.getOrDefault(e.getKey(), 0L)))
        .filter(e -> e.getValue() > 0)
        .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
        .map(e -> String.format("%s %.2f", e.getKey(), e.getValue() * MILLIS_PER_TICK / creates))
        .collect(Collectors.joining(", "));
  }
}
