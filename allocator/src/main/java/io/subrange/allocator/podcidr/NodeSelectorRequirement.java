package io.subrange.allocator.podcidr;

import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;

/**
 * One requirement of a {@link NodeSelectorTerm}, as Kubernetes' {@code NodeSelectorRequirement}:
 * a key, an operator and values, validated as the API server validates them.
 *
 * <p>{@code In} and {@code NotIn} need at least one value, {@code Exists} and
 * {@code DoesNotExist} none, {@code Gt} and {@code Lt} exactly one integer. A label value that
 * is not an integer never satisfies {@code Gt} or {@code Lt}; a node without the key satisfies
 * {@code NotIn} and {@code DoesNotExist} only.
 */
public record NodeSelectorRequirement(String key, Operator operator, List<String> values) {

  private static final Pattern ASCII_INTEGER = Pattern.compile("[+-]?[0-9]+");

  /** The operators, with the spelling Kubernetes uses. */
  public enum Operator {
    IN("In"),
    NOT_IN("NotIn"),
    EXISTS("Exists"),
    DOES_NOT_EXIST("DoesNotExist"),
    GT("Gt"),
    LT("Lt");

    private final String kubernetesName;

    Operator(String kubernetesName) {
      this.kubernetesName = kubernetesName;
    }

    public String kubernetesName() {
      return kubernetesName;
    }

    public static Operator fromKubernetesName(String name) {
      for (Operator operator : values()) {
        if (operator.kubernetesName.equals(name)) {
          return operator;
        }
      }
      throw new IllegalArgumentException("unknown node selector operator \"" + name
          + "\": expected In, NotIn, Exists, DoesNotExist, Gt or Lt");
    }

    @Override
    public String toString() {
      return kubernetesName;
    }
  }

  public NodeSelectorRequirement {
    if (key == null || key.isEmpty()) {
      throw new IllegalArgumentException("a node selector requirement needs a key");
    }
    if (operator == null) {
      throw new IllegalArgumentException("node selector requirement on \"" + key + "\" needs an operator");
    }
    values = values == null ? List.of() : List.copyOf(values);
    switch (operator) {
      case IN, NOT_IN -> {
        if (values.isEmpty()) {
          throw new IllegalArgumentException("node selector requirement \"" + key + " " + operator
              + "\" needs at least one value");
        }
      }
      case EXISTS, DOES_NOT_EXIST -> {
        if (!values.isEmpty()) {
          throw new IllegalArgumentException("node selector requirement \"" + key + " " + operator
              + "\" takes no values, got " + values);
        }
      }
      case GT, LT -> {
        if (values.size() != 1 || parseInteger(values.get(0)) == null) {
          throw new IllegalArgumentException("node selector requirement \"" + key + " " + operator
              + "\" needs exactly one integer value, got " + values);
        }
      }
    }
  }

  public static NodeSelectorRequirement in(String key, String... values) {
    return new NodeSelectorRequirement(key, Operator.IN, Arrays.asList(values));
  }

  public static NodeSelectorRequirement notIn(String key, String... values) {
    return new NodeSelectorRequirement(key, Operator.NOT_IN, Arrays.asList(values));
  }

  public static NodeSelectorRequirement exists(String key) {
    return new NodeSelectorRequirement(key, Operator.EXISTS, List.of());
  }

  public static NodeSelectorRequirement doesNotExist(String key) {
    return new NodeSelectorRequirement(key, Operator.DOES_NOT_EXIST, List.of());
  }

  public static NodeSelectorRequirement gt(String key, long value) {
    return new NodeSelectorRequirement(key, Operator.GT, List.of(Long.toString(value)));
  }

  public static NodeSelectorRequirement lt(String key, long value) {
    return new NodeSelectorRequirement(key, Operator.LT, List.of(Long.toString(value)));
  }

  /** Whether a label or field with this value satisfies the requirement; null means absent. */
  public boolean isSatisfiedBy(String value) {
    return switch (operator) {
      case IN -> value != null && values.contains(value);
      case NOT_IN -> value == null || !values.contains(value);
      case EXISTS -> value != null;
      case DOES_NOT_EXIST -> value == null;
      case GT -> compare(value) > 0;
      case LT -> compare(value) < 0;
    };
  }

  /** Sign of (value - bound), or 0 when the value is absent or not an integer (no match). */
  private int compare(String value) {
    Long number = value == null ? null : parseInteger(value);
    if (number == null) {
      return 0;
    }
    return Long.compare(number, parseInteger(values.get(0)));
  }

  /** A base-10 64-bit integer as Go's strconv.ParseInt reads it, or null. */
  private static Long parseInteger(String text) {
    if (!ASCII_INTEGER.matcher(text).matches()) {
      return null;  // Long.parseLong would also take non-ASCII digits
    }
    try {
      return Long.parseLong(text);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** "zone In (a, b)", "gpu Exists", "cores Gt 8". */
  @Override
  public String toString() {
    return switch (operator) {
      case EXISTS, DOES_NOT_EXIST -> key + " " + operator;
      case GT, LT -> key + " " + operator + " " + values.get(0);
      case IN, NOT_IN -> key + " " + operator + " (" + String.join(", ", values) + ")";
    };
  }
}
