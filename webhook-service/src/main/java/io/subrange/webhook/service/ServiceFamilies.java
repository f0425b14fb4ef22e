package io.subrange.webhook.service;

import io.subrange.allocator.net.IpFamily;
import java.util.List;
import java.util.Optional;

/**
 * The IP families subrange can give Service addresses in, primary first: the primary family is
 * what a Service gets when it does not ask (the first of {@code subrange.service.cidrs}).
 */
public record ServiceFamilies(List<IpFamily> configured) {

  public ServiceFamilies {
    configured = List.copyOf(configured);
    if (configured.isEmpty()) {
      throw new IllegalArgumentException("no Service IP family is configured");
    }
  }

  public IpFamily primary() {
    return configured.get(0);
  }

  public boolean has(IpFamily family) {
    return configured.contains(family);
  }

  public Optional<IpFamily> other(IpFamily family) {
    return configured.stream().filter(f -> f != family).findFirst();
  }
}
