package io.subrange.allocator.podcidr;

import java.util.Arrays;
import java.util.List;

/**
 * One term of a {@link NodeSelector}: every requirement in it must hold. A term without any
 * requirement matches no node, as in Kubernetes.
 *
 * <p>{@code matchExpressions} test labels. {@code matchFields} test fields of the Node, and
 * Kubernetes supports only {@code metadata.name} there, with {@code In} or {@code NotIn} and
 * exactly one value.
 */
public record NodeSelectorTerm(List<NodeSelectorRequirement> matchExpressions,
    List<NodeSelectorRequirement> matchFields) {

  /** The one field {@code matchFields} may test. */
  public static final String NAME_FIELD = "metadata.name";

  public NodeSelectorTerm {
    matchExpressions = matchExpressions == null ? List.of() : List.copyOf(matchExpressions);
    matchFields = matchFields == null ? List.of() : List.copyOf(matchFields);
    for (NodeSelectorRequirement field : matchFields) {
      if (!field.key().equals(NAME_FIELD)) {
        throw new IllegalArgumentException("matchFields supports only " + NAME_FIELD + ", not \"" + field.key() + "\"");
      }
      boolean inOrNotIn = field.operator() == NodeSelectorRequirement.Operator.IN
          || field.operator() == NodeSelectorRequirement.Operator.NOT_IN;
      if (!inOrNotIn || field.values().size() != 1) {
        throw new IllegalArgumentException("matchFields \"" + field + "\" must use In or NotIn with exactly one"
            + " node name");
      }
    }
  }

  /** A term of label requirements only. */
  public static NodeSelectorTerm of(NodeSelectorRequirement... matchExpressions) {
    return new NodeSelectorTerm(Arrays.asList(matchExpressions), List.of());
  }

  /** A term that selects one node by name. */
  public static NodeSelectorTerm forNodeNamed(String name) {
    return new NodeSelectorTerm(List.of(), List.of(NodeSelectorRequirement.in(NAME_FIELD, name)));
  }

  /** Number of requirements: label expressions plus field expressions. */
  public int requirementCount() {
    return matchExpressions.size() + matchFields.size();
  }

  public boolean matches(NodeView node) {
    if (requirementCount() == 0) {
      return false;
    }
    for (NodeSelectorRequirement expression : matchExpressions) {
      if (!expression.isSatisfiedBy(node.label(expression.key()))) {
        return false;
      }
    }
    for (NodeSelectorRequirement field : matchFields) {
      if (!field.isSatisfiedBy(node.name())) {
        return false;
      }
    }
    return true;
  }

  @Override
  public String toString() {
    StringBuilder text = new StringBuilder("{");
    matchExpressions.forEach(e -> text.append(text.length() > 1 ? ", " : "").append(e));
    matchFields.forEach(f -> text.append(text.length() > 1 ? ", " : "").append(f));
    return text.append('}').toString();
  }
}
