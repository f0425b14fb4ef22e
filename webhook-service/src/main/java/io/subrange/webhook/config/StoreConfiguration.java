package io.subrange.webhook.config;

import io.subrange.allocator.band.ThreadLocalRandomGenerator;
import io.subrange.allocator.ip.ServiceIpRange;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.store.AllocationStore;
import io.subrange.allocator.store.InMemoryAllocationStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Builds the {@link AllocationStore} that {@code subrange.store} names. */
@Configuration(proxyBeanMethods = false)
class StoreConfiguration {

  private static final Logger log = LoggerFactory.getLogger(StoreConfiguration.class);
  /**
   * The name of the Service ranges from subrange.service.cidrs (one per family), as
   * kube-apiserver names the ServiceCIDR it makes from its flags.
   */
  static final String DEFAULT_RANGE_NAME = "kubernetes";

  @Bean
  AllocationStore allocationStore(SubrangeProperties properties) {
    for (Cidr cidr : properties.service().cidrs()) {
      ServiceIpRange range = ServiceIpRange.of(cidr);
      log.info("Service range {}: {} addresses, static band {} ({}), dynamic band {}", range.cidr(),
          Long.toUnsignedString(range.size()), range.describeStaticBand(), range.staticBandSize(),
          range.describeDynamicBand());
    }
    return switch (properties.store()) {
      // Dynamic start offsets need only be spread out, not secret.
      case MEMORY -> {
        InMemoryAllocationStore store = new InMemoryAllocationStore(properties.service().nodePortRange(),
            ThreadLocalRandomGenerator.INSTANCE);
        properties.service().cidrs().forEach(cidr -> store.addServiceRange(DEFAULT_RANGE_NAME, cidr));
        DefaultClusterCidr.from(properties.pod()).ifPresent(clusterCidr -> {
          DefaultClusterCidr.compromise(properties.pod(), clusterCidr).ifPresent(log::warn);
          log.info("ClusterCIDR {}: {}", clusterCidr.name(), clusterCidr);
          store.addClusterCidr(clusterCidr);
        });
        yield store;
      }
    };
  }
}
