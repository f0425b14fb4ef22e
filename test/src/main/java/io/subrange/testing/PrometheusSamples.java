package io.subrange.testing;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The samples in a Prometheus text exposition (what /metrics answers), with their labels: enough
 * to read counters and histogram sums from subrange's and kube-apiserver's /metrics. Label values
 * are kept as written (escapes included); a line with an exemplar is skipped.
 */
public final class PrometheusSamples {

  private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{([^}]*)})? (\\S+)(?: \\S+)?$");
  private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\",?");

  /** One sample line: its metric name, labels and value. */
  public record Sample(String name, Map<String, String> labels, double value) {

    public boolean has(Map<String, String> wanted) {
      return wanted.entrySet().stream().allMatch(e -> e.getValue().equals(labels.get(e.getKey())));
    }
  }

  private PrometheusSamples() {
  }

  /** Every sample line of {@code exposition}; comments, blank and unreadable lines are skipped. */
  public static List<Sample> parse(String exposition) {
    List<Sample> samples = new ArrayList<>();
    for (String line : exposition.split("\n")) {
      Matcher m = SAMPLE.matcher(line.strip());
      if (line.startsWith("#") || !m.matches()) {
        continue;
      }
      Map<String, String> labels = new LinkedHashMap<>();
      if (m.group(2) != null) {
        Matcher label = LABEL.matcher(m.group(2));
        while (label.find()) {
          labels.put(label.group(1), label.group(2));
        }
      }
      try {
        samples.add(new Sample(m.group(1), labels, value(m.group(3))));
      } catch (NumberFormatException e) {
        // not a sample line
      }
    }
    return samples;
  }

  /** A sample's value as the exposition formats write it: Java's own spelling, or +Inf, -Inf, NaN. */
  private static double value(String text) {
    return switch (text) {
      case "+Inf", "Inf" -> Double.POSITIVE_INFINITY;
      case "-Inf" -> Double.NEGATIVE_INFINITY;
      default -> Double.parseDouble(text);
    };
  }

  /** The sum of every sample of {@code name} whose labels include all of {@code labels} (0 when none). */
  public static double sum(String exposition, String name, Map<String, String> labels) {
    return sum(parse(exposition), name, labels);
  }

  /** The same over samples already parsed, e.g. from one scrape of each of several processes. */
  public static double sum(List<Sample> samples, String name, Map<String, String> labels) {
    return samples.stream().filter(s -> s.name().equals(name) && s.has(labels)).mapToDouble(Sample::value).sum();
  }
}
