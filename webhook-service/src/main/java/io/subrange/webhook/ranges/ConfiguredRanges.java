package io.subrange.webhook.ranges;

import io.subrange.allocator.ip.ServiceIpRange;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.podcidr.ClusterCidr;
import io.subrange.webhook.config.DefaultClusterCidr;
import io.subrange.webhook.config.SubrangeProperties;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ranges {@code subrange.*} describes, named as the objects kube-apiserver and the node IPAM
 * controller make from their flags: the ServiceCIDR {@value #SERVICE_CIDR_NAME} and the
 * ClusterCIDR {@value DefaultClusterCidr#NAME}.
 */
record ConfiguredRanges(List<Cidr> serviceCidrs, Optional<ClusterCidr> clusterCidr) {

  static final String SERVICE_CIDR_NAME = "kubernetes";
  private static final Logger log = LoggerFactory.getLogger(ConfiguredRanges.class);

  static ConfiguredRanges from(SubrangeProperties properties) {
    Optional<ClusterCidr> clusterCidr = DefaultClusterCidr.from(properties.pod());
    clusterCidr.flatMap(c -> DefaultClusterCidr.compromise(properties.pod(), c)).ifPresent(log::warn);
    return new ConfiguredRanges(properties.service().cidrs(), clusterCidr);
  }

  static void logServiceRange(String name, Cidr cidr) {
    ServiceIpRange range = ServiceIpRange.of(cidr);
    log.info("Service range {} {}: {} addresses, static band {} ({}), dynamic band {}", name, range.cidr(),
        Long.toUnsignedString(range.size()), range.describeStaticBand(), range.staticBandSize(),
        range.describeDynamicBand());
  }
}
