package io.subrange.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The harness's replicated cluster reserves ahead what the deployed webhook reserves ahead. */
class ReplicatedClusterSettingsTest {

  @Test
  void theDefaultsReserveAheadAsTheManifestsDo() {
    RepoLayout repo = RepoLayout.locate();
    String deployed = repo.deployedEnv("deployment.yaml", "SUBRANGE_KUBERNETES_RESERVE_AHEAD");
    assertThat(ReplicatedCluster.Settings.defaults().reserveAhead()).isEqualTo(Integer.parseInt(deployed));
  }

  /** Read from the file, not a constant: another manifest gives another batch, and none is an error. */
  @Test
  void theBatchIsReadFromTheDeployment(@TempDir Path root) throws IOException {
    Files.createDirectories(root.resolve("manifests"));
    Files.writeString(root.resolve("manifests/deployment.yaml"), deployment(
        "            - name: SUBRANGE_KUBERNETES_RESERVE_AHEAD\n              value: \"17\"\n"));
    Files.writeString(root.resolve("manifests/bare.yaml"), deployment(""));
    String previous = System.getProperty("subrange.repo.root");
    System.setProperty("subrange.repo.root", root.toString());
    try {
      RepoLayout repo = RepoLayout.locate();
      assertThat(ReplicatedCluster.Settings.deployedReserveAhead(repo)).isEqualTo(17);
      assertThatThrownBy(() -> repo.deployedEnv("bare.yaml", "SUBRANGE_KUBERNETES_RESERVE_AHEAD"))
          .isInstanceOf(IllegalStateException.class).hasMessageContaining("manifests/bare.yaml sets no");
    } finally {
      if (previous == null) {
        System.clearProperty("subrange.repo.root");
      } else {
        System.setProperty("subrange.repo.root", previous);
      }
    }
  }

  /** A Deployment whose container sets OTHER and then {@code env} (list items indented by 12). */
  private static String deployment(String env) {
    return String.join("\n",
        "apiVersion: apps/v1",
        "kind: Deployment",
        "metadata:",
        "  name: subrange-webhook",
        "spec:",
        "  template:",
        "    spec:",
        "      containers:",
        "        - name: webhook",
        "          env:",
        "            - name: OTHER",
        "              value: \"x\"",
        "") + env;
  }
}
