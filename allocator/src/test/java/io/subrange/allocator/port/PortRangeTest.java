package io.subrange.allocator.port;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PortRangeTest {

  @Test
  void parsesTheDefaultNodePortRange() {
    PortRange range = PortRange.parse("30000-32767");
    assertThat(range.size()).isEqualTo(2768);
    assertThat(range.contains(30000)).isTrue();
    assertThat(range.contains(32768)).isFalse();
    assertThat(range).hasToString("30000-32767");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "30000", "30000-", "-32767", "0-100", "100-65536", "32767-30000",
      "30000+2768", " 30000-32767", "a-b", "300000-300001"})
  void refusesWhatIsNotAnInclusiveRange(String text) {
    assertThatThrownBy(() -> PortRange.parse(text))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("\"" + text + "\" is not a port range");
  }
}
