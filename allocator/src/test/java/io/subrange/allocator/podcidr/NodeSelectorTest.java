package io.subrange.allocator.podcidr;

import static io.subrange.allocator.podcidr.NodeSelectorRequirement.doesNotExist;
import static io.subrange.allocator.podcidr.NodeSelectorRequirement.exists;
import static io.subrange.allocator.podcidr.NodeSelectorRequirement.gt;
import static io.subrange.allocator.podcidr.NodeSelectorRequirement.in;
import static io.subrange.allocator.podcidr.NodeSelectorRequirement.lt;
import static io.subrange.allocator.podcidr.NodeSelectorRequirement.notIn;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.subrange.allocator.podcidr.NodeSelectorRequirement.Operator;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class NodeSelectorTest {

  private static NodeView node(String name, String... keyValues) {
    Map<String, String> labels = new HashMap<>();
    for (int i = 0; i < keyValues.length; i += 2) {
      labels.put(keyValues[i], keyValues[i + 1]);
    }
    return new NodeView(name, labels);
  }

  @Test
  void termsAreOredAndRequirementsInsideATermAnded() {
    NodeSelector selector = NodeSelector.of(
        NodeSelectorTerm.of(in("zone", "a"), exists("gpu")),
        NodeSelectorTerm.of(in("zone", "b")));

    assertThat(selector.matches(node("n1", "zone", "a", "gpu", "t4"))).isTrue();
    assertThat(selector.matches(node("n2", "zone", "a"))).as("first term needs both").isFalse();
    assertThat(selector.matches(node("n3", "zone", "b"))).as("second term alone").isTrue();
    assertThat(selector.matches(node("n4", "zone", "c", "gpu", "t4"))).isFalse();
  }

  @Test
  void termsAreNotFlattenedIntoOneAnd() {
    // Flattened, this would need zone to be a and b at once and match nothing.
    NodeSelector selector = NodeSelector.of(NodeSelectorTerm.of(in("zone", "a")), NodeSelectorTerm.of(in("zone", "b")));

    assertThat(selector.matches(node("n1", "zone", "a"))).isTrue();
    assertThat(selector.matches(node("n2", "zone", "b"))).isTrue();
  }

  @Test
  void anEmptyTermMatchesNothing() {
    NodeSelectorTerm empty = new NodeSelectorTerm(List.of(), List.of());

    assertThat(empty.matches(node("n1", "zone", "a"))).isFalse();
    assertThat(NodeSelector.of(empty).matches(node("n1"))).isFalse();
    assertThat(NodeSelector.of(empty, NodeSelectorTerm.of(in("zone", "a"))).matches(node("n1", "zone", "a"))).isTrue();
  }

  @Test
  void aSelectorNeedsATerm() {
    assertThatThrownBy(() -> new NodeSelector(List.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("a nodeSelector needs at least one term; a ClusterCIDR meant for every node has no nodeSelector"
            + " at all");
  }

  @ParameterizedTest
  @CsvSource(nullValues = "null", value = {
      // value of label "zone", In (a, b), NotIn (a, b), Exists, DoesNotExist
      "a,    true,  false, true,  false",
      "c,    false, true,  true,  false",
      "null, false, true,  false, true",
  })
  void setOperatorsFollowKubernetes(String zone, boolean expectIn, boolean expectNotIn, boolean expectExists,
      boolean expectDoesNotExist) {
    NodeView n = zone == null ? node("n") : node("n", "zone", zone);

    assertThat(NodeSelectorTerm.of(in("zone", "a", "b")).matches(n)).isEqualTo(expectIn);
    assertThat(NodeSelectorTerm.of(notIn("zone", "a", "b")).matches(n)).isEqualTo(expectNotIn);
    assertThat(NodeSelectorTerm.of(exists("zone")).matches(n)).isEqualTo(expectExists);
    assertThat(NodeSelectorTerm.of(doesNotExist("zone")).matches(n)).isEqualTo(expectDoesNotExist);
  }

  @ParameterizedTest
  @CsvSource(nullValues = "null", value = {
      // label "cores", matches Gt 8, matches Lt 8
      "16,   true,  false",
      "8,    false, false",
      "-3,   false, true",
      "+9,   true,  false",
      "007,  false, true",
      "abc,  false, false",
      "8.5,  false, false",
      "99999999999999999999, false, false",
      "٩,    false, false",
      "null, false, false",
  })
  void gtAndLtCompareIntegersAndNeverMatchOtherValues(String cores, boolean expectGt, boolean expectLt) {
    NodeView n = cores == null ? node("n") : node("n", "cores", cores);

    assertThat(NodeSelectorTerm.of(gt("cores", 8)).matches(n)).isEqualTo(expectGt);
    assertThat(NodeSelectorTerm.of(lt("cores", 8)).matches(n)).isEqualTo(expectLt);
  }

  @Test
  void matchFieldsSelectByNodeName() {
    NodeSelectorTerm named = NodeSelectorTerm.forNodeNamed("worker-1");
    NodeSelectorTerm notNamed = new NodeSelectorTerm(List.of(), List.of(notIn("metadata.name", "worker-1")));
    NodeSelectorTerm both = new NodeSelectorTerm(List.of(in("zone", "a")), List.of(in("metadata.name", "worker-1")));

    assertThat(named.matches(node("worker-1"))).isTrue();
    assertThat(named.matches(node("worker-2"))).isFalse();
    assertThat(notNamed.matches(node("worker-2"))).isTrue();
    assertThat(notNamed.matches(node("worker-1"))).isFalse();
    assertThat(both.matches(node("worker-1", "zone", "a"))).isTrue();
    assertThat(both.matches(node("worker-1", "zone", "b"))).isFalse();
    assertThat(named.matches(node("worker-2", "metadata.name", "worker-1"))).as("a field, not a label").isFalse();
  }

  @Test
  void matchFieldsAcceptOnlyTheNodeNameWithOneValue() {
    assertThatThrownBy(() -> new NodeSelectorTerm(List.of(), List.of(in("metadata.namespace", "x"))))
        .hasMessage("matchFields supports only metadata.name, not \"metadata.namespace\"");
    assertThatThrownBy(() -> new NodeSelectorTerm(List.of(), List.of(in("metadata.name", "a", "b"))))
        .hasMessage("matchFields \"metadata.name In (a, b)\" must use In or NotIn with exactly one node name");
    assertThatThrownBy(() -> new NodeSelectorTerm(List.of(), List.of(exists("metadata.name"))))
        .hasMessageContaining("must use In or NotIn");
  }

  @Test
  void requirementsAreValidatedAsTheApiServerDoes() {
    assertThatThrownBy(() -> in("zone"))
        .hasMessage("node selector requirement \"zone In\" needs at least one value");
    assertThatThrownBy(() -> new NodeSelectorRequirement("zone", Operator.EXISTS, List.of("a")))
        .hasMessage("node selector requirement \"zone Exists\" takes no values, got [a]");
    assertThatThrownBy(() -> new NodeSelectorRequirement("cores", Operator.GT, List.of("many")))
        .hasMessage("node selector requirement \"cores Gt\" needs exactly one integer value, got [many]");
    assertThatThrownBy(() -> new NodeSelectorRequirement("cores", Operator.LT, List.of("1", "2")))
        .hasMessageContaining("needs exactly one integer value");
    assertThatThrownBy(() -> new NodeSelectorRequirement("", Operator.EXISTS, List.of()))
        .hasMessage("a node selector requirement needs a key");
    assertThat(Operator.fromKubernetesName("DoesNotExist")).isEqualTo(Operator.DOES_NOT_EXIST);
    assertThatThrownBy(() -> Operator.fromKubernetesName("in")).hasMessageContaining("unknown node selector operator");
  }

  @Test
  void matchScoreIsTheRequirementCountOfTheBestMatchingTerm() {
    NodeSelector selector = NodeSelector.of(
        NodeSelectorTerm.of(in("rack", "r1")),
        NodeSelectorTerm.of(in("rack", "r1"), in("zone", "a"), exists("gpu")),
        new NodeSelectorTerm(List.of(in("rack", "r1")), List.of(in("metadata.name", "n1"))));

    assertThat(selector.matchScore(node("n9", "rack", "r1"))).isEqualTo(1);
    assertThat(selector.matchScore(node("n1", "rack", "r1"))).as("matchFields count").isEqualTo(2);
    assertThat(selector.matchScore(node("n9", "rack", "r1", "zone", "a", "gpu", "x"))).isEqualTo(3);
    assertThat(selector.matchScore(node("n9", "rack", "r2"))).isEqualTo(-1);
  }

  @Test
  void valuesAreCopiedSoTheSelectorIsImmutable() {
    List<String> values = new ArrayList<>(List.of("a"));
    NodeSelectorRequirement requirement = new NodeSelectorRequirement("zone", Operator.IN, values);
    values.add("b");

    assertThat(requirement.values()).containsExactly("a");
    assertThat(requirement).hasToString("zone In (a)");
    assertThat(NodeSelector.requiringLabels(Map.of("rack", "r1", "node", "n1")))
        .hasToString("{node In (n1), rack In (r1)}");
  }
}
