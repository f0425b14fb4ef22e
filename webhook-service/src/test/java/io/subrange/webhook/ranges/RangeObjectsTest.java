package io.subrange.webhook.ranges;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.NodeSelectorBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirementBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorTermBuilder;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.podcidr.ClusterCidr;
import io.subrange.allocator.podcidr.NodeView;
import io.subrange.allocator.podcidr.NodeSelector;
import io.subrange.allocator.podcidr.NodeSelectorRequirement;
import io.subrange.allocator.podcidr.NodeSelectorTerm;
import io.subrange.webhook.ranges.model.ClusterCIDR;
import io.subrange.webhook.ranges.model.ClusterCIDRSpec;
import io.subrange.webhook.ranges.model.ServiceCIDR;
import io.subrange.webhook.ranges.model.ServiceCIDRSpec;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RangeObjectsTest {

  @Test
  void aServiceCidrIsItsCidrsInSpecOrder() {
    ServiceCIDR object = new ServiceCIDR("kubernetes", ServiceCIDRSpec.of("fd00:10:96::/108", "10.96.0.0/12"));
    assertThat(RangeObjects.serviceCidrs(object))
        .containsExactly(Cidr.parse("fd00:10:96::/108"), Cidr.parse("10.96.0.0/12"));
    assertThat(RangeObjects.serviceCidrs(ServiceCIDRSpec.of("fd00::/64"))).containsExactly(Cidr.parse("fd00::/64"));
  }

  @Test
  void aServiceCidrThatCannotBeServedNamesTheField() {
    assertInvalid(() -> RangeObjects.serviceCidrs(new ServiceCIDR("x", null)), "spec.cidrs",
        "required: give one CIDR, such as \"10.96.0.0/12\", or one IPv4 and one IPv6 CIDR for dual-stack");
    assertInvalid(() -> RangeObjects.serviceCidrs(new ServiceCIDRSpec(null)), "spec.cidrs",
        "required: give one CIDR, such as \"10.96.0.0/12\", or one IPv4 and one IPv6 CIDR for dual-stack");
    assertInvalid(() -> RangeObjects.serviceCidrs(ServiceCIDRSpec.of("10.96.0.0/12", "10.97.0.0/16")),
        "spec.cidrs[1]", "10.97.0.0/16 is IPv4, like spec.cidrs[0] (10.96.0.0/12); a ServiceCIDR holds at most one"
            + " CIDR per IP family: put 10.97.0.0/16 in a ServiceCIDR of its own");
    assertInvalid(() -> RangeObjects.serviceCidrs(ServiceCIDRSpec.of("10.96.0.0/32")), "spec.cidrs[0]",
        "10.96.0.0/32 is too small for Services: it has no assignable address (use at most /30)");
    assertInvalid(() -> RangeObjects.serviceCidrs(ServiceCIDRSpec.of("010.96.0.1/12")), "spec.cidrs[0]",
        "\"010.96.0.1/12\" is not a CIDR: segment value starts with zero; write it as \"10.96.0.0/12\"");
    assertInvalid(() -> RangeObjects.serviceCidrs(ServiceCIDRSpec.of("10.96.0.0/12", "FD00::/108")), "spec.cidrs[1]",
        "\"FD00::/108\" is not in canonical form; write it as \"fd00::/108\"");
    assertInvalid(() -> RangeObjects.serviceCidrs(ServiceCIDRSpec.of("0x0a.96.0.0/12")), "spec.cidrs[0]",
        "\"0x0a.96.0.0/12\" is not a CIDR: segment value starts with zero");
  }

  @Test
  void aClusterCidrBecomesTheAllocatorsClusterCidr() {
    var selector = new NodeSelectorBuilder()
        .addToNodeSelectorTerms(new NodeSelectorTermBuilder()
            .addToMatchExpressions(new NodeSelectorRequirementBuilder().withKey("zone").withOperator("In")
                .withValues("a", "b").build())
            .addToMatchExpressions(new NodeSelectorRequirementBuilder().withKey("cores").withOperator("Gt")
                .withValues("8").build())
            .build())
        .addToNodeSelectorTerms(new NodeSelectorTermBuilder()
            .addToMatchFields(new NodeSelectorRequirementBuilder().withKey("metadata.name").withOperator("NotIn")
                .withValues("n1").build())
            .build())
        .build();
    ClusterCIDR object = new ClusterCIDR("pool", new ClusterCIDRSpec(selector, 8, "10.244.0.0/16", "fd00:10:244::/104"));

    ClusterCidr converted = RangeObjects.clusterCidr(object);

    assertThat(converted).isEqualTo(new ClusterCidr("pool", NodeSelector.of(
        NodeSelectorTerm.of(NodeSelectorRequirement.in("zone", "a", "b"), NodeSelectorRequirement.gt("cores", 8)),
        new NodeSelectorTerm(List.of(), List.of(NodeSelectorRequirement.notIn("metadata.name", "n1")))),
        8, Cidr.parse("10.244.0.0/16"), Cidr.parse("fd00:10:244::/104")));
    assertThat(converted.nodeSelector().matches(new NodeView("n2", Map.of("zone", "b")))).isTrue();
    assertThat(converted.nodeSelector().matches(new NodeView("n1", Map.of("zone", "b", "cores", "16")))).isTrue();
    assertThat(converted.nodeSelector().matches(new NodeView("n1", Map.of("zone", "b", "cores", "4")))).isFalse();
  }

  @Test
  void anEmptyRangeIsAbsentAndANullSelectorIsTheFallback() {
    ClusterCidr v6 = RangeObjects.clusterCidr(new ClusterCIDR("v6", new ClusterCIDRSpec(null, 64, "", "fd00::/48")));
    assertThat(v6.ipv4()).isNull();
    assertThat(v6.ipv6()).isEqualTo(Cidr.parse("fd00::/48"));
    assertThat(v6.isFallback()).isTrue();
    ClusterCidr v4 = RangeObjects.clusterCidr("v4", new ClusterCIDRSpec(null, 8, "10.0.0.0/8", null));
    assertThat(v4.ipv6()).isNull();
    assertThat(v4.nodePrefixLength(v4.ipv4().family())).isEqualTo(24);
  }

  @Test
  void aClusterCidrThatCannotBeUsedNamesTheField() {
    assertInvalid(() -> RangeObjects.clusterCidr(new ClusterCIDR(null, new ClusterCIDRSpec(null, 8, "10.0.0.0/8", null))),
        "metadata.name", "required");
    assertInvalid(() -> RangeObjects.clusterCidr("c", null), "spec",
        "required: give spec.perNodeHostBits and spec.ipv4, spec.ipv6 or both");
    assertInvalid(() -> RangeObjects.clusterCidr("c", new ClusterCIDRSpec(null, 8, "", null)), "spec",
        "give spec.ipv4, spec.ipv6 or both: without a range this ClusterCIDR has no pod CIDRs to hand out");
    assertInvalid(() -> RangeObjects.clusterCidr("c", new ClusterCIDRSpec(null, 8, null, "fd00::1/64")), "spec.ipv6",
        "\"fd00::1/64\" is not a CIDR: host bits are set (the network is fd00::/64)");
    assertInvalid(() -> RangeObjects.clusterCidr("c", new ClusterCIDRSpec(null, 8, "fd00::/64", null)), "spec.ipv4",
        "fd00::/64 is an IPv6 CIDR; spec.ipv4 takes IPv4 only: put it in spec.ipv6");
    assertInvalid(() -> RangeObjects.clusterCidr("c", new ClusterCIDRSpec(null, null, "10.0.0.0/8", null)),
        "spec.perNodeHostBits", "required: the host bits of each Node's block, at least 4 (8 gives a /24 from IPv4"
            + " and a /120 from IPv6)");
    assertInvalid(() -> RangeObjects.clusterCidr("c", new ClusterCIDRSpec(null, 200, "10.0.0.0/8", null)),
        "spec.perNodeHostBits", "200 does not fit spec.ipv4 10.0.0.0/8: a Node block would be larger than the range,"
            + " which has 24 host bits; use at most 24, or a larger range");
    assertInvalid(() -> RangeObjects.clusterCidr("c", new ClusterCIDRSpec(null, 63, null, "::/0")),
        "spec.perNodeHostBits", "63 splits spec.ipv6 ::/0 into 2^65 Node blocks (/65); at most 2^62 are supported:"
            + " use at least 66, or a smaller range");
    assertInvalid(() -> RangeObjects.clusterCidr("c", new ClusterCIDRSpec(
            new NodeSelectorBuilder().addNewNodeSelectorTerm().addNewMatchExpression().withKey("zone")
                .withOperator("In").withValues("a", null).endMatchExpression().endNodeSelectorTerm().build(),
            8, "10.0.0.0/8", null)),
        "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values[1]", "must be a string, not null");
  }

  @Test
  void guessesTheCanonicalFormOnlyWhenItIsSure() {
    assertInvalid(() -> RangeObjects.clusterCidr("c", new ClusterCIDRSpec(null, 8, "10.244.00.0/016", null)),
        "spec.ipv4", "\"10.244.00.0/016\" is not a CIDR: the prefix length must be a decimal number without leading"
            + " zeros; write it as \"10.244.0.0/16\"");
    assertInvalid(() -> RangeObjects.clusterCidr("c", new ClusterCIDRSpec(null, 64, null, "FD00::/0048")),
        "spec.ipv6", "\"FD00::/0048\" is not a CIDR: the prefix length must be a decimal number without leading"
            + " zeros; write it as \"fd00::/48\"");
    assertInvalid(() -> RangeObjects.clusterCidr("c", new ClusterCIDRSpec(null, 8, "10.244.300.0/16", null)),
        "spec.ipv4", "\"10.244.300.0/16\" is not a CIDR: " + causeOf("10.244.300.0/16"));
    assertInvalid(() -> RangeObjects.clusterCidr("c", new ClusterCIDRSpec(null, 8, "10.244.0.0/16 ", null)),
        "spec.ipv4", "\"10.244.0.0/16 \" is not a CIDR: it contains white space; write it as \"10.244.0.0/16\"");
  }

  private static String causeOf(String text) {
    try {
      Cidr.parse(text);
      throw new AssertionError(text + " parsed");
    } catch (IllegalArgumentException e) {
      return e.getMessage().substring(e.getMessage().indexOf(": ") + 2);
    }
  }

  private static void assertInvalid(Runnable conversion, String field, String problem) {
    assertThatThrownBy(conversion::run)
        .isInstanceOfSatisfying(InvalidRangeObjectException.class, e -> {
          assertThat(e.field()).isEqualTo(field);
          assertThat(e.problem()).isEqualTo(problem);
          assertThat(e.getMessage()).isEqualTo(field + ": " + problem);
        });
  }
}
