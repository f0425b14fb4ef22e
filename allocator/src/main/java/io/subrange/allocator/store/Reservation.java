package io.subrange.allocator.store;

import java.util.List;

/** What a {@link ReservationRequest} was granted, in claim order. */
public record Reservation(List<IpAssignment> ips, List<PortAssignment> ports) {

  public Reservation {
    ips = List.copyOf(ips);
    ports = List.copyOf(ports);
  }
}
