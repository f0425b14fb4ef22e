package io.subrange.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SubrangeServerTest {

  /**
   * The JVMs the harness and ./run-local start get the JAVA_TOOL_OPTIONS the container gets (a
   * JIT or trap setting tried in the harness and not deployed would otherwise measure something
   * that runs nowhere).
   */
  @Test
  void jvmOptionsAreTheDeployedOnes() throws IOException {
    ConfigMap config = read("configmap.yaml", ConfigMap.class);
    String deployed = config.getData().get("JAVA_TOOL_OPTIONS");
    assertThat(deployed).as("JAVA_TOOL_OPTIONS in manifests/configmap.yaml").isNotBlank();

    assertThat(options(SubrangeServer.DEFAULT_JVM_OPTIONS)).isEqualTo(options(deployed));
  }

  /**
   * The heap the harness's JVMs get follows from the containers' memory limit, as a pod's does
   * ({@link SubrangeServer#containerJvm}): a limit changed in the manifests and not here would
   * measure another heap, and another collector's cost, than the one deployed.
   */
  @ParameterizedTest
  @ValueSource(strings = {"deployment.yaml", "reconciler.yaml"})
  void heapFollowsTheContainersMemoryLimit(String manifest) throws IOException {
    Deployment deployment = read(manifest, Deployment.class);
    Container container = deployment.getSpec().getTemplate().getSpec().getContainers().get(0);

    assertThat(Quantity.getAmountInBytes(container.getResources().getLimits().get("memory")))
        .isEqualTo(Quantity.getAmountInBytes(new Quantity(SubrangeServer.CONTAINER_MEMORY.replace("m", "Mi"))));
    assertThat(SubrangeServer.containerJvm()).contains("-XX:MaxRAM=" + SubrangeServer.CONTAINER_MEMORY);
  }

  private static <T> T read(String manifest, Class<T> type) throws IOException {
    try (InputStream in = Files.newInputStream(RepoLayout.locate().manifests().resolve(manifest))) {
      return new KubernetesSerialization().unmarshal(in, type);
    }
  }

  private static Set<String> options(String line) {
    return Arrays.stream(line.trim().split("\\s+")).collect(Collectors.toSet());
  }
}
