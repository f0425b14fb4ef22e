package io.subrange.webhook.reconciler;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.subrange.allocator.net.AddressFormatException;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.store.Holder;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** What objects in the cluster carry: the values the store must hold for them. */
final class Carried {

  private Carried() {
  }

  static Holder holder(Service service) {
    return Holder.service(service.getMetadata().getNamespace(), service.getMetadata().getName(),
        service.getMetadata().getUid());
  }

  /** A Service's ClusterIPs ({@code clusterIPs}, or {@code clusterIP} alone), without "None". */
  static List<IpAddress> clusterIps(Service service) {
    Set<String> texts = new LinkedHashSet<>();
    if (service.getSpec() == null) {
      return List.of();
    }
    if (service.getSpec().getClusterIPs() != null) {
      texts.addAll(service.getSpec().getClusterIPs());
    }
    if (service.getSpec().getClusterIP() != null) {
      texts.add(service.getSpec().getClusterIP());
    }
    List<IpAddress> addresses = new ArrayList<>();
    for (String text : texts) {
      if (text == null || text.isEmpty() || text.equals("None")) {
        continue;
      }
      try {
        addresses.add(IpAddress.parse(text));
      } catch (AddressFormatException e) {
        // not an address subrange could hold; the API server validated it, so never seen in practice
      }
    }
    return addresses;
  }

  /** A Service's NodePorts and healthCheckNodePort, each once. */
  static Set<Integer> nodePorts(Service service) {
    Set<Integer> ports = new LinkedHashSet<>();
    if (service.getSpec() == null) {
      return ports;
    }
    if (service.getSpec().getPorts() != null) {
      for (ServicePort port : service.getSpec().getPorts()) {
        if (port.getNodePort() != null && port.getNodePort() > 0) {
          ports.add(port.getNodePort());
        }
      }
    }
    Integer health = service.getSpec().getHealthCheckNodePort();
    if (health != null && health > 0) {
      ports.add(health);
    }
    return ports;
  }

  /** A Node's pod CIDRs ({@code podCIDRs}, or {@code podCIDR} alone). */
  static List<Cidr> podCidrs(Node node) {
    List<String> texts = new ArrayList<>();
    if (node.getSpec() != null && node.getSpec().getPodCIDRs() != null && !node.getSpec().getPodCIDRs().isEmpty()) {
      texts.addAll(node.getSpec().getPodCIDRs());
    } else if (node.getSpec() != null && node.getSpec().getPodCIDR() != null && !node.getSpec().getPodCIDR().isEmpty()) {
      texts.add(node.getSpec().getPodCIDR());
    }
    List<Cidr> cidrs = new ArrayList<>();
    for (String text : texts) {
      try {
        cidrs.add(Cidr.parse(text));
      } catch (AddressFormatException e) {
        return List.of();
      }
    }
    return cidrs;
  }
}
