package io.subrange.testing;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * CPU time used by each part of a run on this machine (kube-apiserver, etcd, subrange's
 * webhooks and reconciler, the load client), from the operating system's accounting
 * ({@link ProcessHandle.Info#totalCpuDuration}). Divided by the Services created, it says where
 * a create's cost goes, and how many creates per second the machine's cores could do at most.
 */
public final class CpuUse {

  private final Map<String, Duration> byPart;

  private CpuUse(Map<String, Duration> byPart) {
    this.byPart = byPart;
  }

  /**
   * What every part has used so far. The API server and etcd are found by their binaries' names
   * (the harness starts one of each); subrange's processes are {@code cluster}'s, if any.
   */
  public static CpuUse sample(ReplicatedCluster cluster) {
    Map<String, Duration> parts = new LinkedHashMap<>();
    parts.put("kube-apiserver", byCommand("/kube-apiserver"));
    parts.put("etcd", byCommand("/etcd"));
    if (cluster != null) {
      parts.put("subrange webhooks", sum(cluster.webhooks().stream().map(SubrangeServer::processHandle).toList()));
      parts.put("subrange reconciler", sum(List.of(cluster.reconciler().processHandle())));
    }
    parts.put("load client", cpu(ProcessHandle.current()));
    return new CpuUse(parts);
  }

  /** CPU per create between {@code before} and this sample, in milliseconds, by part. */
  public Map<String, Double> millisPerCreate(CpuUse before, long creates) {
    Map<String, Double> perCreate = new LinkedHashMap<>();
    byPart.forEach((part, used) -> perCreate.put(part,
        used.minus(before.byPart.getOrDefault(part, Duration.ZERO)).toNanos() / 1e6 / creates));
    return perCreate;
  }

  /** "kube-apiserver 2.1, etcd 0.4, ... = 5.0 ms CPU per create (at most 400 creates/s on 2 cores)". */
  public static String describe(Map<String, Double> perCreate) {
    double total = perCreate.values().stream().mapToDouble(Double::doubleValue).sum();
    int cores = Runtime.getRuntime().availableProcessors();
    return perCreate.entrySet().stream().map(e -> String.format("%s %.2f", e.getKey(), e.getValue()))
        .collect(Collectors.joining(", ")) + String.format(" = %.2f ms CPU per create (at most %.0f creates/s on %d"
        + " cores)", total, cores * 1000 / total, cores);
  }

  private static Duration byCommand(String suffix) {
    return sum(ProcessHandle.allProcesses()
        .filter(p -> p.info().command().map(c -> c.endsWith(suffix)).orElse(false)).toList());
  }

  private static Duration sum(List<ProcessHandle> processes) {
    return processes.stream().map(CpuUse::cpu).reduce(Duration.ZERO, Duration::plus);
  }

  private static Duration cpu(ProcessHandle process) {
    Optional<Duration> used = process.info().totalCpuDuration();
    return used.orElse(Duration.ZERO);
  }
}
