package io.subrange.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.subrange.testing.ReplicatedCluster;
import io.subrange.testing.ServiceLoad;
import io.subrange.testing.StoredAllocations;
import io.subrange.testing.SubrangeServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Several replicas on the ConfigMap store, on a real API server (issue 5, a to c, at CI size;
 * the load harness runs them at full size): concurrent creates through every replica, a replica
 * killed midway, everything deleted, the stored state lost.
 */
@ExtendWith(ReplicatedE2e.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HighAvailabilityIT {

  private static final int CLIENTS = 16;

  @Test
  @Order(1)
  void concurrentCreatesThroughThreeReplicasGetDistinctValuesAndNoRaceDenials(ReplicatedCluster cluster) {
    E2eSupport.namespace(cluster.client(), "ha-a");
    ServiceLoad.Report report;
    try (KubernetesClient load = ServiceLoad.concurrentClient(cluster.client().getConfiguration(), CLIENTS)) {
      report = ServiceLoad.create(load, "ha-a", "svc", 300, CLIENTS, done -> { });
    }
    System.out.println("HA (a) " + report.summary());

    assertThat(report.failures()).as("every create admitted; no denial from subrange's own races").isEmpty();
    assertThat(report.retries()).isZero();
    assertNoDuplicates(cluster.client());
    for (SubrangeServer replica : cluster.webhooks()) {
      assertThat(replica.metric("subrange_admission_requests_total", Map.of("webhook", "mutate", "kind", "Service")))
          .as("replica %s served a share", replica.baseUrl()).isGreaterThan(10);
    }
    assertThat(stillUnaccounted(cluster)).as("the ConfigMaps hold every Service's values, under its name").isEmpty();
    assertThat(cluster.webhookMetric("subrange_store_configmap_writes_saved_total", Map.of()))
        .as("group commit saved writes").isPositive();
  }

  @Test
  @Order(2)
  void killingAReplicaMidwayLosesNothingAndItsLeftoversAreReclaimed(ReplicatedCluster cluster) {
    E2eSupport.namespace(cluster.client(), "ha-b");
    ServiceLoad.Report report;
    try (KubernetesClient load = ServiceLoad.concurrentClient(cluster.client().getConfiguration(), CLIENTS)) {
      report = ServiceLoad.create(load, "ha-b", "svc", 300, CLIENTS, done -> {
        if (done == 100) {
          cluster.kill(1);
        }
      });
    }
    System.out.println("HA (b) " + report.summary());
    assertThat(cluster.webhooks().get(1).isAlive()).isFalse();
    assertThat(report.failures()).as("creates that met the killed replica were retried").isEmpty();
    assertNoDuplicates(cluster.client());

    Duration deadline = cluster.settings().orphanGrace().plusSeconds(30);
    long started = System.nanoTime();
    await().atMost(deadline).pollInterval(Duration.ofMillis(500)).untilAsserted(() ->
        assertThat(orphans(cluster)).as("values held with no Service carrying them").isEmpty());
    System.out.printf("HA (b) leftovers reclaimed %d ms after the load ended (grace %d s)%n",
        (System.nanoTime() - started) / 1_000_000, cluster.settings().orphanGrace().toSeconds());
    assertThat(stillUnaccounted(cluster)).isEmpty();
    cluster.restart(1);
  }

  @Test
  @Order(3)
  void deletingEverythingReturnsEveryCountToZero(ReplicatedCluster cluster) {
    for (String namespace : List.of("ha-a", "ha-b")) {
      ServiceLoad.deleteAll(cluster.client(), namespace, "svc", CLIENTS);
    }
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      StoredAllocations stored = cluster.stored();
      assertThat(stored.nodePorts()).isEmpty();
      assertThat(stored.clusterIps()).as("only the API server's own Service").containsOnlyKeys("10.96.0.1");
      for (SubrangeServer replica : cluster.webhooks()) {
        assertThat(replica.metric("subrange_clusterip_allocator_allocated_ips", Map.of())).isEqualTo(1);
        assertThat(replica.metric("subrange_nodeport_allocator_allocated_ports", Map.of())).isZero();
      }
    });
    double onDelete = cluster.reconciler().metric("subrange_reconciler_releases_total", Map.of("reason", "deleted"));
    double asLeaks = cluster.reconciler().metric("subrange_reconciler_repairs_total", Map.of("type", "leak"));
    System.out.printf("HA (c) freed %.0f values as deletions were seen, %.0f as leaks%n", onDelete, asLeaks);
    assertThat(onDelete).as("600 Services (300 NodePort) gave up 900 values; nearly all are freed as their deletion is"
        + " seen, the rest (a replica was killed) after the grace period").isGreaterThanOrEqualTo(850);
  }

  @Test
  @Order(4)
  void lostConfigMapsAreRebuiltFromTheClusterWithoutDuplicates(ReplicatedCluster cluster) {
    E2eSupport.namespace(cluster.client(), "ha-c");
    assertThat(ServiceLoad.create(cluster.client(), "ha-c", "before", 100, CLIENTS, done -> { }).failures()).isEmpty();
    cluster.stopAll();
    cluster.client().configMaps().inNamespace(ReplicatedCluster.NAMESPACE).withLabel("subrange.io/range-kind").delete();
    cluster.startAll();

    assertThat(stillUnaccounted(cluster)).as("rebuilt from the Services").isEmpty();
    assertThat(orphans(cluster)).isEmpty();
    ServiceLoad.Report after = ServiceLoad.create(cluster.client(), "ha-c", "after", 100, CLIENTS, done -> { });
    assertThat(after.failures()).isEmpty();
    assertNoDuplicates(cluster.client());
    assertThat(cluster.reconciler().metric("subrange_reconciler_rebuilds_total", Map.of()))
        .as("the restarted reconciler rebuilt the ranges from the Services").isPositive();
  }

  // ---- what the cluster and the ConfigMaps say ------------------------------------------------

  private static void assertNoDuplicates(KubernetesClient client) {
    Map<String, List<String>> byIp = new TreeMap<>();
    Map<Integer, List<String>> byPort = new TreeMap<>();
    for (Service service : client.services().inAnyNamespace().list().getItems()) {
      String name = name(service);
      clusterIps(service).forEach(ip -> byIp.computeIfAbsent(ip, k -> new ArrayList<>()).add(name));
      nodePorts(service).forEach(p -> byPort.computeIfAbsent(p, k -> new ArrayList<>()).add(name));
    }
    assertThat(byIp.entrySet().stream().filter(e -> e.getValue().size() > 1).toList()).as("duplicate ClusterIPs")
        .isEmpty();
    assertThat(byPort.entrySet().stream().filter(e -> e.getValue().size() > 1).toList()).as("duplicate NodePorts")
        .isEmpty();
  }

  /** Values Services carry that the ConfigMaps do not hold for them. */
  private static List<String> stillUnaccounted(ReplicatedCluster cluster) {
    StoredAllocations stored = cluster.stored();
    List<String> missing = new ArrayList<>();
    for (Service service : cluster.client().services().inAnyNamespace().list().getItems()) {
      String name = name(service);
      for (String ip : clusterIps(service)) {
        if (!name.equals(stored.clusterIps().get(ip))) {
          missing.add(name + " " + ip + " (stored: " + stored.clusterIps().get(ip) + ")");
        }
      }
      for (int port : nodePorts(service)) {
        if (!name.equals(stored.nodePorts().get(port))) {
          missing.add(name + " " + port + " (stored: " + stored.nodePorts().get(port) + ")");
        }
      }
    }
    return missing;
  }

  /** Values the ConfigMaps hold that no Service carries. */
  private static Map<String, String> orphans(ReplicatedCluster cluster) {
    StoredAllocations stored = cluster.stored();
    Map<String, String> carried = new HashMap<>();
    for (Service service : cluster.client().services().inAnyNamespace().list().getItems()) {
      clusterIps(service).forEach(ip -> carried.put(ip, name(service)));
      nodePorts(service).forEach(p -> carried.put(String.valueOf(p), name(service)));
    }
    Map<String, String> orphans = new TreeMap<>();
    stored.clusterIps().forEach((ip, holder) -> {
      if (!carried.containsKey(ip)) {
        orphans.put(ip, holder);
      }
    });
    stored.nodePorts().forEach((port, holder) -> {
      if (!carried.containsKey(String.valueOf(port))) {
        orphans.put(String.valueOf(port), holder);
      }
    });
    return orphans;
  }

  private static String name(Service service) {
    return service.getMetadata().getNamespace() + "/" + service.getMetadata().getName();
  }

  private static List<String> clusterIps(Service service) {
    List<String> ips = service.getSpec().getClusterIPs();
    return ips == null ? List.of() : ips.stream().filter(ip -> !ip.isEmpty() && !ip.equals("None")).toList();
  }

  private static List<Integer> nodePorts(Service service) {
    List<Integer> ports = new ArrayList<>();
    for (ServicePort port : service.getSpec().getPorts()) {
      if (port.getNodePort() != null && port.getNodePort() > 0) {
        ports.add(port.getNodePort());
      }
    }
    return ports;
  }
}
