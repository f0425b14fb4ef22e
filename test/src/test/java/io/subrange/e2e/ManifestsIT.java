package io.subrange.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhook;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Everything in manifests/ is accepted by a real API server, and the webhook rules hold there. */
@ExtendWith(E2eCluster.class)
class ManifestsIT {

  @Test
  void everyManifestPassesServerSideDryRun(E2eCluster cluster) throws IOException {
    Path manifests = cluster.repo().manifests();
    // Namespaced objects can only be dry-run into a namespace that exists.
    var namespace = cluster.kubectl("apply", "-f", manifests.resolve("namespace.yaml").toString());
    assertThat(namespace.exitCode()).as(namespace.stderr()).isZero();

    List<Path> files;
    try (Stream<Path> listing = Files.list(manifests)) {
      files = listing.filter(p -> p.toString().endsWith(".yaml"))
          .filter(p -> !p.getFileName().toString().equals("kustomization.yaml")).sorted().toList();
    }
    assertThat(files).hasSizeGreaterThanOrEqualTo(6);
    for (Path file : files) {
      var result = cluster.kubectl("apply", "--dry-run=server", "-f", file.toString());
      assertThat(result.exitCode()).as(file.getFileName() + ": " + result.stderr()).isZero();
    }
    var kustomized = cluster.kubectl("apply", "--dry-run=server", "-k", manifests.toString());
    assertThat(kustomized.exitCode()).as("kubectl apply -k manifests: " + kustomized.stderr()).isZero();
    assertThat(kustomized.stdout()).contains("deployment.apps/subrange-webhook")
        .contains("mutatingwebhookconfiguration.admissionregistration.k8s.io/subrange");
  }

  @Test
  void theWebhookIsRegisteredAsDesigned(E2eCluster cluster) throws IOException {
    MutatingWebhookConfiguration configuration;
    try (InputStream in = Files.newInputStream(cluster.repo().manifests().resolve("mutatingwebhookconfiguration.yaml"))) {
      configuration = cluster.client().getKubernetesSerialization().unmarshal(in, MutatingWebhookConfiguration.class);
    }
    MutatingWebhook webhook = configuration.getWebhooks().get(0);
    assertThat(webhook.getAdmissionReviewVersions()).containsExactly("v1");
    assertThat(webhook.getSideEffects()).isEqualTo("NoneOnDryRun");
    assertThat(webhook.getFailurePolicy()).isEqualTo("Fail");
    assertThat(webhook.getTimeoutSeconds()).isBetween(2, 10);
    assertThat(webhook.getRules()).singleElement().satisfies(rule -> {
      assertThat(rule.getResources()).containsExactly("services");
      assertThat(rule.getOperations()).contains("CREATE");
    });
  }

  @Test
  void servicesInSubrangesOwnNamespaceNeverReachTheWebhook(E2eCluster cluster) {
    var namespace = cluster.kubectl("apply", "-f", cluster.repo().manifests().resolve("namespace.yaml").toString());
    assertThat(namespace.exitCode()).as(namespace.stderr()).isZero();
    Map<String, String> serviceCreates = Map.of("kind", "Service", "operation", "CREATE");
    double before = cluster.subrange().metric("subrange_admission_requests_total", serviceCreates);
    var created = cluster.client().services().inNamespace("subrange-system").resource(new ServiceBuilder()
            .withNewMetadata().withName("own").endMetadata()
            .withNewSpec().addNewPort().withPort(443).endPort().endSpec().build())
        .create();
    assertThat(created.getSpec().getClusterIP()).isNotBlank();  // the API server's own allocator
    assertThat(cluster.subrange().metric("subrange_admission_requests_total", serviceCreates)).isEqualTo(before);
    cluster.client().resource(created).delete();
  }
}
