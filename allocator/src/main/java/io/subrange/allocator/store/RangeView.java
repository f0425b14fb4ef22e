package io.subrange.allocator.store;

import io.subrange.allocator.band.RangeUsage;
import java.util.List;

/**
 * A read-only picture of one range for people (the /ranges view, ServiceCIDR status): its
 * bands, how full each is, and who holds the values in its static band.
 *
 * @param kind what the range hands out
 * @param name the range's name (its ServiceCIDR or ClusterCIDR name; "nodeports" for NodePorts)
 * @param range the range as text: "10.96.0.0/12", "30000-32767"
 * @param family "IPv4", "IPv6", or "" for ports
 * @param staticBand first-last of the static band as text, or "none"
 * @param dynamicBand first-last of the dynamic band as text
 * @param usage counts (unsigned for huge IPv6 ranges)
 * @param terminating true while the range is being deleted
 * @param staticHolders who holds each taken value of the static band, in value order
 */
public record RangeView(Kind kind, String name, String range, String family, String staticBand, String dynamicBand,
    RangeUsage usage, boolean terminating, List<HeldValue> staticHolders) {

  public enum Kind { SERVICE_IPS, NODE_PORTS }

  /** A value and who holds it ("kube-system/kube-dns"; "unknown" when the store does not know). */
  public record HeldValue(String value, String holder) {
  }

  public RangeView {
    staticHolders = List.copyOf(staticHolders);
  }
}
