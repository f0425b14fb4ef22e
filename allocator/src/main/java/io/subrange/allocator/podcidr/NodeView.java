package io.subrange.allocator.podcidr;

import java.util.Map;

/** What pod CIDR selection sees of a Kubernetes Node: its name and labels. */
public record NodeView(String name, Map<String, String> labels) {

  public NodeView {
    if (name == null || name.isEmpty()) {
      throw new IllegalArgumentException("a node needs a name");
    }
    labels = labels == null ? Map.of() : Map.copyOf(labels);
  }

  public static NodeView named(String name) {
    return new NodeView(name, Map.of());
  }

  /** The label's value, or null when the node does not carry it. */
  public String label(String key) {
    return labels.get(key);
  }
}
