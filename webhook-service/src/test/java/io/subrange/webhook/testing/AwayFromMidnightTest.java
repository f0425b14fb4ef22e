package io.subrange.webhook.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.time.LocalTime;
import org.junit.jupiter.api.Test;

class AwayFromMidnightTest {

  @Test
  void everyHourOfTheDayBecomesSixInTheMorning() {
    for (int hour = 0; hour < 24; hour++) {
      Instant now = Instant.parse("2026-11-24T00:58:30Z").plusSeconds(hour * 3600L);
      assertThat(now.atOffset(AwayFromMidnight.zoneAt(now)).getHour()).as("at %s", now).isEqualTo(6);
    }
  }

  @Test
  void thisRunsLocalTimeIsFarFromMidnight() {
    // Registered as a launcher session listener: every test of this module runs with it.
    assertThat(LocalTime.now().getHour()).isBetween(6, 8);
  }
}
