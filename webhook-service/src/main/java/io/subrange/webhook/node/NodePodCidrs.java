package io.subrange.webhook.node;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSpec;
import io.subrange.allocator.net.AddressFormatException;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.podcidr.PodCidrAllocation;
import io.subrange.webhook.admission.AdmissionDenied;
import io.subrange.webhook.config.SubrangeProperties;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reading and writing a Node's {@code spec.podCIDR} / {@code spec.podCIDRs}, with the rules
 * Kubernetes has for them: {@code podCIDR == podCIDRs[0]}, at most one per family, set once and
 * never changed.
 */
public final class NodePodCidrs {

  private NodePodCidrs() {
  }

  /** The pod CIDRs a node carries as text (podCIDRs, or podCIDR alone), empty when none. */
  static List<String> carried(Node node) {
    NodeSpec spec = node == null ? null : node.getSpec();
    if (spec == null) {
      return List.of();
    }
    List<String> listed = spec.getPodCIDRs() == null ? List.of()
        : spec.getPodCIDRs().stream().filter(c -> c != null && !c.isEmpty()).toList();
    String single = spec.getPodCIDR() == null || spec.getPodCIDR().isEmpty() ? null : spec.getPodCIDR();
    if (single != null && !listed.isEmpty() && !single.equals(listed.get(0))) {
      throw AdmissionDenied.invalid("spec.podCIDRs[0]: \"" + listed.get(0) + "\" must equal spec.podCIDR \""
          + single + "\"");
    }
    return !listed.isEmpty() ? listed : single != null ? List.of(single) : List.of();
  }

  /** Parses carried pod CIDRs strictly; 422 naming the entry when one is malformed. */
  static List<Cidr> parse(List<String> carried) {
    if (carried.size() > 2) {
      throw AdmissionDenied.invalid("spec.podCIDRs: at most one CIDR per IP family, got " + carried);
    }
    List<Cidr> cidrs = new ArrayList<>();
    Set<IpFamily> families = EnumSet.noneOf(IpFamily.class);
    for (int i = 0; i < carried.size(); i++) {
      Cidr cidr;
      try {
        cidr = Cidr.parse(carried.get(i));
      } catch (AddressFormatException e) {
        throw AdmissionDenied.invalid("spec.podCIDRs[" + i + "]: " + e.getMessage());
      }
      if (!families.add(cidr.family())) {
        throw AdmissionDenied.invalid("spec.podCIDRs[" + i + "]: a second " + cidr.family()
            + " CIDR; a node has at most one per IP family");
      }
      cidrs.add(cidr);
    }
    return cidrs;
  }

  /** On update: once set, pod CIDRs never change; omitted ones come back from the stored node. */
  static void keepStored(Node node, Node old) {
    List<String> stored = carried(old);
    if (stored.isEmpty()) {
      return;
    }
    List<String> asked = carried(node);
    if (asked.isEmpty()) {
      write(node, stored);
      return;
    }
    if (!asked.equals(stored)) {
      throw AdmissionDenied.invalid("spec.podCIDRs: field is immutable once set: it is " + stored
          + " and cannot become " + asked);
    }
    write(node, stored);
  }

  /** The blocks of an allocation as a node carries them: {@code primary}'s family first. */
  public static List<String> inOrder(PodCidrAllocation allocation, IpFamily primary) {
    List<Cidr> blocks = new ArrayList<>(allocation.podCidrs());
    blocks.sort(Comparator.comparing(c -> c.family() == primary ? 0 : 1));
    return blocks.stream().map(Cidr::toString).toList();
  }

  /** The family a node's first pod CIDR has: the first cluster CIDR's, else the Services'. */
  public static IpFamily primaryFamily(SubrangeProperties properties) {
    return properties.pod().clusterCidrs().isEmpty() ? properties.service().primaryFamily()
        : properties.pod().clusterCidrs().get(0).family();
  }

  static void write(Node node, List<String> podCidrs) {
    if (node.getSpec() == null) {
      node.setSpec(new NodeSpec());
    }
    node.getSpec().setPodCIDRs(new ArrayList<>(podCidrs));
    node.getSpec().setPodCIDR(podCidrs.get(0));
  }

  /** The warning for pod CIDRs a node carries that no ClusterCIDR covers: kept, not managed. */
  static String unmanagedWarning(List<?> podCidrs, String nodeName) {
    return "subrange: pod CIDRs " + podCidrs + " of node " + nodeName + " are in no ClusterCIDR, so subrange does"
        + " not manage them";
  }

  /** The node as the pod CIDR engine sees it: name and labels (the engine's own Node type). */
  public static io.subrange.allocator.podcidr.NodeView view(Node node, String name) {
    Map<String, String> labels = node.getMetadata() == null || node.getMetadata().getLabels() == null
        ? Map.of() : node.getMetadata().getLabels();
    return new io.subrange.allocator.podcidr.NodeView(name, labels);
  }

  /** {@link #view(Node, String)} under the node's own name. */
  public static io.subrange.allocator.podcidr.NodeView view(Node node) {
    return view(node, node.getMetadata().getName());
  }
}
