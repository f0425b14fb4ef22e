package io.subrange.webhook.ranges.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * The ranges of a {@link ServiceCIDR}: one CIDR, or one IPv4 and one IPv6, as canonical text
 * ("10.96.0.0/12"). Immutable once created.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public record ServiceCIDRSpec(List<String> cidrs) {

  public static ServiceCIDRSpec of(String... cidrs) {
    return new ServiceCIDRSpec(List.of(cidrs));
  }
}
