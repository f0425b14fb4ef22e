package io.subrange.testing;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.subrange.testing.PrometheusSamples.Sample;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * What kube-apiserver served, from its own /metrics: requests by resource and verb, whatever their
 * answer (409 conflicts included; {@code apiserver_request_total}), and the watch events it sent
 * by kind, with their bytes ({@code apiserver_watch_events_total},
 * {@code apiserver_watch_events_sizes}). Each watch event
 * counts once per watcher it went to. kube-apiserver 1.20 counts them on HTTP watches only
 * (client-go's); fabric8, and so subrange, watches over WebSocket, which it does not count: a
 * load run at /16 shows one Service event per create, with subrange as without. Between two
 * readings it says what each create cost in requests, which the CPU alone does not.
 */
public final class ApiServerTraffic {

  /** Below this many per create a line is left out of the description. */
  private static final double SHOWN_FROM = 0.05;

  private final Map<String, Double> requests;
  private final Map<String, Double> events;
  private final Map<String, Double> eventBytes;

  private ApiServerTraffic(Map<String, Double> requests, Map<String, Double> events, Map<String, Double> eventBytes) {
    this.requests = requests;
    this.events = events;
    this.eventBytes = eventBytes;
  }

  /** Reads the API server's /metrics now (the client needs the nonResourceURL /metrics). */
  public static ApiServerTraffic read(KubernetesClient client) {
    return of(client.raw("/metrics"));
  }

  static ApiServerTraffic of(String exposition) {
    List<Sample> samples = PrometheusSamples.parse(exposition);
    return new ApiServerTraffic(
        sumBy(samples, "apiserver_request_total", ApiServerTraffic::request),
        sumBy(samples, "apiserver_watch_events_total", ApiServerTraffic::kind),
        sumBy(samples, "apiserver_watch_events_sizes_sum", ApiServerTraffic::kind));
  }

  /**
   * Per create since {@code before}, largest first: requests as "verb resource[/subresource] n",
   * watch events as "kind n (KiB each)".
   */
  public String describeSince(ApiServerTraffic before, long creates) {
    if (wentBack(requests, before.requests) || wentBack(events, before.events)
        || wentBack(eventBytes, before.eventBytes)) {
      return "unknown (the API server's counters went back: it restarted, or they were reset)";
    }
    return "requests " + perCreate(requests, before.requests, creates, k -> "")
        + "; watch events sent over HTTP " + perCreate(events, before.events, creates, kind -> {
          double count = events.getOrDefault(kind, 0.0) - before.events.getOrDefault(kind, 0.0);
          double bytes = eventBytes.getOrDefault(kind, 0.0) - before.eventBytes.getOrDefault(kind, 0.0);
          return count > 0 ? String.format(" (%.1f KiB each)", bytes / count / 1024) : "";
        });
  }

  private static String perCreate(Map<String, Double> now, Map<String, Double> before, long creates,
      Function<String, String> detail) {
    String described = now.entrySet().stream()
        .map(e -> Map.entry(e.getKey(), (e.getValue() - before.getOrDefault(e.getKey(), 0.0)) / Math.max(1, creates)))
        .filter(e -> e.getValue() >= SHOWN_FROM)
        .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
        .map(e -> String.format("%s %.2f%s", e.getKey(), e.getValue(), detail.apply(e.getKey())))
        .collect(Collectors.joining(", "));
    return described.isEmpty() ? "none" : described;
  }

  /** A counter lower than before, or gone: counters only grow while the process lives. */
  private static boolean wentBack(Map<String, Double> now, Map<String, Double> before) {
    return before.entrySet().stream().anyMatch(e -> now.getOrDefault(e.getKey(), 0.0) < e.getValue());
  }

  private static Map<String, Double> sumBy(List<Sample> samples, String name,
      Function<Sample, String> key) {
    return samples.stream().filter(s -> s.name().equals(name))
        .collect(Collectors.groupingBy(key, TreeMap::new, Collectors.summingDouble(Sample::value)));
  }

  private static String request(Sample sample) {
    Map<String, String> labels = sample.labels();
    String subresource = labels.getOrDefault("subresource", "");
    String resource = labels.getOrDefault("resource", "");
    return labels.getOrDefault("verb", "?") + " " + (resource.isEmpty() ? "(not a resource)" : resource)
        + (subresource.isEmpty() ? "" : "/" + subresource);
  }

  private static String kind(Sample sample) {
    return sample.labels().getOrDefault("kind", "?");
  }
}
