package io.subrange.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Quantity;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.assertj.core.data.Percentage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SubrangeServerTest {

  /**
   * The JVMs the harness and ./run-local start get the JAVA_TOOL_OPTIONS the containers get, with
   * {@code -Dsubrange.jvm.options} after them (a setting tried and not deployed would otherwise
   * measure something that runs nowhere).
   */
  @Test
  void harnessJvmsGetTheDeployedOptionsFirst() {
    RepoLayout repo = RepoLayout.locate();
    String deployed = SubrangeServer.deployedJvmOptions(repo);
    String previous = System.getProperty("subrange.jvm.options");
    System.setProperty("subrange.jvm.options", "-XX:TieredStopAtLevel=1");
    try {
      assertThat(SubrangeServer.jvmToolOptions(repo, 8443)).isEqualTo(deployed + " -XX:TieredStopAtLevel=1");
    } finally {
      if (previous == null) {
        System.clearProperty("subrange.jvm.options");
      } else {
        System.setProperty("subrange.jvm.options", previous);
      }
    }
  }

  /**
   * A harness JVM's heap and collector are a pod's (SubrangeServer#containerJvm): the JVM, given
   * the options the harness starts it with and the deployed JAVA_TOOL_OPTIONS, sizes its heap from
   * the manifest's memory limit as it would inside that container, and collects with Serial, not
   * the G1 it picks on this machine. The expected sizes come from the same options, so what this
   * can catch is the harness's side: the limit it passes as MaxRAM, and the collector.
   */
  @ParameterizedTest
  @ValueSource(strings = {"deployment.yaml", "reconciler.yaml"})
  void harnessJvmsGetThePodsHeapAndCollector(String manifest) throws Exception {
    RepoLayout repo = RepoLayout.locate();
    long limit = Quantity.getAmountInBytes(repo.deployedContainer(manifest).getResources().getLimits().get("memory"))
        .longValueExact();
    String deployed = SubrangeServer.deployedJvmOptions(repo);

    Map<String, String> flags = finalFlags(SubrangeServer.containerJvm(repo, manifest), deployed);

    assertThat(flags).containsEntry("UseSerialGC", "true");
    assertThat(Long.parseLong(flags.get("MaxHeapSize")))
        .isCloseTo((long) (limit * percentage(deployed, "MaxRAMPercentage", 25) / 100), Percentage.withPercentage(1));
    assertThat(Long.parseLong(flags.get("InitialHeapSize")))
        .isCloseTo((long) (limit * percentage(deployed, "InitialRAMPercentage", 100 / 64.0) / 100),
            Percentage.withPercentage(1));
  }

  /** {@code -XX:<name>=N} among {@code options}, or the JVM's default. */
  private static double percentage(String options, String name, double jvmDefault) {
    return options(options).stream().filter(o -> o.startsWith("-XX:" + name + "=")).findFirst()
        .map(o -> Double.parseDouble(o.substring(o.indexOf('=') + 1))).orElse(jvmDefault);
  }

  /** The JVM's final flags with {@code options} and {@code toolOptions} as JAVA_TOOL_OPTIONS. */
  private static Map<String, String> finalFlags(List<String> options, String toolOptions) throws Exception {
    List<String> command = new ArrayList<>(List.of(Processes.javaExecutable()));
    command.addAll(options);
    command.addAll(List.of("-XX:+PrintFlagsFinal", "-version"));
    ProcessBuilder builder = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD);
    builder.environment().put("JAVA_TOOL_OPTIONS", toolOptions);
    Process process = builder.start();
    Map<String, String> flags = new HashMap<>();
    try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
        StandardCharsets.UTF_8))) {
      // "     bool UseSerialGC        = true        {product} {command line}"
      out.lines().map(line -> line.trim().split("\\s+")).filter(f -> f.length >= 4 && f[2].equals("="))
          .forEach(f -> flags.put(f[1], f[3]));
    }
    assertThat(process.waitFor()).as("java %s", command).isZero();
    return flags;
  }

  private static Set<String> options(String line) {
    return Arrays.stream(line.trim().split("\\s+")).collect(Collectors.toSet());
  }
}
