package io.subrange.testing;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * CPU time used by each part of a run on this machine (kube-apiserver, etcd, subrange's
 * webhooks and reconciler or a no-op webhook, the load client), from the operating system's accounting
 * ({@link ProcessHandle.Info#totalCpuDuration}). Divided by the Services created, it says where
 * a create's cost goes, and how many creates per second the machine's cores could do at most.
 */
public final class CpuUse {

  /** The parts' names. */
  public static final String KUBE_APISERVER = "kube-apiserver";
  public static final String ETCD = "etcd";
  public static final String WEBHOOKS = "subrange webhooks";
  public static final String RECONCILER = "subrange reconciler";
  public static final String NO_OP = "no-op webhook";
  public static final String CLIENT = "load client";

  private final Map<String, Duration> byPart;

  private CpuUse(Map<String, Duration> byPart) {
    this.byPart = byPart;
  }

  /**
   * What every part has used so far. The API server and etcd are found by their binaries' names
   * (the harness starts one of each); subrange's processes are {@code cluster}'s, if any.
   */
  public static CpuUse sample(ReplicatedCluster cluster) {
    Map<String, List<ProcessHandle>> groups = cluster == null ? Map.of() : processes(cluster);
    return sample(groups);
  }

  /**
   * What every part has used so far: the API server, etcd, each named group of processes (in the
   * map's order) and this JVM, the load client.
   */
  public static CpuUse sample(Map<String, List<ProcessHandle>> groups) {
    Map<String, Duration> parts = new LinkedHashMap<>();
    parts.put(KUBE_APISERVER, byCommand("/kube-apiserver"));
    parts.put(ETCD, byCommand("/etcd"));
    groups.forEach((part, processes) -> parts.put(part, sum(processes)));
    parts.put(CLIENT, cpu(ProcessHandle.current()));
    return new CpuUse(parts);
  }

  /** subrange's processes as parts: its webhook replicas, and its reconciler. */
  public static Map<String, List<ProcessHandle>> processes(ReplicatedCluster cluster) {
    Map<String, List<ProcessHandle>> groups = new LinkedHashMap<>();
    groups.put(WEBHOOKS, cluster.webhooks().stream().map(SubrangeServer::processHandle).toList());
    groups.put(RECONCILER, List.of(cluster.reconciler().processHandle()));
    return groups;
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
    return describe(perCreate, "create");
  }

  /** As {@link #describe(Map)}, per {@code operation} ("delete": CPU divided by the Services deleted). */
  public static String describe(Map<String, Double> perOperation, String operation) {
    double total = perOperation.values().stream().mapToDouble(Double::doubleValue).sum();
    int cores = Runtime.getRuntime().availableProcessors();
    return perOperation.entrySet().stream().map(e -> String.format("%s %.2f", e.getKey(), e.getValue()))
        .collect(Collectors.joining(", ")) + String.format(" = %.2f ms CPU per %s (at most %.0f %ss/s on %d"
        + " cores)", total, operation, cores * 1000 / total, operation, cores);
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
