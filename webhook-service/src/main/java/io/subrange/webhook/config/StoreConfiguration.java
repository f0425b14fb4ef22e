package io.subrange.webhook.config;

import io.subrange.allocator.band.ThreadLocalRandomGenerator;
import io.subrange.allocator.store.AllocationStore;
import io.subrange.allocator.store.InMemoryAllocationStore;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Builds the {@link AllocationStore} that {@code subrange.store} names. */
@Configuration(proxyBeanMethods = false)
class StoreConfiguration {

  @Bean
  AllocationStore allocationStore(SubrangeProperties properties) {
    return switch (properties.store()) {
      // Dynamic start offsets need only be spread out, not secret.
      // Ranges are added by RangeSync: from the configuration, or from range objects.
      case MEMORY -> new InMemoryAllocationStore(properties.service().nodePortRange(),
          ThreadLocalRandomGenerator.INSTANCE);
    };
  }
}
