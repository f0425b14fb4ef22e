package io.subrange.allocator.store;

import java.util.List;
import java.util.Objects;

/**
 * Everything one object asks for in one admission request: granted together or not at all.
 *
 * @param ips ClusterIPs, in {@code spec.clusterIPs} order
 * @param ports NodePorts (one claim per distinct port, including healthCheckNodePort)
 * @param dryRun compute the answer as for a real request, and keep nothing
 */
public record ReservationRequest(Holder holder, List<IpClaim> ips, List<PortClaim> ports, boolean dryRun) {

  public ReservationRequest {
    Objects.requireNonNull(holder, "holder");
    ips = List.copyOf(ips);
    ports = List.copyOf(ports);
  }

  public static ReservationRequest ips(Holder holder, List<IpClaim> ips, boolean dryRun) {
    return new ReservationRequest(holder, ips, List.of(), dryRun);
  }
}
