package io.subrange.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class ThreadCpuTest {

  @Test
  void threadsAreSortedByWhatTheyDo() {
    assertThat(ThreadCpu.kindOf("reactor-http-ep")).isEqualTo("serving");
    assertThat(ThreadCpu.kindOf("subrange-store-")).isEqualTo("store committer");
    assertThat(ThreadCpu.kindOf("vert.x-eventloo")).isEqualTo("API client I/O");
    assertThat(ThreadCpu.kindOf("C1 CompilerThre")).isEqualTo("JIT");
    assertThat(ThreadCpu.kindOf("-1181756454-poo")).isEqualTo("watch events");  // cut at 15 characters
    assertThat(ThreadCpu.kindOf("-56565886-pool-")).isEqualTo("watch events");
    assertThat(ThreadCpu.kindOf("main")).isEqualTo("other");
  }

  /** This JVM's own threads: the CPU a loop on this thread burns shows up, per "create". */
  @Test
  void whatAThreadUsesIsCountedUnderItsKind() {
    List<ProcessHandle> self = List.of(ProcessHandle.current());
    ThreadCpu before = ThreadCpu.sample(self);
    long sum = 0;
    long until = System.nanoTime() + 300_000_000L;
    while (System.nanoTime() < until) {
      sum += Long.numberOfTrailingZeros(sum + System.nanoTime());
    }
    String described = ThreadCpu.sample(self).describeSince(before, 1);
    assertThat(described).as("after %d", sum).containsPattern("other (2|3)\\d\\d\\.\\d\\d");
  }
}
