package io.subrange.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.offset;

import io.subrange.testing.CostScenario.Measured;
import io.subrange.testing.CostScenario.Run;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class CostScenarioMeasuredTest {

  /** A run of {@code creates} creates in {@code seconds}, each taking {@code millis}, with this CPU per create. */
  private static Run run(int creates, double seconds, long millis, double webhooks, double reconciler,
      double apiServer) {
    List<ServiceLoad.Outcome> outcomes = IntStream.range(0, creates)
        .mapToObj(i -> new ServiceLoad.Outcome("svc-" + i, true, millis * 1_000_000, 1, null)).toList();
    return new Run(new ServiceLoad.Report(16, Duration.ofMillis((long) (seconds * 1000)), outcomes),
        Map.of(CpuUse.WEBHOOKS, webhooks, CpuUse.RECONCILER, reconciler, CpuUse.KUBE_APISERVER, apiServer));
  }

  @Test
  void eachFigureIsTheMedianOfTheRuns() {
    Measured measured = new Measured(List.of(
        run(100, 1.0, 50, 0.90, 0.10, 7.0),
        run(100, 2.0, 80, 0.60, 0.50, 9.0),
        run(100, 0.5, 60, 0.70, 0.20, 8.0)));

    assertThat(measured.cpu(CpuUse.WEBHOOKS)).isEqualTo(0.70);
    assertThat(measured.cpu(CpuUse.RECONCILER)).isEqualTo(0.20);
    // A sum is the median of each run's sum (1.00, 1.10, 0.90), not the sum of the medians (0.90).
    assertThat(measured.subrange()).isEqualTo(1.00);
    assertThat(measured.createsPerSecond()).isEqualTo(100.0);
    assertThat(measured.percentileMillis(99)).isEqualTo(60.0);
    assertThat(measured.spread(Run::webhookJvms)).isEqualTo("0.90 0.60 0.70: 0.70");
  }

  @Test
  void anEvenCountTakesTheMeanOfTheMiddleTwo() {
    Measured measured = new Measured(List.of(run(10, 1, 1, 0.4, 0, 1), run(10, 1, 1, 0.8, 0, 1),
        run(10, 1, 1, 0.6, 0, 1), run(10, 1, 1, 0.1, 0, 1)));
    assertThat(measured.cpu(CpuUse.WEBHOOKS)).isCloseTo(0.5, offset(1e-9));
  }

  @Test
  void twoStretchesOfOneConfigurationAreJudgedOnAllTheirRuns() {
    // The built-in before the webhooks ran fast, after them slow: the figure lies between.
    Measured before = new Measured(List.of(run(100, 1, 50, 0, 0, 4.0), run(90, 1, 50, 0, 0, 4.1),
        run(110, 1, 50, 0, 0, 3.9)));
    Measured after = new Measured(List.of(run(60, 1, 70, 0, 0, 5.3), run(70, 1, 90, 0, 0, 5.2),
        run(80, 1, 80, 0, 0, 5.1)));

    Measured both = before.with(after);

    assertThat(both.runs()).hasSize(6);
    assertThat(both.createsPerSecond()).isEqualTo(85.0);
    assertThat(both.cpu(CpuUse.KUBE_APISERVER)).isCloseTo(4.6, offset(1e-9));
    assertThat(both.spread(run -> run.report().createsPerSecond()))
        .isEqualTo("100.00 90.00 110.00 60.00 70.00 80.00: 85.00");
    assertThat(before.createsPerSecond()).isEqualTo(100.0);
  }

  @Test
  void oneRunIsItsOwnFigure() {
    Measured measured = new Measured(List.of(run(10, 1, 1, 0.42, 0, 1)));
    assertThat(measured.cpu(CpuUse.WEBHOOKS)).isEqualTo(0.42);
    assertThat(measured.spread(Run::webhookJvms)).isEqualTo("0.42");
  }

  @Test
  void aConfigurationIsMeasuredAtLeastOnce() {
    assertThatThrownBy(() -> new Measured(List.of())).isInstanceOf(IllegalArgumentException.class);
  }
}
