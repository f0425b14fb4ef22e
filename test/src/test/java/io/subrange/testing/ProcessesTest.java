package io.subrange.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ProcessesTest {

  /**
   * Ports handed to JVMs that bind them seconds later: never from the range the kernel gives
   * outgoing connections their local ports from (where one could take it first), never twice.
   */
  @Test
  void freePortsAreOutsideTheEphemeralRangeAndNeverHandedOutTwice() throws IOException {
    int[] ephemeral = Processes.ephemeralRange();
    Set<Integer> seen = new HashSet<>();
    for (int i = 0; i < 300; i++) {
      int port = Processes.freePort();
      assertThat(port).as("outside the ephemeral range %d-%d", ephemeral[0], ephemeral[1])
          .satisfiesAnyOf(p -> assertThat(p).isLessThan(ephemeral[0]), p -> assertThat(p).isGreaterThan(ephemeral[1]));
      assertThat(port).isBetween(Processes.PORTS_FROM, Processes.PORTS_TO);
      assertThat(seen.add(port)).as("port %d handed out twice", port).isTrue();
    }
    try (ServerSocket socket = new ServerSocket()) {
      int port = Processes.freePort();
      socket.bind(new InetSocketAddress(port));
      assertThat(socket.getLocalPort()).isEqualTo(port);
    }
  }
}
