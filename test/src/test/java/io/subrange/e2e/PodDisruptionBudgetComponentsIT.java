package io.subrange.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.subrange.testing.Processes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * manifests/components/pdb-policy-v1 and pdb-policy-v1beta1: each adds the webhook's
 * PodDisruptionBudget (minAvailable 2, the webhook pods only) to manifests/ when a user lists it
 * under {@code components:}; the 1.20 API server takes the v1beta1 one and has no v1; kubectl
 * 1.20's kustomize cannot read components, so README's plain-file way is the one for it.
 */
@ExtendWith(E2eCluster.class)
class PodDisruptionBudgetComponentsIT {

  private static final List<String> VERSIONS = List.of("v1", "v1beta1");
  private final KubernetesSerialization yaml = new KubernetesSerialization();

  @Test
  void eachComponentAddsOnlyTheWebhooksBudgetToTheManifests(E2eCluster cluster, @TempDir Path dir) throws IOException {
    Path kubectl = kubectlWithComponents(cluster);
    Path manifests = cluster.repo().manifests();
    List<HasMetadata> base = render(kubectl, dir.resolve("base"), manifests, null);
    Map<String, String> webhookPods = deployment(base, "subrange-webhook").getSpec().getTemplate().getMetadata()
        .getLabels();
    Map<String, String> reconcilerPods = deployment(base, "subrange-reconciler").getSpec().getTemplate().getMetadata()
        .getLabels();
    for (String version : VERSIONS) {
      List<HasMetadata> rendered = render(kubectl, dir.resolve(version), manifests,
          manifests.resolve("components/pdb-policy-" + version));
      List<HasMetadata> budgets = rendered.stream().filter(o -> o.getKind().equals("PodDisruptionBudget")).toList();
      assertThat(budgets).as(version).singleElement().satisfies(pdb -> {
        assertThat(pdb.getApiVersion()).isEqualTo("policy/" + version);
        assertThat(pdb.getMetadata().getNamespace()).isEqualTo("subrange-system");
        Map<String, Object> spec = spec(pdb);
        assertThat(spec.get("minAvailable")).isEqualTo(2);
        @SuppressWarnings("unchecked")
        Map<String, String> selector = (Map<String, String>) ((Map<String, Object>) spec.get("selector"))
            .get("matchLabels");
        assertThat(webhookPods).as("the webhook pods match").containsAllEntriesOf(selector);
        assertThat(reconcilerPods.entrySet().containsAll(selector.entrySet())).as("the reconciler pod does not")
            .isFalse();
      });
      assertThat(rendered).as("the component adds the budget and nothing else").hasSize(base.size() + 1);
    }
  }

  @Test
  void the120ApiServerTakesTheV1beta1BudgetOnly(E2eCluster cluster) {
    var namespace = cluster.kubectl("apply", "-f", cluster.repo().manifests().resolve("namespace.yaml").toString());
    assertThat(namespace.exitCode()).as(namespace.stderr()).isZero();
    var v1beta1 = cluster.kubectl("apply", "--dry-run=server", "-f", pdb(cluster, "v1beta1").toString());
    assertThat(v1beta1.exitCode()).as(v1beta1.stderr()).isZero();
    assertThat(v1beta1.stdout()).contains("poddisruptionbudget.policy/subrange-webhook");
    var v1 = cluster.kubectl("apply", "--dry-run=server", "-f", pdb(cluster, "v1").toString());
    assertThat(v1.exitCode()).isNotZero();
    assertThat(v1.stderr()).contains("policy/v1");
  }

  /** Why README gives kubectl 1.20 users the plain file: its kustomize does not know components. */
  @Test
  void kubectl120CannotReadComponents(E2eCluster cluster, @TempDir Path dir) throws IOException {
    Path manifests = cluster.repo().manifests();
    writeKustomization(dir, manifests, manifests.resolve("components/pdb-policy-v1beta1"));
    var rendered = cluster.kubectl("kustomize", dir.toString());
    assertThat(rendered.exitCode()).isNotZero();
    assertThat(rendered.stderr()).contains("components");
  }

  private static Path pdb(E2eCluster cluster, String version) {
    return cluster.repo().manifests().resolve("components/pdb-policy-" + version + "/pdb.yaml");
  }

  /**
   * A kubectl on this machine whose kustomize reads components (kubectl 1.21+; the control
   * plane's 1.20 one does not). Not installable from Debian (its kubernetes-client is 1.20), so
   * without one the rendering check is skipped, saying so.
   */
  private static Path kubectlWithComponents(E2eCluster cluster) {
    List<Path> candidates = new ArrayList<>();
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (!dir.isEmpty()) {
        candidates.add(Path.of(dir, "kubectl"));
      }
    }
    candidates.add(Path.of("/usr/bin/kubectl"));
    for (Path candidate : candidates) {
      if (Files.isExecutable(candidate)) {
        var version = Processes.exec(List.of(candidate.toString(), "version", "--client", "-o", "json"),
            cluster.repo().root(), 60);
        if (version.exitCode() == 0 && version.stdout().matches("(?s).*\"kustomizeVersion\":\\s*\"v[4-9].*")) {
          return candidate;
        }
      }
    }
    Assumptions.abort("no kubectl 1.21+ (kustomize with components) on PATH or at /usr/bin/kubectl");
    return null;
  }

  private List<HasMetadata> render(Path kubectl, Path dir, Path manifests, Path component) throws IOException {
    Files.createDirectories(dir);
    writeKustomization(dir, manifests, component);
    var rendered = Processes.exec(List.of(kubectl.toString(), "kustomize", dir.toString()), dir, 120);
    assertThat(rendered.exitCode()).as("kubectl kustomize with %s: %s", component, rendered.stderr()).isZero();
    List<HasMetadata> objects = new ArrayList<>();
    for (String document : rendered.stdout().split("(?m)^---\\s*$")) {
      if (!document.isBlank()) {
        objects.add(yaml.unmarshal(document, GenericKubernetesResource.class));
      }
    }
    return objects;
  }

  /** kustomize takes relative paths only. */
  private static void writeKustomization(Path dir, Path manifests, Path component) throws IOException {
    StringBuilder text = new StringBuilder("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n")
        .append("resources:\n  - ").append(dir.relativize(manifests)).append('\n');
    if (component != null) {
      text.append("components:\n  - ").append(dir.relativize(component)).append('\n');
    }
    Files.writeString(dir.resolve("kustomization.yaml"), text);
  }

  private Deployment deployment(List<HasMetadata> objects, String name) {
    HasMetadata found = objects.stream()
        .filter(o -> o.getKind().equals("Deployment") && o.getMetadata().getName().equals(name))
        .findFirst().orElseThrow(() -> new AssertionError("no Deployment " + name + " in manifests/"));
    return yaml.convertValue(found, Deployment.class);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> spec(HasMetadata object) {
    return (Map<String, Object>) ((GenericKubernetesResource) object).getAdditionalProperties().get("spec");
  }
}
