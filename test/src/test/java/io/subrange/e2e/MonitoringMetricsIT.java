package io.subrange.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.subrange.testing.ControlPlane;
import io.subrange.testing.MonitoringQueries;
import io.subrange.testing.RepoLayout;
import io.subrange.testing.ReplicatedCluster;
import io.subrange.testing.StoredAllocations;
import io.subrange.testing.SubrangeServer;
import io.subrange.testing.WebhookRegistration;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Every subrange metric that manifests/monitoring's alerts and dashboard query is one that the
 * processes serve on /metrics, in the roles the manifests run (webhook replicas on the ConfigMap
 * store, the reconciler), once they have done what each metric counts: a misspelt or renamed
 * metric in the rules or the dashboard fails here, in `mvn verify`. (InstalledSubrangeIT checks
 * the same on the installed pods.)
 */
@ExtendWith(ReplicatedE2e.class)
class MonitoringMetricsIT {

  private static final String NAMESPACE = "monitoring-metrics";

  @Test
  void theAlertsAndTheDashboardQueryOnlyMetricsSubrangeServes(ReplicatedCluster cluster) {
    KubernetesClient client = cluster.client();
    ControlPlane.ensureNamespace(client, NAMESPACE);
    try {
      exerciseEveryMetric(cluster);
      Set<String> served = new TreeSet<>(MonitoringQueries.metricsServed(cluster.reconciler().metricsText()));
      for (SubrangeServer webhook : cluster.webhooks()) {
        served.addAll(MonitoringQueries.metricsServed(webhook.metricsText()));
      }
      Set<String> queried = MonitoringQueries.metricsQueried(RepoLayout.locate());
      assertThat(queried).as("metrics queried in manifests/monitoring").hasSizeGreaterThan(10);
      assertThat(queried).allSatisfy(name ->
          assertThat(served).as("%s, queried in manifests/monitoring, is not served", name).contains(name));
    } finally {
      // The other classes on this cluster count what is held: leave nothing.
      client.services().inNamespace(NAMESPACE).delete();
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        StoredAllocations stored = cluster.stored();
        assertThat(stored.clusterIps().values()).noneMatch(holder -> holder.startsWith(NAMESPACE + "/"));
        assertThat(stored.nodePorts().values()).noneMatch(holder -> holder.startsWith(NAMESPACE + "/"));
      });
    }
  }

  /** Makes the processes do what each queried metric counts, so the lazily registered ones exist. */
  private static void exerciseEveryMetric(ReplicatedCluster cluster) {
    KubernetesClient client = cluster.client();
    // Allocations (ClusterIP and NodePort), admissions, group commits, ConfigMap writes.
    Service first = create(client, "first", null, "NodePort");
    // A refused claim: allocation errors.
    E2eSupport.refused(() -> create(client, "clash", first.getSpec().getClusterIP(), "ClusterIP"));
    // A Service made while the API server did not call subrange, outside subrange's range: a
    // reconciler repair (out_of_range).
    WebhookRegistration.unregister(client, cluster::serviceCreatesAdmitted);
    try {
      create(client, "behind-its-back", "10.96.211.9", "ClusterIP");
    } finally {
      cluster.registerWebhooks();
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> cluster.reconciler().metricsText()
        .contains("subrange_reconciler_repairs_total{"));
  }

  private static Service create(KubernetesClient client, String name, String clusterIp, String type) {
    return client.services().inNamespace(NAMESPACE).resource(new ServiceBuilder()
        .withNewMetadata().withName(name).endMetadata()
        .withNewSpec().withType(type).withClusterIP(clusterIp).addNewPort().withPort(80).endPort().endSpec()
        .build()).create();
  }
}
