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
 * <p>Threads are followed by id. A thread that ended between two samples is no longer in the
 * second, but its CPU stays in its process's own account ({@code /proc/<pid>/stat}): what the
 * process used beyond the threads still alive is reported as "threads that ended". The JVM
 * starts and stops compiler threads (C1's and C2's) as their queues grow and shrink, and
 * fabric8's executor lets idle threads go after a minute, so both can land there. Each thread's
 * time is whole ticks (10 ms), so that figure is within a few hundredths of a millisecond per
 * create.
 *
 * <p>Beside the CPU it counts each thread's wake-ups: the times it went to sleep (parked, waiting
 * in epoll, blocked on I/O) and was woken again, the kernel's {@code voluntary_ctxt_switches}. On
 * this shared virtual machine a wake-up costs tens of microseconds and leaves the thread running
 * on cold caches (docs/performance.md, "Twenty-second round"), so work that arrives a message at a
 * time costs more than its code's own time; this says how many each kind of thread paid per create.
 */
final class ThreadCpu {

  /** Linux's USER_HZ: the unit of the stat file's times, 100 on every mainstream kernel. */
  private static final double MILLIS_PER_TICK = 10.0;
  static final String ENDED = "threads that ended";
  /** The compiler threads, C1's and C2's. */
  static final String JIT = "JIT";
  private static final String WAKE_UPS = "voluntary_ctxt_switches:";

  /** What the threads do, by the start of their names (as the kernel keeps them: 15 characters). */
  private static final List<Map.Entry<String, String>> KINDS = List.of(
      Map.entry("reactor-http", "serving"),
      Map.entry("subrange-store", "store"),  // the committer and the shard writer
      Map.entry("subrange-events", "watch events"),  // the API clients' event threads: informers, handlers
      Map.entry("subrange-reconc", "reconciler passes"),
      // Also the watch events of the clients whose handlers run where they are read (OnTheIoThread).
      Map.entry("vert.x-eventloo", "API client I/O"),
      Map.entry("C1 CompilerThre", JIT),
      Map.entry("C2 CompilerThre", JIT),
      Map.entry("VM Thread", "JVM"),
      Map.entry("VM Periodic", "JVM"),
      Map.entry("GC ", "JVM"),
      // The load harness's own process: TcpBalancer, the stand-in for a Service's kube-proxy rules.
      Map.entry("tcp-balancer", "balancer"));

  /**
   * One thread (or process) as last read: what it does, the CPU it has used, when it started, how
   * often it has been woken (0 for a process's own account, which is only read for its CPU).
   */
  private record Used(String kind, long ticks, long started, long wakeUps) {

    Used withWakeUps(long wakeUps) {
      return new Used(kind, ticks, started, wakeUps);
    }
  }

  /** A thread: its process, its id, and when it started (ids are reused). */
  private record ThreadId(long pid, String tid, long started) {
  }

  private final Map<ThreadId, Used> threads;
  /** Each process's own account, which keeps what its ended threads used, by pid. */
  private final Map<Long, Long> processTicks;

  private ThreadCpu(Map<ThreadId, Used> threads, Map<Long, Long> processTicks) {
    this.threads = threads;
    this.processTicks = processTicks;
  }

  /** What the processes' threads have used so far. */
  static ThreadCpu sample(List<ProcessHandle> processes) {
    Map<ThreadId, Used> threads = new LinkedHashMap<>();
    Map<Long, Long> processTicks = new LinkedHashMap<>();
    for (ProcessHandle process : processes) {
      Path proc = Path.of("/proc", Long.toString(process.pid()));
      Used total = read(proc.resolve("stat"));
      if (total == null) {
        continue;  // not Linux, or the process is gone: nothing to add
      }
      processTicks.put(process.pid(), total.ticks());
      try (DirectoryStream<Path> tasks = Files.newDirectoryStream(proc.resolve("task"))) {
        for (Path task : tasks) {
          Used used = read(task.resolve("stat"));
          if (used != null) {
            used = used.withWakeUps(wakeUps(task.resolve("status")));
            threads.put(new ThreadId(process.pid(), task.getFileName().toString(), used.started()), used);
          }
        }
      } catch (IOException | RuntimeException e) {
        // the process ended meanwhile: its account above is what it used
      }
    }
    return new ThreadCpu(threads, processTicks);
  }

  /** A stat file's name and CPU (utime + stime); null when it cannot be read as documented. */
  private static Used read(Path stat) {
    String line;
    try {
      line = Files.readString(stat);
    } catch (IOException e) {
      return null;  // the thread ended meanwhile
    }
    int open = line.indexOf('(');
    int close = line.lastIndexOf(')');
    if (open < 0 || close < open) {
      return null;
    }
    String name = line.substring(open + 1, close);
    String[] fields = line.substring(close + 2).split(" ");
    try {
      // fields[0] is the state (stat's third field); utime and stime are stat's 14th and 15th fields, starttime its 22nd.
      return new Used(kindOf(name), Long.parseLong(fields[11]) + Long.parseLong(fields[12]),
          Long.parseLong(fields[19]), 0);
    } catch (RuntimeException e) {
      return null;  // a line not as documented: this thread is left out, the others still count
    }
  }

  /** A status file's {@code voluntary_ctxt_switches}; 0 when it cannot be read (the thread ended). */
  static long wakeUps(Path status) {
    try {
      for (String line : Files.readAllLines(status)) {
        if (line.startsWith(WAKE_UPS)) {
          return Long.parseLong(line.substring(WAKE_UPS.length()).strip());
        }
      }
    } catch (IOException | RuntimeException e) {
      // the thread ended meanwhile, or a line not as documented: it adds nothing
    }
    return 0;
  }

