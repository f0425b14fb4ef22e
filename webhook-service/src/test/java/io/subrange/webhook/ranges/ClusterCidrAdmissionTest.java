package io.subrange.webhook.ranges;

import static io.subrange.webhook.ranges.RangeReviews.assertAllowed;
import static io.subrange.webhook.ranges.RangeReviews.assertInvalid;
import static io.subrange.webhook.ranges.RangeReviews.clusterCidr;
import static io.subrange.webhook.ranges.RangeReviews.parse;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.web.reactive.server.WebTestClient;

/** ClusterCIDR CREATE and UPDATE through /validate over real HTTP. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "server.ssl.enabled=false",
    "management.server.port=0"})
class ClusterCidrAdmissionTest {

  private static final String RECREATE = "; every field of a ClusterCIDR is fixed at creation: create a new"
      + " ClusterCIDR and delete this one";

  @Autowired
  WebTestClient client;

  RangeReviews reviews;

  @BeforeEach
  void setUp() {
    reviews = new RangeReviews(client);
  }

  /** A ClusterCIDR with this nodeSelector (JSON) and an IPv4 range. */
  private static ObjectNode selecting(String nodeSelector) {
    ObjectNode object = clusterCidr("selective", 8, "10.244.0.0/16", null);
    ((ObjectNode) object.path("spec")).set("nodeSelector", parse(nodeSelector));
    return object;
  }

  private static String term(String matchExpression) {
    return "{\"nodeSelectorTerms\": [{\"matchExpressions\": [" + matchExpression + "]}]}";
  }

  private static String fieldTerm(String matchField) {
    return "{\"nodeSelectorTerms\": [{\"matchFields\": [" + matchField + "]}]}";
  }

  @Test
  void allowsEachFamilyAndDualStack() {
    assertAllowed(reviews.create(clusterCidr("v4", 8, "10.244.0.0/16", null)));
    assertAllowed(reviews.create(clusterCidr("v6", 16, null, "fd00:10:244::/104")));
    assertAllowed(reviews.create(clusterCidr("dual", 8, "10.244.0.0/16", "fd00:10:244::/104")));
    assertAllowed(reviews.create(clusterCidr("whole", 4, "10.0.0.0/28", null)));
    assertAllowed(reviews.create(clusterCidr("deep", 64, null, "2001:db8::/32")));
  }

  @Test
  void readsAnEmptyRangeAsAbsentAsNodeIpamControllerDoes() {
    assertAllowed(reviews.create(clusterCidr("v4", 8, "10.244.0.0/16", "")));
    assertAllowed(reviews.create(clusterCidr("v6", 8, "", "fd00:10:244::/104")));
    assertInvalid(reviews.create(clusterCidr("none", 8, "", "")),
        "spec: give spec.ipv4, spec.ipv6 or both: without a range this ClusterCIDR has no pod CIDRs to hand out");
    assertInvalid(reviews.create(clusterCidr("none", 8, null, null)),
        "spec: give spec.ipv4, spec.ipv6 or both: without a range this ClusterCIDR has no pod CIDRs to hand out");
  }

  @Test
  void allowsEveryValidSelectorFromAGeneratedName() {
    ObjectNode object = selecting("""
        {"nodeSelectorTerms": [
          {"matchExpressions": [
             {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a", "b"]},
             {"key": "tier", "operator": "NotIn", "values": ["edge"]},
             {"key": "gpu", "operator": "Exists"},
             {"key": "example.com/spot", "operator": "DoesNotExist", "values": []},
             {"key": "cores", "operator": "Gt", "values": ["8"]},
             {"key": "memory-gb", "operator": "Lt", "values": ["-1"]}]},
          {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1.example"]}]},
          {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["node-2"]}],
           "matchExpressions": [{"key": "pool", "operator": "In", "values": ["x"]}]}]}""");
    ((ObjectNode) object.path("metadata")).remove("name");
    ((ObjectNode) object.path("metadata")).put("generateName", "pool-");
    assertAllowed(reviews.create(object));
  }

  @Test
  void warnsAboutATermThatMatchesNoNode() {
    JsonNode response = reviews.create(selecting("{\"nodeSelectorTerms\": [{\"matchExpressions\": []}, {}]}"));
    assertAllowed(response);
    assertThat(response.path("warnings")).extracting(JsonNode::asText).containsExactly(
        "spec.nodeSelector.nodeSelectorTerms[0] has no requirements and so matches no Node",
        "spec.nodeSelector.nodeSelectorTerms[1] has no requirements and so matches no Node");
  }

  @Test
  void deniesRangesThatAreWrongOrOfTheWrongFamily() {
    assertInvalid(reviews.create(clusterCidr("c", 8, "10.244.0.1/16", null)),
        "spec.ipv4: \"10.244.0.1/16\" is not a CIDR: host bits are set (the network is 10.244.0.0/16)");
    assertInvalid(reviews.create(clusterCidr("c", 8, null, "FD00:10:244::/56")),
        "spec.ipv6: \"FD00:10:244::/56\" is not in canonical form; write it as \"fd00:10:244::/56\"");
    assertInvalid(reviews.create(clusterCidr("c", 8, "10.244.000.0/16", null)),
        "spec.ipv4: \"10.244.000.0/16\" is not a CIDR: segment value starts with zero;"
            + " write it as \"10.244.0.0/16\"");
    assertInvalid(reviews.create(clusterCidr("c", 8, "fd00::/48", null)),
        "spec.ipv4: fd00::/48 is an IPv6 CIDR; spec.ipv4 takes IPv4 only: put it in spec.ipv6");
    assertInvalid(reviews.create(clusterCidr("c", 8, "10.244.0.0/16", "10.245.0.0/16")),
        "spec.ipv6: 10.245.0.0/16 is an IPv4 CIDR; spec.ipv6 takes IPv6 only: put it in spec.ipv4");
    assertInvalid(reviews.create(clusterCidr("c", 8, "10.244.0.0", null)),
        "spec.ipv4: \"10.244.0.0\" is not a CIDR: the prefix length (/n) is missing");
  }

  @Test
  void deniesNodeBlocksThatAreMissingTooSmallOrDoNotFit() {
    assertInvalid(reviews.create(clusterCidr("b", null, "10.244.0.0/16", null)),
        "spec.perNodeHostBits: required: the host bits of each Node's block, at least 4 (8 gives a /24 from IPv4"
            + " and a /120 from IPv6)");
    assertInvalid(reviews.create(clusterCidr("b", 3, "10.244.0.0/16", null)),
        "spec.perNodeHostBits: 3 is below the minimum of 4 (16 addresses per Node)");
    assertInvalid(reviews.create(clusterCidr("b", -8, "10.244.0.0/16", null)),
        "spec.perNodeHostBits: -8 is below the minimum of 4 (16 addresses per Node)");
    assertInvalid(reviews.create(clusterCidr("b", 9, "10.244.0.0/24", "fd00::/64")),
        "spec.perNodeHostBits: 9 does not fit spec.ipv4 10.244.0.0/24: a Node block would be larger than the"
            + " range, which has 8 host bits; use at most 8, or a larger range");
    assertInvalid(reviews.create(clusterCidr("b", 24, "10.0.0.0/8", "fd00::/112")),
        "spec.perNodeHostBits: 24 does not fit spec.ipv6 fd00::/112: a Node block would be larger than the"
            + " range, which has 16 host bits; use at most 16, or a larger range");
    assertInvalid(reviews.create(clusterCidr("b", 4, null, "fd00::/48")),
        "spec.perNodeHostBits: 4 splits spec.ipv6 fd00::/48 into 2^76 Node blocks (/124); at most 2^62 are"
            + " supported: use at least 18, or a smaller range");
    assertAllowed(reviews.create(clusterCidr("b", 18, null, "fd00::/48")));
  }

  @Test
  void deniesAnEmptySelector() {
    String message = "spec.nodeSelector.nodeSelectorTerms: a nodeSelector needs at least one term; to serve every"
        + " Node that no other ClusterCIDR selects, leave out spec.nodeSelector";
    assertInvalid(reviews.create(selecting("{}")), message);
    assertInvalid(reviews.create(selecting("{\"nodeSelectorTerms\": []}")), message);
  }

  @Test
  void deniesLabelRequirementsTheApiServerWouldRefuse() {
    String at = "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0]";
    assertInvalid(reviews.create(selecting(term("{\"key\": \"zone\", \"operator\": \"In\"}"))),
        at + ".values: required when the operator is In: give at least one value");
    assertInvalid(reviews.create(selecting(term("{\"key\": \"zone\", \"operator\": \"NotIn\", \"values\": []}"))),
        at + ".values: required when the operator is NotIn: give at least one value");
    assertInvalid(reviews.create(selecting(term("{\"key\": \"gpu\", \"operator\": \"Exists\", \"values\": [\"x\"]}"))),
        at + ".values: must be empty when the operator is Exists, got [\"x\"]");
    assertInvalid(reviews.create(selecting(term(
            "{\"key\": \"gpu\", \"operator\": \"DoesNotExist\", \"values\": [\"x\", \"y\"]}"))),
        at + ".values: must be empty when the operator is DoesNotExist, got [\"x\", \"y\"]");
    assertInvalid(reviews.create(selecting(term("{\"key\": \"cores\", \"operator\": \"Gt\", \"values\": [\"8\", \"9\"]}"))),
        at + ".values: Gt needs exactly one value, an integer; got [\"8\", \"9\"]");
    assertInvalid(reviews.create(selecting(term("{\"key\": \"cores\", \"operator\": \"Lt\"}"))),
        at + ".values: Lt needs exactly one value, an integer; got []");
    assertInvalid(reviews.create(selecting(term("{\"key\": \"cores\", \"operator\": \"Gt\", \"values\": [\"8.5\"]}"))),
        at + ".values[0]: \"8.5\" is not an integer; Gt compares the label's value with a whole number");
    assertInvalid(reviews.create(selecting(term("{\"key\": \"zone\", \"operator\": \"Equals\", \"values\": [\"a\"]}"))),
        at + ".operator: \"Equals\" is not a node selector operator: use In, NotIn, Exists, DoesNotExist, Gt or Lt");
    assertInvalid(reviews.create(selecting(term("{\"key\": \"zone\", \"operator\": \"in\", \"values\": [\"a\"]}"))),
        at + ".operator: \"in\" is not a node selector operator: use In, NotIn, Exists, DoesNotExist, Gt or Lt");
    assertInvalid(reviews.create(selecting(term("{\"key\": \"zone\", \"values\": [\"a\"]}"))),
        at + ".operator: required: use In, NotIn, Exists, DoesNotExist, Gt or Lt");
    assertInvalid(reviews.create(selecting(term("{\"key\": \"-zone\", \"operator\": \"Exists\"}"))),
        at + ".key: \"-zone\" is not a valid label key: the name part must consist of letters, digits, '-', '_'"
            + " or '.', and start and end with a letter or digit");
    assertInvalid(reviews.create(selecting(term("{\"key\": \"Example.com/zone\", \"operator\": \"Exists\"}"))),
        at + ".key: \"Example.com/zone\" is not a valid label key: the prefix \"Example.com\" must consist of lower"
            + " case letters, digits, '-' or '.', and start and end with a letter or digit");
    assertInvalid(reviews.create(selecting(term("{\"key\": \"a/b/c\", \"operator\": \"Exists\"}"))),
        at + ".key: \"a/b/c\" is not a valid label key: a label key is a name with an optional DNS subdomain"
            + " prefix and one \"/\", such as \"topology.kubernetes.io/zone\"");
    assertInvalid(reviews.create(selecting(term("{\"operator\": \"Exists\"}"))),
        at + ".key: null is not a valid label key: a label key must not be empty");
  }

  @Test
  void deniesFieldRequirementsOtherThanOneNodeName() {
    String at = "spec.nodeSelector.nodeSelectorTerms[0].matchFields[0]";
    assertInvalid(reviews.create(selecting(fieldTerm(
            "{\"key\": \"metadata.labels\", \"operator\": \"In\", \"values\": [\"a\"]}"))),
        at + ".key: \"metadata.labels\" cannot be tested: matchFields supports only metadata.name; test labels in"
            + " matchExpressions");
    assertInvalid(reviews.create(selecting(fieldTerm("{\"key\": \"metadata.name\", \"operator\": \"Exists\"}"))),
        at + ".operator: Exists is not supported in matchFields: use In or NotIn with one Node name");
    assertInvalid(reviews.create(selecting(fieldTerm(
            "{\"key\": \"metadata.name\", \"operator\": \"In\", \"values\": [\"n1\", \"n2\"]}"))),
        at + ".values: In on metadata.name takes exactly one Node name, got [\"n1\", \"n2\"]; use one term per Node");
    assertInvalid(reviews.create(selecting(fieldTerm(
            "{\"key\": \"metadata.name\", \"operator\": \"NotIn\", \"values\": [\"Node_1\"]}"))),
        at + ".values[0]: \"Node_1\" is not a valid Node name: it must consist of lower case letters, digits, '-'"
            + " or '.', and start and end with a letter or digit");
  }

  @Test
  void namesTheTermAndRequirementAtFault() {
    ObjectNode object = selecting("""
        {"nodeSelectorTerms": [
          {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
          {"matchExpressions": [{"key": "zone", "operator": "Exists"}, {"key": "gpu", "operator": "Gt"}]}]}""");
    assertInvalid(reviews.create(object), "spec.nodeSelector.nodeSelectorTerms[1].matchExpressions[1].values: Gt"
        + " needs exactly one value, an integer; got []");
  }

  @Test
  void deniesAnyChangeOfTheSpec() {
    ObjectNode old = selecting(term("{\"key\": \"zone\", \"operator\": \"In\", \"values\": [\"a\"]}"));
    ((ObjectNode) old.path("spec")).put("ipv6", "fd00:10:244::/104");

    ObjectNode ipv4 = old.deepCopy();
    ((ObjectNode) ipv4.path("spec")).put("ipv4", "10.245.0.0/16");
    assertInvalid(reviews.update(old, ipv4),
        "spec.ipv4: field is immutable: it is \"10.244.0.0/16\" and the update asks for \"10.245.0.0/16\"" + RECREATE);

    ObjectNode noIpv6 = old.deepCopy();
    ((ObjectNode) noIpv6.path("spec")).remove("ipv6");
    assertInvalid(reviews.update(old, noIpv6),
        "spec.ipv6: field is immutable: it is \"fd00:10:244::/104\" and the update asks for unset" + RECREATE);

    ObjectNode bits = old.deepCopy();
    ((ObjectNode) bits.path("spec")).put("perNodeHostBits", 6);
    assertInvalid(reviews.update(old, bits),
        "spec.perNodeHostBits: field is immutable: it is 8 and the update asks for 6" + RECREATE);

    ObjectNode selector = old.deepCopy();
    ((ObjectNode) selector.path("spec")).set("nodeSelector",
        parse(term("{\"key\": \"zone\", \"operator\": \"In\", \"values\": [\"a\", \"b\"]}")));
    assertInvalid(reviews.update(old, selector),
        "spec.nodeSelector: field is immutable, and the update changes it" + RECREATE);

    ObjectNode fallback = old.deepCopy();
    ((ObjectNode) fallback.path("spec")).remove("nodeSelector");
    assertInvalid(reviews.update(old, fallback),
        "spec.nodeSelector: field is immutable, and the update changes it" + RECREATE);
  }

  @Test
  void allowsUpdatesThatLeaveTheSpecAlone() {
    ObjectNode old = selecting(term("{\"key\": \"gpu\", \"operator\": \"Exists\"}"));
    ObjectNode same = selecting(term("{\"key\": \"gpu\", \"operator\": \"Exists\", \"values\": []}"));
    ((ObjectNode) same.path("spec")).put("ipv6", "");
    ((ObjectNode) same.path("metadata")).putObject("labels").put("team", "net");
    assertAllowed(reviews.update(old, same));

    ObjectNode deleting = same.deepCopy();
    ((ObjectNode) deleting.path("metadata")).put("deletionTimestamp", "2024-05-02T10:00:00Z");
    ((ObjectNode) deleting.path("metadata")).putArray("finalizers");
    assertAllowed(reviews.update(same, deleting));

    ObjectNode invalidButStored = clusterCidr("legacy", 2, "10.244.0.1/16", null);
    ObjectNode relabelled = invalidButStored.deepCopy();
    ((ObjectNode) relabelled.path("metadata")).putObject("labels").put("retired", "true");
    assertAllowed(reviews.update(invalidButStored, relabelled));
  }
}
