package io.subrange.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.subrange.testing.Processes;
import io.subrange.testing.RepoLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * LOGGING_STRUCTURED_FORMAT_CONSOLE=ecs (commented in manifests/configmap.yaml) turns the jar's
 * console output into one JSON object per line, as log collectors want it: checked on the
 * packaged jar as the container runs it, not on a test logging configuration.
 */
class StructuredLogsIT {

  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void everyConsoleLineIsAJsonObject(@TempDir Path dir) throws Exception {
    Path log = dir.resolve("out.log");
    ProcessBuilder builder = new ProcessBuilder(Processes.javaExecutable(), "-jar",
        RepoLayout.locate().webhookJar().toString()).redirectErrorStream(true).redirectOutput(log.toFile());
    builder.environment().putAll(Map.of(
        "LOGGING_STRUCTURED_FORMAT_CONSOLE", "ecs",
        "SERVER_SSL_ENABLED", "false",
        "SERVER_PORT", "0",
        "MANAGEMENT_SERVER_PORT", "0",
        "SUBRANGE_KUBERNETES_ENABLED", "false",
        "SUBRANGE_SHUTDOWN_DRAIN", "0s"));
    Process process = builder.start();
    try {
      assertThat(Processes.pollUntil(Duration.ofSeconds(60), 200, () -> Processes.readOrEmpty(log).contains("Started SubrangeApplication")))
          .as("the jar started: " + Processes.readOrEmpty(log)).isTrue();
    } finally {
      process.destroy();
      process.waitFor();
    }
    List<String> lines = Processes.readOrEmpty(log).lines().filter(l -> !l.isBlank()).toList();
    assertThat(lines).hasSizeGreaterThan(3);
    for (String line : lines) {
      JsonNode entry = JSON.readTree(line);
      assertThat(entry.isObject()).as(line).isTrue();
      assertThat(entry.has("@timestamp")).as(line).isTrue();
      assertThat(entry.path("log").path("level").asText()).as(line).isNotEmpty();
    }
    assertThat(lines).anySatisfy(line -> assertThat(JSON.readTree(line).path("message").asText())
        .startsWith("Started SubrangeApplication"));
  }
}
