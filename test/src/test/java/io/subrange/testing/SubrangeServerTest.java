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
   * The JVMs the harness and ./run-local start get the JAVA_TOOL_OPTIONS the container gets (a
   * JIT or trap setting tried in the harness and not deployed would otherwise measure something
   * that runs nowhere). The heap's share of the container's memory is the one option that means
   * nothing outside a container; the harness sets its heap on the command line.
   */
  @Test
  void jvmOptionsAreTheDeployedOnes() throws IOException {
    String configMap = Files.readString(RepoLayout.locate().manifests().resolve("configmap.yaml"));
    Matcher deployed = TOOL_OPTIONS.matcher(configMap);
    assertThat(deployed.find()).as("JAVA_TOOL_OPTIONS in manifests/configmap.yaml").isTrue();

    assertThat(options(SubrangeServer.DEFAULT_JVM_OPTIONS)).isEqualTo(options(deployed.group(1)).stream()
        .filter(o -> !o.startsWith("-XX:MaxRAMPercentage=")).collect(Collectors.toSet()));
  }

  private static Set<String> options(String line) {
    return Arrays.stream(line.trim().split("\\s+")).filter(o -> !o.isEmpty()).collect(Collectors.toSet());
  }
}
