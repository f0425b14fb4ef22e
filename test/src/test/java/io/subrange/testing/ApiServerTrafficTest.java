package io.subrange.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class ApiServerTrafficTest {

  /** Lines as kube-apiserver 1.20.2 writes them (label order and escaping included). */
  private static String exposition(int configMapPuts, int serviceEvents) {
    return """
        # HELP apiserver_request_total [ALPHA] Counter of apiserver requests broken out for each verb, ...
        # TYPE apiserver_request_total counter
        apiserver_request_total{code="201",component="apiserver",contentType="application/json",dry_run="",group="",resource="services",scope="namespace",subresource="",verb="POST",version="v1"} 2000
        apiserver_request_total{code="200",component="apiserver",contentType="application/json",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="PUT",version="v1"} %d
        apiserver_request_total{code="409",component="apiserver",contentType="application/json",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="PUT",version="v1"} 5
        apiserver_request_total{code="200",component="apiserver",contentType="",dry_run="",group="",resource="",scope="",subresource="",verb="GET",version=""} 3
        apiserver_request_total{code="200",component="apiserver",contentType="application/json",dry_run="",group="",resource="services",scope="namespace",subresource="status",verb="PATCH",version="v1"} 1
        # TYPE apiserver_watch_events_total counter
        apiserver_watch_events_total{group="",kind="Service",version="v1"} %d
        """.formatted(configMapPuts, serviceEvents);
  }

  @Test
  void describesRequestsPerCreateSinceTheEarlierReading() {
    ApiServerTraffic before = ApiServerTraffic.of(exposition(100, 10));
    ApiServerTraffic after = ApiServerTraffic.of(exposition(400, 210));

    // 100 creates between the readings: 300 ConfigMap PUTs; what did not change (the Service
    // POSTs) is left out, and so are the watch events, which are not requests.
    assertThat(after.describeSince(before, 100)).isEqualTo("PUT configmaps 3.00");
  }

  @Test
  void saysNoneWhenNothingMoved() {
    ApiServerTraffic reading = ApiServerTraffic.of(exposition(1, 1));
    assertThat(reading.describeSince(reading, 100)).isEqualTo("none");
  }

  @Test
  void samplesKeepTheirLabelsAndTheRestIsSkipped() {
    var samples = PrometheusSamples.parse(exposition(1, 1)
        + "not a sample\nx{a=\"b\"} NaN\nbucket{le=\"+Inf\"} +Inf\nlow -Inf\n");
    assertThat(samples).anySatisfy(s -> {
      assertThat(s.name()).isEqualTo("apiserver_request_total");
      assertThat(s.labels()).containsEntry("subresource", "status").containsEntry("verb", "PATCH");
    });
    assertThat(PrometheusSamples.sum(exposition(7, 1), "apiserver_request_total",
        Map.of("resource", "configmaps"))).isEqualTo(12);
    assertThat(samples).noneMatch(s -> s.name().equals("not"));
    assertThat(samples).filteredOn(s -> s.name().equals("x")).singleElement()
        .satisfies(s -> assertThat(s.value()).isNaN());
    assertThat(samples).filteredOn(s -> s.name().equals("bucket")).singleElement()
        .satisfies(s -> assertThat(s.value()).isInfinite().isPositive());
    assertThat(samples).filteredOn(s -> s.name().equals("low")).singleElement()
        .satisfies(s -> assertThat(s.value()).isInfinite().isNegative());
  }

  @Test
  void saysSoWhenTheApiServerRestartedBetweenTheReadings() {
    ApiServerTraffic before = ApiServerTraffic.of(exposition(400, 10));
    ApiServerTraffic after = ApiServerTraffic.of(exposition(3, 10));
    assertThat(after.describeSince(before, 100))
        .isEqualTo("unknown (the API server's counters went back: it restarted, or they were reset)");
    ApiServerTraffic gone = ApiServerTraffic.of("");
    assertThat(gone.describeSince(before, 100)).as("a series gone since").startsWith("unknown");
  }
}
