package io.subrange.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.subrange.testing.CostScenario.WarmUp;
import java.util.List;
import org.junit.jupiter.api.Test;

class CostScenarioWarmUpTest {

  @Test
  void replicasWarmUpAtLeastRTimesOneReplicasRoundsAndAtMostTwiceThat() {
    WarmUp three = new WarmUp(3, 12).forSubrange(3);

    assertThat(three.min()).isEqualTo(9);
    // The calls do not spread evenly: the least-called replica needs more than 3 x 12 rounds.
    assertThat(three.limit()).isEqualTo(72);
  }

  @Test
  void oneReplicaWarmsUpAsLongAsThreeTimesTheLimit() {
    // Its compilers were still busy in the twelfth round and less so, not settled, in the 36th.
    assertThat(new WarmUp(3, 12).forSubrange(1)).isEqualTo(new WarmUp(3, 36));
  }

  @Test
  void moreReplicasWarmUpLonger() {
    WarmUp rule = new WarmUp(3, 12);
    for (int replicas = 2; replicas <= 5; replicas++) {
      assertThat(rule.forSubrange(replicas).min()).isGreaterThan(rule.forSubrange(replicas - 1).min());
      assertThat(rule.forSubrange(replicas).limit()).isGreaterThan(rule.forSubrange(replicas - 1).limit());
    }
  }

  @Test
  void oneQuietRoundAfterBusyOnesIsNotSettled() {
    // The thirty-sixth round's held run: 61 rounds at 0.035-0.515 ms, then one at 0.010.
    assertThat(WarmUp.settled(List.of(0.250, 0.105, 0.010))).isFalse();
    assertThat(WarmUp.settled(List.of(0.010, 0.020))).isFalse();
  }

  @Test
  void settlesAfterThreeQuietRoundsInARow() {
    assertThat(WarmUp.settled(List.of(0.885, 0.350, 0.020, 0.010, 0.000))).isTrue();
    assertThat(WarmUp.settled(List.of(0.020, 0.010, 0.035, 0.010, 0.020))).isFalse();
  }
}
