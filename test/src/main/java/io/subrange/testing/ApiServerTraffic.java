package io.subrange.testing;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The requests kube-apiserver served, by verb and resource, whatever their answer (409 conflicts
 * included), from its own {@code apiserver_request_total}. Between two readings it says what each
 * create cost the API server in requests, which the CPU alone does not.
 *
 * <p>Not its watch events: kube-apiserver 1.20 counts those ({@code apiserver_watch_events_total})
 * on HTTP watches only, and fabric8, so subrange, watches over WebSocket.
 */
public final class ApiServerTraffic {

  /** Below this many per create a request is left out of the description. */
  private static final double SHOWN_FROM = 0.05;

  private final Map<String, Double> requests;

  private ApiServerTraffic(Map<String, Double> requests) {
    this.requests = requests;
  }

  /** Reads the API server's /metrics now (the client needs the nonResourceURL /metrics). */
  public static ApiServerTraffic read(KubernetesClient client) {
    return of(client.raw("/metrics"));
  }

  static ApiServerTraffic of(String exposition) {
    return new ApiServerTraffic(PrometheusSamples.parse(exposition).stream()
        .filter(s -> s.name().equals("apiserver_request_total"))
        .collect(Collectors.groupingBy(ApiServerTraffic::request, TreeMap::new,
            Collectors.summingDouble(PrometheusSamples.Sample::value))));
  }

  /** Requests per create since {@code before}, most first, as "verb resource[/subresource] n". */
  public String describeSince(ApiServerTraffic before, long creates) {
    // Counters only grow while the process lives.
    if (before.requests.entrySet().stream().anyMatch(e -> requests.getOrDefault(e.getKey(), 0.0) < e.getValue())) {
      return "unknown (the API server's counters went back: it restarted, or they were reset)";
    }
    String described = requests.entrySet().stream()
        .map(e -> Map.entry(e.getKey(), (e.getValue() - before.requests.getOrDefault(e.getKey(), 0.0))
            / Math.max(1, creates)))
        .filter(e -> e.getValue() >= SHOWN_FROM)
        .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
        .map(e -> String.format("%s %.2f", e.getKey(), e.getValue()))
        .collect(Collectors.joining(", "));
    return described.isEmpty() ? "none" : described;
  }

  private static String request(PrometheusSamples.Sample sample) {
    Map<String, String> labels = sample.labels();
    String subresource = labels.getOrDefault("subresource", "");
    String resource = labels.getOrDefault("resource", "");
    return labels.getOrDefault("verb", "?") + " " + (resource.isEmpty() ? "(not a resource)" : resource)
        + (subresource.isEmpty() ? "" : "/" + subresource);
  }
}
