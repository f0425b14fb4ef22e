package io.subrange.webhook.ranges;

import io.subrange.allocator.podcidr.NodeSelector;
import io.subrange.allocator.podcidr.NodeSelectorRequirement;
import io.subrange.allocator.podcidr.NodeSelectorRequirement.Operator;
import io.subrange.allocator.podcidr.NodeSelectorTerm;
import io.subrange.webhook.admission.KubernetesNames;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A ClusterCIDR's {@code nodeSelector}, checked as the API server checks a Pod's node affinity,
 * into the allocator's {@link NodeSelector}.
 */
final class NodeSelectorConversion {

  private static final Pattern INTEGER = Pattern.compile("[+-]?[0-9]+");
  private static final String OPERATORS = "In, NotIn, Exists, DoesNotExist, Gt or Lt";

  private NodeSelectorConversion() {
  }

  /** The selector, or null (the fallback) when {@code selector} is null. */
  static NodeSelector convert(String field, io.fabric8.kubernetes.api.model.NodeSelector selector) {
    if (selector == null) {
      return null;
    }
    String termsField = field + ".nodeSelectorTerms";
    List<io.fabric8.kubernetes.api.model.NodeSelectorTerm> terms = selector.getNodeSelectorTerms();
    if (terms == null || terms.isEmpty()) {
      throw new InvalidRangeObjectException(termsField, "a nodeSelector needs at least one term; to serve every"
          + " Node that no other ClusterCIDR selects, leave out " + field);
    }
    List<NodeSelectorTerm> converted = new ArrayList<>();
    for (int i = 0; i < terms.size(); i++) {
      converted.add(term(termsField + "[" + i + "]", terms.get(i)));
    }
    return new NodeSelector(converted);
  }

  private static NodeSelectorTerm term(String field, io.fabric8.kubernetes.api.model.NodeSelectorTerm term) {
    List<NodeSelectorRequirement> expressions = new ArrayList<>();
    List<NodeSelectorRequirement> fields = new ArrayList<>();
    if (term != null) {
      List<io.fabric8.kubernetes.api.model.NodeSelectorRequirement> matchExpressions = orEmpty(
          term.getMatchExpressions());
      for (int j = 0; j < matchExpressions.size(); j++) {
        expressions.add(labelRequirement(field + ".matchExpressions[" + j + "]", matchExpressions.get(j)));
      }
      List<io.fabric8.kubernetes.api.model.NodeSelectorRequirement> matchFields = orEmpty(term.getMatchFields());
      for (int j = 0; j < matchFields.size(); j++) {
        fields.add(fieldRequirement(field + ".matchFields[" + j + "]", matchFields.get(j)));
      }
    }
    try {
      return new NodeSelectorTerm(expressions, fields);
    } catch (IllegalArgumentException e) {
      throw new InvalidRangeObjectException(field, e.getMessage());  // checked above; kept as a safety net
    }
  }

  private static NodeSelectorRequirement labelRequirement(String field,
      io.fabric8.kubernetes.api.model.NodeSelectorRequirement requirement) {
    requireObject(field, requirement);
    String key = requirement.getKey();
    String keyProblem = KubernetesNames.labelKeyProblem(key);
    if (keyProblem != null) {
      throw new InvalidRangeObjectException(field + ".key", quote(key) + " is not a valid label key: " + keyProblem);
    }
    Operator operator = operator(field, requirement.getOperator());
    List<String> values = values(field, requirement);
    switch (operator) {
      case IN, NOT_IN -> {
        if (values.isEmpty()) {
          throw new InvalidRangeObjectException(field + ".values", "required when the operator is " + operator
              + ": give at least one value");
        }
      }
      case EXISTS, DOES_NOT_EXIST -> {
        if (!values.isEmpty()) {
          throw new InvalidRangeObjectException(field + ".values", "must be empty when the operator is " + operator
              + ", got " + quote(values));
        }
      }
      case GT, LT -> {
        if (values.size() != 1) {
          throw new InvalidRangeObjectException(field + ".values", operator + " needs exactly one value, an integer;"
              + " got " + quote(values));
        }
        if (!isInteger(values.get(0))) {
          throw new InvalidRangeObjectException(field + ".values[0]", quote(values.get(0)) + " is not an integer; "
              + operator + " compares the label's value with a whole number");
        }
      }
    }
    return new NodeSelectorRequirement(key, operator, values);
  }

  private static NodeSelectorRequirement fieldRequirement(String field,
      io.fabric8.kubernetes.api.model.NodeSelectorRequirement requirement) {
    requireObject(field, requirement);
    String key = requirement.getKey();
    if (!NodeSelectorTerm.NAME_FIELD.equals(key)) {
      throw new InvalidRangeObjectException(field + ".key", quote(key) + " cannot be tested: matchFields supports"
          + " only " + NodeSelectorTerm.NAME_FIELD + "; test labels in matchExpressions");
    }
    Operator operator = operator(field, requirement.getOperator());
    if (operator != Operator.IN && operator != Operator.NOT_IN) {
      throw new InvalidRangeObjectException(field + ".operator", operator + " is not supported in matchFields:"
          + " use In or NotIn with one Node name");
    }
    List<String> values = values(field, requirement);
    if (values.size() != 1) {
      throw new InvalidRangeObjectException(field + ".values", operator + " on " + NodeSelectorTerm.NAME_FIELD
          + " takes exactly one Node name, got " + quote(values) + "; use one term per Node");
    }
    String nameProblem = KubernetesNames.dnsSubdomainProblem(values.get(0));
    if (nameProblem != null) {
      throw new InvalidRangeObjectException(field + ".values[0]", quote(values.get(0)) + " is not a valid Node name:"
          + " it " + nameProblem);
    }
    return new NodeSelectorRequirement(key, operator, values);
  }

  private static void requireObject(String field, Object requirement) {
    if (requirement == null) {
      throw new InvalidRangeObjectException(field, "must be an object with key, operator and values");
    }
  }

  private static List<String> values(String field, io.fabric8.kubernetes.api.model.NodeSelectorRequirement requirement) {
    List<String> values = orEmpty(requirement.getValues());
    for (int k = 0; k < values.size(); k++) {
      if (values.get(k) == null) {
        throw new InvalidRangeObjectException(field + ".values[" + k + "]", "must be a string, not null");
      }
    }
    return values;
  }

  private static Operator operator(String field, String text) {
    if (text == null || text.isEmpty()) {
      throw new InvalidRangeObjectException(field + ".operator", "required: use " + OPERATORS);
    }
    try {
      return Operator.fromKubernetesName(text);
    } catch (IllegalArgumentException e) {
      throw new InvalidRangeObjectException(field + ".operator", quote(text) + " is not a node selector operator:"
          + " use " + OPERATORS);
    }
  }

  /** A base-10 64-bit integer as Kubernetes reads Gt and Lt values. */
  private static boolean isInteger(String text) {
    if (text == null || !INTEGER.matcher(text).matches()) {
      return false;
    }
    try {
      Long.parseLong(text);
      return true;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  private static <E> List<E> orEmpty(List<E> list) {
    return list == null ? List.of() : list;
  }

  private static String quote(String text) {
    return text == null ? "null" : "\"" + text + "\"";
  }

  private static String quote(List<String> values) {
    return values.stream().map(NodeSelectorConversion::quote).collect(Collectors.joining(", ", "[", "]"));
  }
}
