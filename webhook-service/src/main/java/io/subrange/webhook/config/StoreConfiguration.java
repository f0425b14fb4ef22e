package io.subrange.webhook.config;

import io.subrange.allocator.ip.ServiceIpRange;
import io.subrange.allocator.store.AllocationStore;
import io.subrange.allocator.store.InMemoryAllocationStore;
import java.util.Random;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Builds the {@link AllocationStore} that {@code subrange.store} names. */
@Configuration(proxyBeanMethods = false)
class StoreConfiguration {

  private static final Logger log = LoggerFactory.getLogger(StoreConfiguration.class);

  @Bean
  AllocationStore allocationStore(SubrangeProperties properties) {
    var ranges = properties.service().cidrs().stream().map(ServiceIpRange::of).toList();
    for (ServiceIpRange range : ranges) {
      log.info("Service range {}: {} addresses, static band {} ({}), dynamic band {}", range.cidr(),
          range.size(), range.describeStaticBand(), range.staticBandSize(), range.describeDynamicBand());
    }
    return switch (properties.store()) {
      // Dynamic start offsets need only be spread out, not secret; java.util.Random is
      // thread-safe and seeds itself differently in every JVM.
      case MEMORY -> new InMemoryAllocationStore(ranges, new Random());
    };
  }
}
