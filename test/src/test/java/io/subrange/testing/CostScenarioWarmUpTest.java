package io.subrange.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.subrange.testing.CostScenario.WarmUp;
import org.junit.jupiter.api.Test;

class CostScenarioWarmUpTest {

  @Test
  void replicasWarmUpAtLeastRTimesOneReplicasRoundsAndAtMostTwiceThat() {
    WarmUp three = new WarmUp(3, 12).forReplicas(3);

    assertThat(three.min()).isEqualTo(9);
    // The calls do not spread evenly: the least-called replica needs more than 3 x 12 rounds.
    assertThat(three.limit()).isEqualTo(72);
  }

  @Test
  void oneReplicaWarmsUpAsTheRuleSays() {
    assertThat(new WarmUp(3, 12).forReplicas(1)).isEqualTo(new WarmUp(3, 12));
  }
}
