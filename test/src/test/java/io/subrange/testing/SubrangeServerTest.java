package io.subrange.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class SubrangeServerTest {

  private static final Pattern TOOL_OPTIONS = Pattern.compile("(?m)^\\s*JAVA_TOOL_OPTIONS:\\s*\"([^\"]*)\"");

  /**
   * The JVMs the harness and ./run-local start run with the options the container gets, so what
   * the load harness measures is what is deployed. The heap's share of the container's memory is
   * the one option that means nothing outside a container.
   */
  @Test
  void jvmOptionsAreTheDeployedOnes() throws IOException {
    String configMap = Files.readString(RepoLayout.locate().manifests().resolve("configmap.yaml"));
    Matcher deployed = TOOL_OPTIONS.matcher(configMap);
    assertThat(deployed.find()).as("JAVA_TOOL_OPTIONS in manifests/configmap.yaml").isTrue();

    Set<String> containerOnly = Set.of("-XX:MaxRAMPercentage=75");
    assertThat(options(SubrangeServer.DEFAULT_JVM_OPTIONS))
        .isEqualTo(options(deployed.group(1)).stream().filter(o -> !containerOnly.contains(o)).collect(Collectors.toSet()));
  }

  private static Set<String> options(String line) {
    return Arrays.stream(line.trim().split("\\s+")).filter(o -> !o.isEmpty()).collect(Collectors.toSet());
  }
}
