package io.subrange.testing;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The load harness (issue 5, evidence a, b, c and e at full size), one command:
 * {@code test/scripts/load [options]} (see {@link #usage}). It starts its own kube-apiserver and
 * etcd on loopback and subrange replicated on them, and prints what it measured.
 *
 * <ul>
 *   <li>{@code replicas}: three webhook replicas and a reconciler; Services (half NodePort)
 *       created by many clients through all replicas; with {@code --kill}, one replica is killed
 *       (SIGKILL) halfway; then no duplicate may exist; values left without an owner (by the kill,
 *       and by 100 creates the API server refuses after subrange allocated for them) must be freed
 *       within grace + 30 s; and deleting everything must bring every count back to 0.
 *   <li>{@code overhead}: Service creates per second and latency against the same API server
 *       without subrange, then with it registered, at each client count.
 * </ul>
 */
public final class LoadHarness {

  private LoadHarness() {
  }

  /** Creates the API server refuses after subrange allocated for them (see replicas). */
  private static final int REFUSED = 100;

  static String usage() {
    return """
        usage: test/scripts/load <replicas|overhead|all> [--services N] [--clients C[,C...]] [--replicas R]
                                 [--kill] [--grace SECONDS]
          replicas   a, b, c: N Services from C clients through R webhook replicas (default 3000, 32, 3);
                     --kill kills one replica halfway; reclaim and delete-everything checks follow
          overhead   e: creates/s and p50/p99 without and with subrange at each C (default 2000, 16,32)
          all        both, one after the other
        """;
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> options = parse(args);
    String scenario = options.getOrDefault("scenario", "");
    boolean ok;
    switch (scenario) {
      case "replicas" -> ok = replicas(options);
      case "overhead" -> ok = overhead(options);
      case "all" -> ok = replicas(options) & overhead(options);
      default -> {
        System.err.print(usage());
        System.exit(2);
        return;
      }
    }
    System.out.println(ok ? "LOAD HARNESS: PASS" : "LOAD HARNESS: FAIL");
    System.exit(ok ? 0 : 1);
  }

  // ---- a, b, c ----------------------------------------------------------------------------------

  static boolean replicas(Map<String, String> options) {
    int services = Integer.parseInt(options.getOrDefault("services", "3000"));
    int clients = Integer.parseInt(options.getOrDefault("clients", "32").split(",")[0]);
    int replicas = Integer.parseInt(options.getOrDefault("replicas", "3"));
    boolean kill = options.containsKey("kill");
    Duration grace = Duration.ofSeconds(Long.parseLong(options.getOrDefault("grace", "60")));
    RepoLayout repo = RepoLayout.locate();
    Path workDir = repo.root().resolve("test/target/load-replicas");
    try (ControlPlane plane = ControlPlane.start(repo, "10.96.0.0/16", ControlPlane.FEATURE_GATES, workDir)) {
      ReplicatedCluster.Settings settings = ReplicatedCluster.Settings.defaults().withWebhooks(replicas)
          .withOrphanGrace(grace);
      try (ReplicatedCluster cluster = ReplicatedCluster.start(repo, plane, workDir, settings);
           KubernetesClient load = ServiceLoad.concurrentClient(plane.config(), clients)) {
        ControlPlane.ensureNamespace(load, "load");
        System.out.printf("== replicas: %d Services (half NodePort), %d clients, %d webhook replicas + 1 reconciler%s%n",
            services, clients, replicas, kill ? ", one replica killed halfway" : "");
        int killAt = services / 2;
        ServiceLoad.Report report = ServiceLoad.create(load, "load", "svc", services, clients, done -> {
          if (kill && done == killAt) {
            System.out.printf("   kill -9 replica 1 after %d creates%n", done);
            cluster.kill(1);
          }
        });
        Instant loadEnded = Instant.now();
        System.out.println("   " + report.summary());
        System.out.println("   connections per replica: " + cluster.balancer().connectionsByBackend());
        boolean ok = check("every create admitted (failures are not subrange's races)", report.failures().isEmpty());
        List<String> duplicates = ServiceValues.duplicates(load);
        ok &= check("no duplicate ClusterIP or NodePort: " + duplicates, duplicates.isEmpty());
        // Values lose their owner when the replica that wrote them dies before the API server
        // stores the object (a retry by the same name reuses them, so the kill may leave none), and
        // when a later admission step refuses an object subrange allocated for: REFUSED creates do
        // that on purpose. Every such value must be freed within grace + 30 s of its creation.
        int orphansAfterLoad = ServiceValues.orphans(cluster.stored(), load).size();
        int refused = ServiceLoad.createRefusedAfterAdmission(load, "load", "refused", REFUSED);
        Instant lastOrphaned = Instant.now();
        int orphans = ServiceValues.orphans(cluster.stored(), load).size();
        System.out.printf("   values without an owner: %d after the load, %d after %d/%d creates the API server refused"
            + " after subrange allocated%n", orphansAfterLoad, orphans, refused, REFUSED);
        Duration limit = grace.plusSeconds(30);
        boolean reclaimed = Processes.pollUntil(Duration.between(Instant.now(), lastOrphaned.plus(limit)), 500,
            () -> ServiceValues.orphans(cluster.stored(), load).isEmpty());
        ok &= check(String.format("all %d freed within grace + 30 s (%d s): %s", orphans, limit.toSeconds(),
            reclaimed ? "after " + Duration.between(lastOrphaned, Instant.now()).toSeconds() + " s" : "not all"),
            reclaimed && orphans >= refused && refused == REFUSED);
        ok &= check("the ConfigMaps hold every Service's values", ServiceValues.unaccounted(cluster.stored(), load).isEmpty());
        printStoreMetrics(cluster);
        System.out.printf("   load ended %s; deleting everything%n", loadEnded);
        ServiceLoad.deleteAll(load, "load", "svc", clients);
        boolean zero = Processes.pollUntil(Duration.ofSeconds(120), 500, () -> {
          StoredAllocations stored = cluster.stored();
          return stored.nodePorts().isEmpty() && stored.clusterIps().keySet().equals(Set.of("10.96.0.1"));
        });
        ok &= check("after deleting everything every count is back to 0 (only the API server's own Service)", zero);
        return ok;
      }
    }
  }

  // ---- e ----------------------------------------------------------------------------------------

  static boolean overhead(Map<String, String> options) {
    int services = Integer.parseInt(options.getOrDefault("services", "2000"));
    int replicas = Integer.parseInt(options.getOrDefault("replicas", "3"));
    List<Integer> clientCounts = new ArrayList<>();
    for (String c : options.getOrDefault("clients", "16,32").split(",")) {
      clientCounts.add(Integer.parseInt(c));
    }
    RepoLayout repo = RepoLayout.locate();
    Path workDir = repo.root().resolve("test/target/load-overhead");
    try (ControlPlane plane = ControlPlane.start(repo, "10.96.0.0/16", ControlPlane.FEATURE_GATES, workDir)) {
      Config config = plane.config();
      Map<Integer, ServiceLoad.Report> without = new LinkedHashMap<>();
      Map<Integer, ServiceLoad.Report> with = new LinkedHashMap<>();
      System.out.printf("== overhead: %d Services (half NodePort) per run, clients %s%n", services, clientCounts);
      for (int clients : clientCounts) {
        without.put(clients, run(config, "plain", services, clients, null));
      }
      ReplicatedCluster.Settings settings = ReplicatedCluster.Settings.defaults().withWebhooks(replicas);
      try (ReplicatedCluster cluster = ReplicatedCluster.start(repo, plane, workDir, settings)) {
        for (int clients : clientCounts) {
          with.put(clients, run(config, "subrange", services, clients, cluster));
        }
        printStoreMetrics(cluster);
        System.out.println("   connections per replica: " + cluster.balancer().connectionsByBackend());
      }
      boolean ok = true;
      System.out.println("   | clients | without: creates/s | p50 ms | p99 ms | with subrange: creates/s | p50 ms |"
          + " p99 ms | ratio | p99 overhead ms |");
      for (int clients : clientCounts) {
        ServiceLoad.Report a = without.get(clients);
        ServiceLoad.Report b = with.get(clients);
        double ratio = b.createsPerSecond() / a.createsPerSecond();
        double p99 = b.percentileMillis(99) - a.percentileMillis(99);
        System.out.printf("   | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %.1f |%n", clients,
            a.createsPerSecond(), a.percentileMillis(50), a.percentileMillis(99), b.createsPerSecond(),
            b.percentileMillis(50), b.percentileMillis(99), ratio, p99);
        ok &= check(clients + " clients: throughput ratio >= 0.9 (" + String.format("%.2f", ratio) + ")", ratio >= 0.9);
        ok &= check(clients + " clients: p99 overhead <= 5 ms (" + String.format("%.1f", p99) + ")", p99 <= 5);
      }
      return ok;
    }
  }

  private static ServiceLoad.Report run(Config config, String label, int services, int clients,
      ReplicatedCluster cluster) {
    String namespace = label + "-" + clients;
    try (KubernetesClient load = ServiceLoad.concurrentClient(config, clients)) {
      ControlPlane.ensureNamespace(load, namespace);
      // Warm up first (the JIT, connection pools): a JVM that just started is several times slower.
      ServiceLoad.create(load, namespace, "warm", services, clients, done -> { });
      ServiceLoad.deleteAll(load, namespace, "warm", clients);
      CpuUse before = CpuUse.sample(cluster);
      ServiceLoad.Report report = ServiceLoad.create(load, namespace, "svc", services, clients, done -> { });
      CpuUse after = CpuUse.sample(cluster);
      System.out.printf("   %-8s %s%n", label, report.summary());
      System.out.printf("   %-8s CPU: %s%n", "", CpuUse.describe(after.millisPerCreate(before, report.created())));
      ServiceLoad.deleteAll(load, namespace, "svc", clients);
      return report;
    }
  }

  // ---- helpers ----------------------------------------------------------------------------------

  private static void printStoreMetrics(ReplicatedCluster cluster) {
    double written = cluster.webhookMetric("subrange_store_configmap_writes_total", Map.of("result", "ok"));
    double conflicts = cluster.webhookMetric("subrange_store_configmap_writes_total", Map.of("result", "conflict"));
    double saved = cluster.webhookMetric("subrange_store_configmap_writes_saved_total", Map.of());
    double committed = cluster.webhookMetric("subrange_store_committed_requests_total", Map.of());
    double commits = cluster.webhookMetric("subrange_store_commits_total", Map.of());
    System.out.printf("   store (live replicas): %.0f requests stored in %.0f commits, %.0f ConfigMap writes, %.0f writes"
            + " saved by group commit, %.0f conflicts%n", committed, commits, written, saved, conflicts);
  }

  private static boolean check(String what, boolean passed) {
    System.out.printf("   [%s] %s%n", passed ? "PASS" : "FAIL", what);
    return passed;
  }

  private static Map<String, String> parse(String[] args) {
    Map<String, String> options = new HashMap<>();
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (!arg.startsWith("--")) {
        options.put("scenario", arg);
      } else if (arg.equals("--kill")) {
        options.put("kill", "true");
      } else if (i + 1 < args.length) {
        options.put(arg.substring(2), args[++i]);
      }
    }
    return options;
  }
}
