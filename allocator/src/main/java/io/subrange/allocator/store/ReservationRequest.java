package io.subrange.allocator.store;

import java.util.List;
import java.util.Objects;

/**
 * Everything one object asks for in one admission request: granted together or not at all.
 *
 * @param ips ClusterIPs, in {@code spec.clusterIPs} order
 * @param ports NodePorts (one claim per distinct port, including healthCheckNodePort)
 * @param dryRun compute the answer as for a real request, and keep nothing
 * @param reservedAheadIsHeld a specific value held by a replica's reservation ahead
 *     ({@link Holder#isReservedAhead}) counts as already held by this object, and is left as it
 *     is: the validating webhook's check of a Service whose values a replica handed out from its
 *     reservations and has not named it the holder of yet (that replica does so shortly, and
 *     gives each value once)
 */
public record ReservationRequest(Holder holder, List<IpClaim> ips, List<PortClaim> ports, boolean dryRun,
    boolean reservedAheadIsHeld) {

  public ReservationRequest {
    Objects.requireNonNull(holder, "holder");
    ips = List.copyOf(ips);
    ports = List.copyOf(ports);
  }

  public ReservationRequest(Holder holder, List<IpClaim> ips, List<PortClaim> ports, boolean dryRun) {
    this(holder, ips, ports, dryRun, false);
  }

  public static ReservationRequest ips(Holder holder, List<IpClaim> ips, boolean dryRun) {
    return new ReservationRequest(holder, ips, List.of(), dryRun);
  }

  /** This request, with values reserved ahead counting as held by its object (see {@link #reservedAheadIsHeld}). */
  public ReservationRequest withReservedAheadAsHeld() {
    return new ReservationRequest(holder, ips, ports, dryRun, true);
  }

  /** True when every claim asks for any value (none names one). */
  public boolean allDynamic() {
    return ips.stream().allMatch(c -> c.scope() == Scope.DYNAMIC)
        && ports.stream().allMatch(c -> c.scope() == Scope.DYNAMIC);
  }
}