  static String kindOf(String threadName) {
    for (Map.Entry<String, String> kind : KINDS) {
      if (threadName.startsWith(kind.getKey())) {
        return kind.getValue();
      }
    }
    // fabric8's own executor ("-<hash>-pool-<n>-thread-<m>", cut to "-1181756454-poo"), which
    // subrange's clients no longer use: watch events decoded, informer caches and handlers
    return threadName.contains("-poo") ? "watch events" : "other";
  }

  /**
   * "serving 0.66, API client I/O 0.10, ..." in ms per create since {@code before}, largest
   * first, with the threads that ended in between as {@link #ENDED}; "" if unknown.
   */
  String describeSince(ThreadCpu before, long creates) {
    return millisPerCreateSince(before, creates).entrySet().stream()
        .filter(e -> e.getValue() > 0)
        .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
        .map(e -> String.format("%s %.2f", e.getKey(), e.getValue()))
        .collect(Collectors.joining(", "));
  }

  /**
   * ms of CPU per create since {@code before} by kind of thread, with the threads that ended in
   * between as {@link #ENDED}; empty if unknown.
   */
  Map<String, Double> millisPerCreateSince(ThreadCpu before, long creates) {
    if (creates <= 0 || threads.isEmpty()) {
      return Map.of();
    }
    Map<String, Long> byKind = new LinkedHashMap<>();
    Map<Long, Long> aliveByProcess = new LinkedHashMap<>();
    threads.forEach((id, now) -> {
      Used then = before.threads.get(id);
      long used = now.ticks() - (then == null ? 0 : then.ticks());
      byKind.merge(now.kind(), used, Long::sum);
      aliveByProcess.merge(id.pid(), used, Long::sum);
    });
    // Only for processes in both samples: one that started or ended in between has no difference.
    long ended = 0;
    for (Map.Entry<Long, Long> process : processTicks.entrySet()) {
      Long then = before.processTicks.get(process.getKey());
      if (then != null) {
        ended += process.getValue() - then - aliveByProcess.getOrDefault(process.getKey(), 0L);
      }
    }
    byKind.put(ENDED, ended);
    Map<String, Double> perCreate = new LinkedHashMap<>();
    byKind.forEach((kind, ticks) -> perCreate.put(kind, millis(ticks, creates)));
    return perCreate;
  }

  /**
   * Each process's ms of CPU per create since {@code before}, in the order they were sampled,
   * with what its serving and compiler threads took: "1.38 (serving 0.56, JIT 0.65), 0.30
   * (serving 0.17, JIT 0.03)". The balancer hands out connections, not calls, and the API
   * server's webhook client reuses its most recently used idle connection first, so replicas
   * need not share the calls evenly; this shows how they did, and whose compiler was still busy.
   * Processes missing from either sample are left out; "" if none is in both.
   */
  String describeEachProcessSince(ThreadCpu before, long creates) {
    return processTicks.keySet().stream()
        .filter(before.processTicks::containsKey)
        .map(pid -> {
          // By kind, with its ended threads: together, all the process used.
          Map<String, Double> kinds = of(pid).millisPerCreateSince(before.of(pid), creates);
          return String.format("%.2f (serving %.2f, JIT %.2f)",
              kinds.values().stream().mapToDouble(Double::doubleValue).sum(),
              kinds.getOrDefault("serving", 0.0), kinds.getOrDefault(JIT, 0.0));
        })
        .collect(Collectors.joining(", "));
  }

  /** This sample of one process alone. */
  private ThreadCpu of(long pid) {
    Map<ThreadId, Used> itsThreads = new LinkedHashMap<>();
    threads.forEach((id, used) -> {
      if (id.pid() == pid) {
        itsThreads.put(id, used);
      }
    });
    Long ticks = processTicks.get(pid);
    return new ThreadCpu(itsThreads, ticks == null ? Map.of() : Map.of(pid, ticks));
  }

  private static double millis(long ticks, long creates) {
    return ticks * MILLIS_PER_TICK / creates;
  }

  /**
   * "serving 1.10, API client I/O 0.95, ..." wake-ups per create since {@code before} by kind of
   * thread, the most first; threads that ended in between are not counted. "" if unknown.
   */
  String describeWakeUpsSince(ThreadCpu before, long creates) {
    return wakeUpsPerCreateSince(before, creates).entrySet().stream()
        .filter(e -> e.getValue() >= 0.005)
        .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
        .map(e -> String.format("%s %.2f", e.getKey(), e.getValue()))
        .collect(Collectors.joining(", "));
  }

  /** Wake-ups per create since {@code before} by kind of thread, of the threads alive in both samples or started since. */
  Map<String, Double> wakeUpsPerCreateSince(ThreadCpu before, long creates) {
    if (creates <= 0 || threads.isEmpty()) {
      return Map.of();
    }
    Map<String, Long> byKind = new LinkedHashMap<>();
    threads.forEach((id, now) -> {
      Used then = before.threads.get(id);
      byKind.merge(now.kind(), now.wakeUps() - (then == null ? 0 : then.wakeUps()), Long::sum);
    });
    Map<String, Double> perCreate = new LinkedHashMap<>();
    byKind.forEach((kind, wakeUps) -> perCreate.put(kind, (double) wakeUps / creates));
    return perCreate;
  }
}
