package io.subrange.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhook;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhook;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.subrange.testing.ControlPlane;
import io.subrange.testing.Processes;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
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

  /**
   * Services go to one of three mutating entries: Fail for most, Ignore for kube-system's and the
   * API server's own (provider=kubernetes), so subrange being down never stops the cluster's own
   * Services (the reconciler records what they carry). Only those two are validated as well.
   */
  @Test
  void theWebhookIsRegisteredAsDesigned(E2eCluster cluster) throws IOException {
    MutatingWebhookConfiguration mutating = load(cluster, "mutatingwebhookconfiguration.yaml",
        MutatingWebhookConfiguration.class);
    ValidatingWebhookConfiguration validating = load(cluster, "validatingwebhookconfiguration.yaml",
        ValidatingWebhookConfiguration.class);
    assertThat(mutating.getWebhooks()).allSatisfy(webhook -> {
      assertThat(webhook.getAdmissionReviewVersions()).containsExactly("v1");
      assertThat(webhook.getTimeoutSeconds()).isBetween(2, 10);
    });
    MutatingWebhook services = mutating.getWebhooks().stream()
        .filter(w -> w.getName().equals("services.subrange.io")).findFirst().orElseThrow();
    assertThat(services.getSideEffects()).isEqualTo("NoneOnDryRun");
    assertThat(services.getFailurePolicy()).isEqualTo("Fail");
    assertThat(services.getRules()).singleElement().satisfies(rule -> {
      assertThat(rule.getResources()).containsExactly("services");
      assertThat(rule.getOperations()).contains("CREATE");
    });
    Map<String, String> serviceEntries = Map.of("services.subrange.io", "Fail",
        "system-services.subrange.io", "Ignore", "apiserver-services.subrange.io", "Ignore");
    assertThat(mutating.getWebhooks().stream()
        .filter(w -> w.getRules().stream().anyMatch(r -> r.getResources().contains("services")))
        .collect(Collectors.toMap(MutatingWebhook::getName, MutatingWebhook::getFailurePolicy)))
        .as("Service entries of the MutatingWebhookConfiguration").isEqualTo(serviceEntries);
    // Only where the mutating call may have failed open: a second call for every other Service
    // would check again what /mutate (Fail) just recorded.
    assertThat(validating.getWebhooks().stream()
        .filter(w -> w.getRules().stream().anyMatch(r -> r.getResources().contains("services")))
        .collect(Collectors.toMap(ValidatingWebhook::getName, ValidatingWebhook::getFailurePolicy)))
        .as("Service entries of the ValidatingWebhookConfiguration")
        .isEqualTo(Map.of("system-services.subrange.io", "Ignore", "apiserver-services.subrange.io", "Ignore"));
  }

  /**
   * The three Service entries of the mutating configuration split Services between them: every
   * Service, kube-system's and those labelled as the API server's own included, is sent to
   * /mutate once, never twice; /validate gets exactly the kube-system and API server ones, once.
   * This API server (1.20) gives namespaces no kubernetes.io/metadata.name label, so the test
   * labels them, as README says to before 1.21.
   */
  @Test
  void eachServiceReachesEachConfigurationOnce(E2eCluster cluster) {
    KubernetesClient client = cluster.client();
    String own = "e2e-partition";
    ControlPlane.ensureNamespace(client, own);
    for (String namespace : List.of(own, "kube-system")) {
      var labelled = cluster.kubectl("label", "--overwrite", "namespace", namespace,
          "kubernetes.io/metadata.name=" + namespace);
      assertThat(labelled.exitCode()).as(labelled.stderr()).isZero();
    }
    Map<String, String> apiServers = Map.of("component", "apiserver", "provider", "kubernetes");
    int n = 0;
    for (String namespace : List.of(own, "kube-system")) {
      for (Map<String, String> labels : List.of(Map.<String, String>of(), apiServers)) {
        double validations = namespace.equals("kube-system") || labels.equals(apiServers) ? 1.0 : 0.0;
        double mutateBefore = serviceCreates(cluster, "mutate");
        double validateBefore = serviceCreates(cluster, "validate");
        Service created = client.services().inNamespace(namespace).resource(new ServiceBuilder()
                .withNewMetadata().withName("partition-" + n++).withLabels(labels).endMetadata()
                .withNewSpec().addNewPort().withPort(80).endPort().endSpec().build())
            .create();
        try {
          String what = "Service " + namespace + "/" + created.getMetadata().getName() + " labelled " + labels;
          Processes.pollUntil(Duration.ofSeconds(10), 100, () -> serviceCreates(cluster, "mutate") > mutateBefore
              && serviceCreates(cluster, "validate") >= validateBefore + validations);
          assertThat(serviceCreates(cluster, "mutate") - mutateBefore).as("mutating calls for " + what)
              .isEqualTo(1.0);
          assertThat(serviceCreates(cluster, "validate") - validateBefore).as("validating calls for " + what)
              .isEqualTo(validations);
        } finally {
          client.resource(created).delete();
        }
      }
    }
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

  private static double serviceCreates(E2eCluster cluster, String webhook) {
    return cluster.subrange().metric("subrange_admission_requests_total",
        Map.of("webhook", webhook, "kind", "Service", "operation", "CREATE"));
  }

  private static <T> T load(E2eCluster cluster, String file, Class<T> type) throws IOException {
    try (InputStream in = Files.newInputStream(cluster.repo().manifests().resolve(file))) {
      return cluster.client().getKubernetesSerialization().unmarshal(in, type);
    }
  }
}
