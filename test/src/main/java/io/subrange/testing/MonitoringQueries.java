package io.subrange.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The PromQL in manifests/monitoring (the PrometheusRule's {@code expr:} and the Grafana
 * dashboard's {@code "expr":}) and the subrange metric names it reads, so tests can hold them
 * against what subrange really serves.
 */
public final class MonitoringQueries {

  private static final Pattern METRIC = Pattern.compile("\\bsubrange_[a-z0-9_]+");
  /** A rule's expr: one line, or an indented block after {@code expr: |}. */
  private static final Pattern RULE_EXPR = Pattern.compile("(?m)^(\\s*)expr: (\\|\\n((?:\\1\\s+.*\\n)+)|(.*)$)");
  private static final Pattern DASHBOARD_EXPR = Pattern.compile("\"expr\":\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");

  private MonitoringQueries() {
  }

  public static Path rules(RepoLayout repo) {
    return repo.manifests().resolve("monitoring/prometheusrule.yaml");
  }

  public static Path dashboard(RepoLayout repo) {
    return repo.manifests().resolve("monitoring/grafana-dashboard.json");
  }

  /** Every subrange metric the rules and the dashboard query. */
  public static Set<String> metricsQueried(RepoLayout repo) {
    Set<String> names = new TreeSet<>();
    Matcher rule = RULE_EXPR.matcher(read(rules(repo)));
    while (rule.find()) {
      names.addAll(metrics(rule.group(3) != null ? rule.group(3) : rule.group(4)));
    }
    Matcher panel = DASHBOARD_EXPR.matcher(read(dashboard(repo)));
    while (panel.find()) {
      names.addAll(metrics(panel.group(1)));
    }
    return names;
  }

  /** The metric names in a Prometheus text exposition (what /metrics answers). */
  public static Set<String> metricsServed(String exposition) {
    Set<String> names = new TreeSet<>();
    PrometheusSamples.parse(exposition).forEach(sample -> names.add(sample.name()));
    return names;
  }

  static Set<String> metrics(String promql) {
    Set<String> names = new TreeSet<>();
    Matcher matcher = METRIC.matcher(promql);
    while (matcher.find()) {
      names.add(matcher.group());
    }
    return names;
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
