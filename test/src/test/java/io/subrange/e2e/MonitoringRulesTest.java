package io.subrange.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.subrange.testing.MonitoringQueries;
import io.subrange.testing.Processes;
import io.subrange.testing.RepoLayout;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * manifests/monitoring/prometheusrule.yaml is valid Prometheus: its rule groups pass
 * `promtool check rules` (Debian's prometheus package; .ci/run installs it). That the metrics it
 * and the dashboard name are ones subrange serves is checked on a running install
 * (InstalledSubrangeIT).
 */
class MonitoringRulesTest {

  private final RepoLayout repo = RepoLayout.locate();
  private final KubernetesSerialization yaml = new KubernetesSerialization();

  @Test
  void promtoolAcceptsTheRuleGroups(@TempDir Path dir) throws IOException {
    Processes.Result checked = promtool(dir, ruleGroups());
    assertThat(checked.exitCode()).as(checked.stdout() + checked.stderr()).isZero();
    assertThat(checked.stdout()).contains("SUCCESS: 6 rules found");
  }

  /** The check above can fail: a broken expression in the same document is refused. */
  @Test
  void promtoolRefusesABrokenExpression(@TempDir Path dir) throws IOException {
    String broken = ruleGroups().replaceFirst("rate\\(subrange_store_unavailable_total\\[5m\\]\\)",
        "rate(subrange_store_unavailable_total[5m]");
    assertThat(broken).isNotEqualTo(ruleGroups());
    assertThat(promtool(dir, broken).exitCode()).isNotZero();
  }

  @Test
  void theRulesAndTheDashboardQuerySubrangesMetrics() {
    assertThat(MonitoringQueries.metricsQueried(repo)).contains("subrange_store_unavailable_total",
        "subrange_clusterip_allocator_allocated_ips", "subrange_reconciler_leader",
        "subrange_admission_duration_seconds_bucket", "subrange_podcidr_allocator_usage_cidrs");
  }

  /** The PrometheusRule's spec is a rule-groups file, as Prometheus itself reads one. */
  private String ruleGroups() throws IOException {
    try (InputStream in = Files.newInputStream(MonitoringQueries.rules(repo))) {
      GenericKubernetesResource rule = yaml.unmarshal(in, GenericKubernetesResource.class);
      assertThat(rule.getKind()).isEqualTo("PrometheusRule");
      return yaml.asYaml(rule.getAdditionalProperties().get("spec"));
    }
  }

  private Processes.Result promtool(Path dir, String groups) throws IOException {
    Path promtool = Path.of("/usr/bin/promtool");
    assertThat(Files.isExecutable(promtool))
        .as("promtool is missing: apt-get install prometheus (Debian ships promtool in it)").isTrue();
    Path file = dir.resolve("rules.yaml");
    Files.writeString(file, groups);
    return Processes.exec(List.of(promtool.toString(), "check", "rules", file.toString()), dir, 60);
  }
}
