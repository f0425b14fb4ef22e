package io.subrange.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class PacingTest {

  @Test
  void theIthCreateStartsNoEarlierThanIOverTheRate() {
    Pacing hundred = new Pacing(100);

    assertThat(hundred.notBeforeNanos(5_000, 0)).isEqualTo(5_000);
    assertThat(hundred.notBeforeNanos(5_000, 1)).isEqualTo(5_000 + 10_000_000);
    assertThat(hundred.notBeforeNanos(5_000, 2000)).isEqualTo(5_000 + 20_000_000_000L);
  }

  @Test
  void noRateStartsEveryCreateAtOnce() {
    assertThat(Pacing.NONE.notBeforeNanos(5_000, 1999)).isEqualTo(5_000);
    assertThat(Pacing.NONE).hasToString("as fast as answered");
  }

  @Test
  void aNegativeOrNonNumericRateIsRefused() {
    assertThatThrownBy(() -> new Pacing(-1)).hasMessageContaining("not -1");
    assertThatThrownBy(() -> new Pacing(Double.NaN)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new Pacing(Double.POSITIVE_INFINITY)).isInstanceOf(IllegalArgumentException.class);
  }
}
