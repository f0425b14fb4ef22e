package io.subrange.testing;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The ClusterIPs and NodePorts Services carry, as the API server stores them, and how they
 * compare with what subrange's ConfigMaps hold ({@link StoredAllocations}): the checks behind
 * the replicated tests and the load harness. Values are strings (an address, or a port number);
 * holders are "namespace/name".
 */
public final class ServiceValues {

  private ServiceValues() {
  }

  /** Every value each Service carries, by Service. */
  public static Map<String, List<String>> byService(KubernetesClient client) {
    Map<String, List<String>> values = new TreeMap<>();
    for (Service service : client.services().inAnyNamespace().list().getItems()) {
      values.put(service.getMetadata().getNamespace() + "/" + service.getMetadata().getName(), values(service));
    }
    return values;
  }

  /** A Service's ClusterIPs (not "None") and NodePorts. */
  public static List<String> values(Service service) {
    List<String> values = new ArrayList<>();
    if (service.getSpec().getClusterIPs() != null) {
      service.getSpec().getClusterIPs().stream().filter(ip -> !ip.isEmpty() && !ip.equals("None"))
          .forEach(values::add);
    }
    for (ServicePort port : service.getSpec().getPorts()) {
      if (port.getNodePort() != null && port.getNodePort() > 0) {
        values.add(String.valueOf(port.getNodePort()));
      }
    }
    return values;
  }

  /** Values carried by more than one Service, each as "value on a and b". */
  public static List<String> duplicates(KubernetesClient client) {
    Map<String, String> seen = new HashMap<>();
    List<String> duplicates = new ArrayList<>();
    byService(client).forEach((name, values) -> {
      for (String value : values) {
        String other = seen.putIfAbsent(value, name);
        if (other != null && !other.equals(name)) {
          duplicates.add(value + " on " + other + " and " + name);
        }
      }
    });
    return duplicates;
  }

  /** Values the ConfigMaps hold that no Service carries, to their recorded holder. */
  public static Map<String, String> orphans(StoredAllocations stored, KubernetesClient client) {
    Map<String, String> carried = new HashMap<>();
    byService(client).forEach((name, values) -> values.forEach(value -> carried.put(value, name)));
    Map<String, String> orphans = new TreeMap<>();
    stored.clusterIps().forEach((ip, holder) -> {
      if (!carried.containsKey(ip)) {
        orphans.put(ip, holder);
      }
    });
    stored.nodePorts().forEach((port, holder) -> {
      if (!carried.containsKey(String.valueOf(port))) {
        orphans.put(String.valueOf(port), holder);
      }
    });
    return orphans;
  }

  /** Values Services carry that the ConfigMaps do not hold for them. */
  public static List<String> unaccounted(StoredAllocations stored, KubernetesClient client) {
    List<String> missing = new ArrayList<>();
    byService(client).forEach((name, values) -> {
      for (String value : values) {
        String held = value.contains(".") || value.contains(":") ? stored.clusterIps().get(value)
            : stored.nodePorts().get(Integer.parseInt(value));
        if (!name.equals(held)) {
          missing.add(name + " " + value + " (stored: " + held + ")");
        }
      }
    });
    return missing;
  }
}
