package io.subrange.allocator.podcidr;

import static org.assertj.core.api.Assertions.assertThat;

import io.subrange.allocator.podcidr.NodeSelectorRequirement.Operator;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** Laws of node selector matching, and that the selector index never misses a match. */
class NodeSelectorProperties {

  static final List<String> KEYS = List.of("zone", "pool", "gpu", "cores");
  static final List<String> VALUES = List.of("a", "b", "c", "1", "8", "16", "x1");
  static final List<String> NAMES = List.of("n0", "n1", "n2");

  static Arbitrary<NodeSelectorRequirement> requirements() {
    Arbitrary<String> key = Arbitraries.of(KEYS);
    Arbitrary<List<String>> values = Arbitraries.of(VALUES).list().ofMinSize(1).ofMaxSize(3);
    Arbitrary<Long> bound = Arbitraries.longs().between(-2, 20);
    return Arbitraries.oneOf(
        Combinators.combine(key, values).as((k, v) -> new NodeSelectorRequirement(k, Operator.IN, v)),
        Combinators.combine(key, values).as((k, v) -> new NodeSelectorRequirement(k, Operator.NOT_IN, v)),
        key.map(NodeSelectorRequirement::exists),
        key.map(NodeSelectorRequirement::doesNotExist),
        Combinators.combine(key, bound).as(NodeSelectorRequirement::gt),
        Combinators.combine(key, bound).as(NodeSelectorRequirement::lt));
  }

  static Arbitrary<NodeSelectorTerm> terms() {
    Arbitrary<NodeSelectorRequirement> field = Combinators.combine(Arbitraries.of(Operator.IN, Operator.NOT_IN),
        Arbitraries.of(NAMES))
        .as((op, name) -> new NodeSelectorRequirement(NodeSelectorTerm.NAME_FIELD, op, List.of(name)));
    return Combinators.combine(requirements().list().ofMaxSize(3), field.list().ofMaxSize(1))
        .as(NodeSelectorTerm::new);
  }

  static Arbitrary<NodeSelector> selectors() {
    return terms().list().ofMinSize(1).ofMaxSize(3).map(NodeSelector::new);
  }

  static Arbitrary<NodeView> nodes() {
    Arbitrary<Map<String, String>> labels = Arbitraries.maps(Arbitraries.of(KEYS), Arbitraries.of(VALUES)).ofMaxSize(4);
    return Combinators.combine(Arbitraries.of(NAMES), labels).as(NodeView::new);
  }

  @Provide
  Arbitrary<NodeSelector> selector() {
    return selectors();
  }

  @Provide
  Arbitrary<NodeSelectorTerm> term() {
    return terms();
  }

  @Provide
  Arbitrary<NodeView> node() {
    return nodes();
  }

  @Provide
  Arbitrary<NodeSelectorRequirement> requirement() {
    return requirements();
  }

  @Property(tries = 500)
  void termsAreOred(@ForAll("selector") NodeSelector selector, @ForAll("node") NodeView node) {
    boolean anyTerm = selector.nodeSelectorTerms().stream().anyMatch(t -> NodeSelector.of(t).matches(node));
    assertThat(selector.matches(node)).isEqualTo(anyTerm);
  }

  @Property(tries = 500)
  void requirementsInATermAreAnded(@ForAll("term") NodeSelectorTerm term, @ForAll("node") NodeView node) {
    boolean all = term.requirementCount() > 0
        && term.matchExpressions().stream().allMatch(r -> NodeSelectorTerm.of(r).matches(node))
        && term.matchFields().stream().allMatch(f -> new NodeSelectorTerm(List.of(), List.of(f)).matches(node));
    assertThat(term.matches(node)).isEqualTo(all);
  }

  @Property(tries = 500)
  void operatorsMeanWhatKubernetesSays(@ForAll("requirement") NodeSelectorRequirement r,
      @ForAll("node") NodeView node) {
    String value = node.label(r.key());
    boolean expected = switch (r.operator()) {
      case IN -> value != null && r.values().contains(value);
      case NOT_IN -> value == null || !r.values().contains(value);
      case EXISTS -> value != null;
      case DOES_NOT_EXIST -> value == null;
      case GT -> isInteger(value) && Long.parseLong(value) > Long.parseLong(r.values().get(0));
      case LT -> isInteger(value) && Long.parseLong(value) < Long.parseLong(r.values().get(0));
    };
    assertThat(NodeSelectorTerm.of(r).matches(node)).as(r + " on " + node.labels()).isEqualTo(expected);
  }

  private static boolean isInteger(String value) {
    return value != null && value.matches("-?[0-9]+");
  }

  @Property(tries = 500)
  void scoreIsTheLargestMatchingTerm(@ForAll("selector") NodeSelector selector, @ForAll("node") NodeView node) {
    int expected = selector.nodeSelectorTerms().stream().filter(t -> t.matches(node))
        .mapToInt(NodeSelectorTerm::requirementCount).max().orElse(-1);
    assertThat(selector.matchScore(node)).isEqualTo(expected);
    assertThat(selector.matches(node)).isEqualTo(expected > 0);
  }

  @Property(tries = 300)
  void theIndexReturnsEverySelectorThatMatches(@ForAll("selectorLists") List<NodeSelector> selectors,
      @ForAll("node") NodeView node, @ForAll("removals") List<Integer> removals) {
    SelectorIndex<Integer> index = new SelectorIndex<>();
    Set<Integer> present = new HashSet<>();
    for (int i = 0; i < selectors.size(); i++) {
      index.add(i, selectors.get(i));
      present.add(i);
    }
    for (int r : removals) {
      int i = Math.floorMod(r, Math.max(1, selectors.size()));
      if (present.remove(i)) {
        index.remove(i, selectors.get(i));
      }
    }
    List<Integer> candidates = new ArrayList<>();
    index.forEachCandidate(node, candidates::add);

    for (int i : present) {
      if (selectors.get(i).matches(node)) {
        assertThat(candidates).as("selector " + i + " " + selectors.get(i)).contains(i);
      }
    }
    assertThat(present).containsAll(candidates);
  }

  @Provide
  Arbitrary<List<NodeSelector>> selectorLists() {
    return selectors().list().ofMaxSize(12);
  }

  @Provide
  Arbitrary<List<Integer>> removals() {
    return Arbitraries.integers().between(0, 20).list().ofMaxSize(5);
  }
}
