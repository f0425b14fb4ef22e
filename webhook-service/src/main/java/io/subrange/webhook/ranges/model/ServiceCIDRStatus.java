package io.subrange.webhook.ranges.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.List;
import java.util.Optional;

/**
 * What subrange observes about a {@link ServiceCIDR}: its {@link #READY} and
 * {@link #TERMINATING} conditions, and per-range usage in the order of {@code spec.cidrs}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public record ServiceCIDRStatus(List<Condition> conditions, List<ServiceCIDRUsage> usage) {

  /** True while subrange hands out addresses from the ranges. */
  public static final String READY = "Ready";
  /** True once deletion has started: nothing new is handed out, the finalizer holds the object. */
  public static final String TERMINATING = "Terminating";

  /** The condition of the given type, if present. */
  public Optional<Condition> condition(String type) {
    return conditions == null ? Optional.empty()
        : conditions.stream().filter(c -> type.equals(c.getType())).findFirst();
  }
}
