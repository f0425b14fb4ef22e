package io.subrange.allocator.podcidr;

import io.subrange.allocator.podcidr.NodeSelectorRequirement.Operator;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Finds the items whose selector could match a node without evaluating every selector.
 *
 * <p>Each term of a selector gets an anchor: one requirement a matching node must satisfy
 * through a label it carries. {@code key In (v1, v2)} anchors on the label values
 * {@code key=v1} and {@code key=v2}; {@code metadata.name In (n)} on the node name; and
 * {@code Exists}, {@code Gt}, {@code Lt} on the key alone, since they too need the label
 * present. A term with only {@code NotIn} / {@code DoesNotExist} requirements can match a node
 * that carries none of the labels, so its item goes to a list that is always evaluated. Terms
 * without requirements match nothing and need no anchor.
 *
 * <p>A lookup returns a superset of the items that match; the caller evaluates each selector
 * fully. An item may be returned more than once (one per anchor hit). Not thread-safe.
 */
final class SelectorIndex<T> {

  private final Map<String, Map<String, List<T>>> byLabelValue = new HashMap<>();
  private final Map<String, List<T>> byLabelKey = new HashMap<>();
  private final Map<String, List<T>> byNodeName = new HashMap<>();
  private final List<T> unanchored = new ArrayList<>();

  void add(T item, NodeSelector selector) {
    List<Anchor> anchors = anchorsOf(selector);
    if (anchors == null) {
      unanchored.add(item);
      return;
    }
    for (Anchor anchor : anchors) {
      bucket(anchor, true).add(item);
    }
  }

  void remove(T item, NodeSelector selector) {
    List<Anchor> anchors = anchorsOf(selector);
    if (anchors == null) {
      unanchored.removeIf(x -> x == item);
      return;
    }
    for (Anchor anchor : anchors) {
      List<T> bucket = bucket(anchor, false);
      if (bucket != null) {
        bucket.removeIf(x -> x == item);
        if (bucket.isEmpty()) {
          dropEmpty(anchor);
        }
      }
    }
  }

  /** Calls {@code action} for every item whose selector might match {@code node}. */
  void forEachCandidate(NodeView node, Consumer<T> action) {
    for (Map.Entry<String, String> label : node.labels().entrySet()) {
      Map<String, List<T>> byValue = byLabelValue.get(label.getKey());
      if (byValue != null) {
        List<T> items = byValue.get(label.getValue());
        if (items != null) {
          items.forEach(action);
        }
      }
      List<T> items = byLabelKey.get(label.getKey());
      if (items != null) {
        items.forEach(action);
      }
    }
    List<T> named = byNodeName.get(node.name());
    if (named != null) {
      named.forEach(action);
    }
    unanchored.forEach(action);
  }

  private enum Kind { LABEL_VALUE, LABEL_KEY, NODE_NAME }

  private record Anchor(Kind kind, String key, String value) {
  }

  /** One or more anchors per non-empty term; null when some term cannot be anchored. */
  private static List<Anchor> anchorsOf(NodeSelector selector) {
    List<Anchor> anchors = new ArrayList<>();
    for (NodeSelectorTerm term : selector.nodeSelectorTerms()) {
      if (term.requirementCount() == 0) {
        continue;  // matches nothing
      }
      NodeSelectorRequirement in = null;
      NodeSelectorRequirement keyed = null;
      for (NodeSelectorRequirement r : term.matchExpressions()) {
        if (r.operator() == Operator.IN && (in == null || r.values().size() < in.values().size())) {
          in = r;
        } else if (keyed == null && (r.operator() == Operator.EXISTS || r.operator() == Operator.GT
            || r.operator() == Operator.LT)) {
          keyed = r;
        }
      }
      NodeSelectorRequirement name = term.matchFields().stream()
          .filter(f -> f.operator() == Operator.IN).findFirst().orElse(null);
      if (name != null && (in == null || in.values().size() > 1)) {
        anchors.add(new Anchor(Kind.NODE_NAME, null, name.values().get(0)));
      } else if (in != null) {
        for (String value : in.values()) {
          anchors.add(new Anchor(Kind.LABEL_VALUE, in.key(), value));
        }
      } else if (keyed != null) {
        anchors.add(new Anchor(Kind.LABEL_KEY, keyed.key(), null));
      } else {
        return null;
      }
    }
    return anchors;
  }

  private List<T> bucket(Anchor anchor, boolean create) {
    return switch (anchor.kind()) {
      case LABEL_VALUE -> {
        Map<String, List<T>> byValue = create
            ? byLabelValue.computeIfAbsent(anchor.key(), k -> new HashMap<>()) : byLabelValue.get(anchor.key());
        yield byValue == null ? null
            : create ? byValue.computeIfAbsent(anchor.value(), v -> new ArrayList<>()) : byValue.get(anchor.value());
      }
      case LABEL_KEY -> create ? byLabelKey.computeIfAbsent(anchor.key(), k -> new ArrayList<>())
          : byLabelKey.get(anchor.key());
      case NODE_NAME -> create ? byNodeName.computeIfAbsent(anchor.value(), k -> new ArrayList<>())
          : byNodeName.get(anchor.value());
    };
  }

  private void dropEmpty(Anchor anchor) {
    switch (anchor.kind()) {
      case LABEL_VALUE -> {
        Map<String, List<T>> byValue = byLabelValue.get(anchor.key());
        byValue.remove(anchor.value());
        if (byValue.isEmpty()) {
          byLabelValue.remove(anchor.key());
        }
      }
      case LABEL_KEY -> byLabelKey.remove(anchor.key());
      case NODE_NAME -> byNodeName.remove(anchor.value());
    }
  }
}
