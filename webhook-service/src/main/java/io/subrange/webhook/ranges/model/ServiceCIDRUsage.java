package io.subrange.webhook.ranges.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.subrange.allocator.band.RangeUsage;

/**
 * How full one range of a {@link ServiceCIDR} is. Counts are unsigned decimal strings: a /64
 * holds 2^64-1 assignable addresses, more than a JSON int64 can carry, and all counts share
 * one form so readers parse them one way.
 *
 * @param size assignable addresses (the block minus network, and for IPv4 broadcast, address)
 * @param used addresses held, both bands
 * @param free {@code size - used}
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonPropertyOrder({"cidr", "size", "used", "free", "staticBandUsed", "dynamicBandUsed"})
public record ServiceCIDRUsage(String cidr, String size, String used, String free, String staticBandUsed,
    String dynamicBandUsed) {

  /** The usage the store reports for one range. */
  public static ServiceCIDRUsage of(RangeUsage usage) {
    return new ServiceCIDRUsage(usage.range(), Long.toUnsignedString(usage.size()),
        Long.toUnsignedString(usage.used()), Long.toUnsignedString(usage.free()),
        Long.toUnsignedString(usage.usedInStaticBand()), Long.toUnsignedString(usage.usedInDynamicBand()));
  }
}
