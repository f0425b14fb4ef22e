package io.subrange.allocator.podcidr;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Kubernetes' {@code NodeSelector} with its real semantics: the terms are ORed and the
 * requirements inside a term are ANDed. (The out-of-tree node-ipam-controller flattens all
 * terms into one AND; this does not.)
 *
 * <p>A ClusterCIDR without a selector is the fallback; that is a null {@code NodeSelector},
 * not an empty one, and like the API server this refuses a selector with no terms.
 */
public record NodeSelector(List<NodeSelectorTerm> nodeSelectorTerms) {

  public NodeSelector {
    nodeSelectorTerms = nodeSelectorTerms == null ? List.of() : List.copyOf(nodeSelectorTerms);
    if (nodeSelectorTerms.isEmpty()) {
      throw new IllegalArgumentException("a nodeSelector needs at least one term; a ClusterCIDR meant for every"
          + " node has no nodeSelector at all");
    }
  }

  public static NodeSelector of(NodeSelectorTerm... terms) {
    return new NodeSelector(Arrays.asList(terms));
  }

  /** One term requiring each label to have the given value ({@code key In (value)}). */
  public static NodeSelector requiringLabels(Map<String, String> labels) {
    List<NodeSelectorRequirement> requirements = new ArrayList<>();
    new TreeMap<>(labels).forEach((key, value) -> requirements.add(NodeSelectorRequirement.in(key, value)));
    return new NodeSelector(List.of(new NodeSelectorTerm(requirements, List.of())));
  }

  public boolean matches(NodeView node) {
    return matchScore(node) >= 0;
  }

  /**
   * How specifically this selects {@code node}: the requirement count of the matching term
   * that has the most requirements, or -1 when no term matches. Ranks ClusterCIDRs: a selector
   * that pins more of the node's labels is preferred.
   */
  public int matchScore(NodeView node) {
    int best = -1;
    for (NodeSelectorTerm term : nodeSelectorTerms) {
      if (term.requirementCount() > best && term.matches(node)) {
        best = term.requirementCount();
      }
    }
    return best;
  }

  @Override
  public String toString() {
    return nodeSelectorTerms.size() == 1 ? nodeSelectorTerms.get(0).toString()
        : String.join(" OR ", nodeSelectorTerms.stream().map(NodeSelectorTerm::toString).toList());
  }
}
