package io.subrange.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class SubrangeServerTest {

  /**
   * The JVMs the harness and ./run-local start get the JAVA_TOOL_OPTIONS the container gets (a
   * JIT or trap setting tried in the harness and not deployed would otherwise measure something
   * that runs nowhere). The heap's share of the container's memory is the one option that means
   * nothing outside a container; the harness sets its heap on the command line.
   */
  @Test
  void jvmOptionsAreTheDeployedOnes() throws IOException {
    ConfigMap config;
    try (InputStream in = Files.newInputStream(RepoLayout.locate().manifests().resolve("configmap.yaml"))) {
      config = new KubernetesSerialization().unmarshal(in, ConfigMap.class);
    }
    String deployed = config.getData().get("JAVA_TOOL_OPTIONS");
    assertThat(deployed).as("JAVA_TOOL_OPTIONS in manifests/configmap.yaml").isNotBlank();

    assertThat(options(SubrangeServer.DEFAULT_JVM_OPTIONS)).isEqualTo(options(deployed).stream()
        .filter(o -> !o.startsWith("-XX:MaxRAMPercentage=")).collect(Collectors.toSet()));
  }

  private static Set<String> options(String line) {
    return Arrays.stream(line.trim().split("\\s+")).collect(Collectors.toSet());
  }
}
