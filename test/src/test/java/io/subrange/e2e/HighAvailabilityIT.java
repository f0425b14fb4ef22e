package io.subrange.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.subrange.testing.ControlPlane;
import io.subrange.testing.ReplicatedCluster;
import io.subrange.testing.ServiceLoad;
import io.subrange.testing.ServiceValues;
import io.subrange.testing.StoredAllocations;
import io.subrange.testing.SubrangeServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
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
    ControlPlane.ensureNamespace(cluster.client(), "ha-a");
    servedAFewCreates(cluster);
    Map<String, String> mutations = Map.of("webhook", "mutate", "kind", "Service");
    List<Double> servedBefore = cluster.webhooks().stream()
        .map(replica -> replica.metric("subrange_admission_requests_total", mutations)).toList();
    Map<String, String> written = Map.of("result", "ok");
    double writesBefore = cluster.webhookMetric("subrange_store_configmap_writes_total", written);
    Map<String, String> handedOut = Map.of("event", "handed_out");
    double handedOutBefore = cluster.webhookMetric("subrange_store_reserved_ahead_total", handedOut);
    double rotatedBefore = connectionsRotated(cluster);
    ServiceLoad.Report report;
    try (KubernetesClient load = ServiceLoad.concurrentClient(cluster.client().getConfiguration(), CLIENTS)) {
      report = ServiceLoad.create(load, "ha-a", "svc", 300, CLIENTS, done -> { });
    }
    System.out.println("HA (a) " + report.summary());

    assertThat(report.failures()).as("every create admitted; no denial from subrange's own races").isEmpty();
    assertThat(report.retries()).isZero();
    assertThat(ServiceValues.duplicates(cluster.client())).as("values on more than one Service").isEmpty();
    // The API server reuses the connection it used last, so with connections kept open one
    // replica served only a handful (6 of 300 seen). Closed every CALLS_PER_CONNECTION calls,
    // the API server reconnects through the balancer, which hands the replicas new connections
    // in turn: each serves a real share, and no create failed on a closed connection (above).
    for (int i = 0; i < cluster.webhooks().size(); i++) {
      SubrangeServer replica = cluster.webhooks().get(i);
      assertThat(replica.metric("subrange_admission_requests_total", mutations) - servedBefore.get(i))
          .as("replica %s served a share of this load", replica.baseUrl()).isGreaterThanOrEqualTo(30);
    }
    assertThat(connectionsRotated(cluster) - rotatedBefore).as("connections closed after their calls")
        .isPositive();
    // Values handed out from a replica's reservations ahead are named within its flush delay.
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
        ServiceValues.unaccounted(cluster.stored(), cluster.client()))
        .as("the ConfigMaps hold every Service's values, under its name").isEmpty());
    assertThat(cluster.webhookMetric("subrange_store_reserved_ahead_total", handedOut) - handedOutBefore)
        .as("most of the 450 values were handed out from reservations ahead").isGreaterThan(300);
    // Without reservations each create wrote once or more (its address, its port), a few shared
    // by group commit; with them the webhooks write batches and holder names.
    assertThat(cluster.webhookMetric("subrange_store_configmap_writes_total", written) - writesBefore)
        .as("ConfigMap writes by the webhooks for 300 creates: fewer than the creates").isLessThan(300);
  }

  private static double connectionsRotated(ReplicatedCluster cluster) {
    return cluster.webhookMetric("subrange_admission_connections_rotated_total", Map.of());
  }

  /**
   * 100 creates from 4 clients, then their deletes: a burst soon after the replicas (and here the
   * API server) start is slow, and on two shared cores it was denied 503 in 2 of 14 runs, past its
   * budget and for lost shard races (README, known limits). Test (a) is about races between
   * replicas once they run, so its burst comes after these.
   */
  private static void servedAFewCreates(ReplicatedCluster cluster) {
    ControlPlane.ensureNamespace(cluster.client(), "ha-warm");
    try (KubernetesClient load = ServiceLoad.concurrentClient(cluster.client().getConfiguration(), 4)) {
      System.out.println("HA (a) before it: " + ServiceLoad.create(load, "ha-warm", "svc", 100, 4, done -> { }).summary());
    }
    ServiceLoad.deleteAll(cluster.client(), "ha-warm", "svc", 4);
    // The reconciler frees their values as it sees the deletes: not during the burst. The first
    // look comes after the reserve-ahead flush, so no value still stored under its reservation
    // (its Service's name not written yet) slips past it.
    await().pollDelay(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      StoredAllocations stored = cluster.stored();
      assertThat(stored.clusterIps().values()).noneMatch(holder -> holder.startsWith("ha-warm/"));
      assertThat(stored.nodePorts().values()).noneMatch(holder -> holder.startsWith("ha-warm/"));
    });
  }

  @Test
  @Order(2)
  void killingAReplicaMidwayLosesNothingAndItsLeftoversAreReclaimed(ReplicatedCluster cluster) {
    ControlPlane.ensureNamespace(cluster.client(), "ha-b");
    ServiceLoad.Report report;
    try (KubernetesClient load = ServiceLoad.concurrentClient(cluster.client().getConfiguration(), CLIENTS)) {
      report = ServiceLoad.create(load, "ha-b", "svc", 300, CLIENTS, done -> {
        if (done == 100) {
          cluster.kill(1);
        }
      });
    }
    System.out.println("HA (b) " + report.summary());
    assertThat(report.failures()).as("no create failed, though a replica was killed during the load").isEmpty();
    assertThat(ServiceValues.duplicates(cluster.client())).as("values on more than one Service").isEmpty();

    // A retry by the same name gets back what the killed replica wrote, so the kill may leave no
    // orphans; creates the API server refuses after subrange allocated for them surely do.
    assertThat(ServiceLoad.createRefusedAfterAdmission(cluster.client(), "ha-b", "refused", 10)).isEqualTo(10);
    long orphaned = System.nanoTime();
    // 10 addresses and 5 NodePorts were left; on a slow machine the first may already be past
    // their grace, but not all of them.
    // (Once the replicas that handed them out have named their holders: within the flush delay.)
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
        ServiceValues.orphans(cluster.stored(), cluster.client())).as("values no Service carries").isNotEmpty());
    Duration grace = cluster.settings().orphanGrace();
    await().atMost(grace.plusSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(() ->
        assertThat(ServiceValues.orphans(cluster.stored(), cluster.client())).as("values held with no Service carrying them").isEmpty());
    long reclaimedMillis = (System.nanoTime() - orphaned) / 1_000_000;
    System.out.printf("HA (b) leftovers reclaimed %d ms after they were left (grace %d s)%n", reclaimedMillis,
        grace.toSeconds());
    // "since" is kept in whole seconds and the clock started after the last allocation: allow 1.5 s.
    assertThat(reclaimedMillis).as("not before the grace period").isGreaterThanOrEqualTo(grace.toMillis() - 1500);
    assertThat(ServiceValues.unaccounted(cluster.stored(), cluster.client())).isEmpty();
    String pod = ReplicatedCluster.podName(1);
    Map<String, Long> probed = cluster.probes().counts(pod);
    cluster.restart(1);
    // Probed from its start again as the kubelet would, over TLS: its startup probe passed, then readiness.
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(cluster.probes().counts(pod))
        .containsEntry("startup ok", probed.getOrDefault("startup ok", 0L) + 1)
        .hasEntrySatisfying("readiness ok", n -> assertThat(n).isGreaterThan(probed.getOrDefault("readiness ok", 0L))));
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
    assertThat(onDelete).as("700 Services (350 NodePort, test (a)'s first 100 included) gave up 1,050 values; nearly"
        + " all are freed as their deletion is seen, the rest (a replica was killed) after the grace period")
        .isGreaterThanOrEqualTo(1000);
  }

  @Test
  @Order(4)
  void lostConfigMapsAreRebuiltFromTheClusterWithoutDuplicates(ReplicatedCluster cluster) {
    ControlPlane.ensureNamespace(cluster.client(), "ha-c");
    assertThat(ServiceLoad.create(cluster.client(), "ha-c", "before", 100, CLIENTS, done -> { }).failures()).isEmpty();
    cluster.stopAll();
    cluster.client().configMaps().inNamespace(ReplicatedCluster.NAMESPACE).withLabel("subrange.io/range-kind").delete();
    cluster.startAll();

    assertThat(ServiceValues.unaccounted(cluster.stored(), cluster.client())).as("rebuilt from the Services").isEmpty();
    assertThat(ServiceValues.orphans(cluster.stored(), cluster.client())).isEmpty();
    ServiceLoad.Report after = ServiceLoad.create(cluster.client(), "ha-c", "after", 100, CLIENTS, done -> { });
    assertThat(after.failures()).isEmpty();
    assertThat(ServiceValues.duplicates(cluster.client())).as("values on more than one Service").isEmpty();
    assertThat(cluster.reconciler().metric("subrange_reconciler_rebuilds_total", Map.of()))
        .as("the restarted reconciler rebuilt the ranges from the Services").isPositive();
  }
}
