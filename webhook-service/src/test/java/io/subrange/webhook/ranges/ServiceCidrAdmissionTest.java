package io.subrange.webhook.ranges;

import static io.subrange.webhook.ranges.RangeReviews.assertAllowed;
import static io.subrange.webhook.ranges.RangeReviews.assertInvalid;
import static io.subrange.webhook.ranges.RangeReviews.review;
import static io.subrange.webhook.ranges.RangeReviews.serviceCidr;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.web.reactive.server.WebTestClient;

/** ServiceCIDR CREATE and UPDATE through /validate over real HTTP. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "server.ssl.enabled=false",
    "management.server.port=0"})
class ServiceCidrAdmissionTest {

  @Autowired
  WebTestClient client;

  RangeReviews reviews;

  @BeforeEach
  void setUp() {
    reviews = new RangeReviews(client);
  }

  @ParameterizedTest
  @CsvSource(delimiter = ';', value = {
      "10.96.0.0/12;",
      "10.96.0.0/12;fd00:10:96::/108",
      "fd00:10:96::/108;10.96.0.0/12",
      "fd00::/64;",
      "10.0.0.0/8;",
      "192.168.0.0/30;",
      "fd00::/127;",
  })
  void allowsUsableCanonicalRanges(String first, String second) {
    ObjectNode object = second == null ? serviceCidr("ok", first) : serviceCidr("ok", first, second);
    assertAllowed(reviews.create(object));
  }

  @Test
  void dryRunGetsTheSameAnswer() {
    assertAllowed(reviews.validate(review("CREATE", serviceCidr("dry", "10.96.0.0/12"), null, true)));
    assertInvalid(reviews.validate(review("CREATE", serviceCidr("dry", "10.96.0.1/12"), null, true)),
        "spec.cidrs[0]: \"10.96.0.1/12\" is not a CIDR: host bits are set (the network is 10.96.0.0/12)");
  }

  @Test
  void deniesHostBitsNamingTheNetwork() {
    assertInvalid(reviews.create(serviceCidr("h", "fd00::/64", "10.96.0.1/12")),
        "spec.cidrs[1]: \"10.96.0.1/12\" is not a CIDR: host bits are set (the network is 10.96.0.0/12)");
  }

  @Test
  void deniesNonCanonicalSpellingsSuggestingTheCanonicalOne() {
    assertInvalid(reviews.create(serviceCidr("c", "FD00::/64")),
        "spec.cidrs[0]: \"FD00::/64\" is not in canonical form; write it as \"fd00::/64\"");
    assertInvalid(reviews.create(serviceCidr("c", "fd00:0:0::/64")),
        "spec.cidrs[0]: \"fd00:0:0::/64\" is not in canonical form; write it as \"fd00::/64\"");
    assertInvalid(reviews.create(serviceCidr("c", "10.096.0.0/12")),
        "spec.cidrs[0]: \"10.096.0.0/12\" is not a CIDR: segment value starts with zero;"
            + " write it as \"10.96.0.0/12\"");
    assertInvalid(reviews.create(serviceCidr("c", "10.96.0.0/012")),
        "spec.cidrs[0]: \"10.96.0.0/012\" is not a CIDR: the prefix length must be a decimal number without"
            + " leading zeros; write it as \"10.96.0.0/12\"");
    assertInvalid(reviews.create(serviceCidr("c", " 10.96.0.0/12")),
        "spec.cidrs[0]: \" 10.96.0.0/12\" is not a CIDR: it contains white space; write it as \"10.96.0.0/12\"");
  }

  @Test
  void deniesTextThatIsNoCidr() {
    assertInvalid(reviews.create(serviceCidr("n", "10.96.0.0")),
        "spec.cidrs[0]: \"10.96.0.0\" is not a CIDR: the prefix length (/n) is missing");
    assertInvalid(reviews.create(serviceCidr("n", "")), "spec.cidrs[0]: \"\" is not a CIDR");
    ObjectNode withNull = serviceCidr("n");
    ((ArrayNode) withNull.path("spec").path("cidrs")).addNull();
    assertInvalid(reviews.create(withNull), "spec.cidrs[0]: \"\" is not a CIDR");
  }

  @Test
  void deniesRangesThatCannotServeServices() {
    assertInvalid(reviews.create(serviceCidr("s", "10.0.0.0/31")),
        "spec.cidrs[0]: 10.0.0.0/31 is too small for Services: it has no assignable address (use at most /30)");
    assertInvalid(reviews.create(serviceCidr("s", "10.0.0.0/7")),
        "spec.cidrs[0]: 10.0.0.0/7 is too large: an IPv4 Service range may be at most a /8");
    assertInvalid(reviews.create(serviceCidr("s", "10.96.0.0/12", "fd00::/63")),
        "spec.cidrs[1]: fd00::/63 is too large: an IPv6 Service range may be at most a /64");
  }

  @Test
  void deniesTwoCidrsOfOneFamily() {
    assertInvalid(reviews.create(serviceCidr("twice", "10.96.0.0/12", "10.112.0.0/12")),
        "spec.cidrs[1]: 10.112.0.0/12 is IPv4, like spec.cidrs[0] (10.96.0.0/12); a ServiceCIDR holds at most one"
            + " CIDR per IP family: put 10.112.0.0/12 in a ServiceCIDR of its own");
    assertInvalid(reviews.create(serviceCidr("twice", "fd00::/108", "fd00::/108")),
        "spec.cidrs[1]: fd00::/108 is IPv6, like spec.cidrs[0] (fd00::/108); a ServiceCIDR holds at most one"
            + " CIDR per IP family: put fd00::/108 in a ServiceCIDR of its own");
  }

  @Test
  void deniesNoneOrMoreThanTwoCidrs() {
    String required = "spec.cidrs: required: give one CIDR, such as \"10.96.0.0/12\", or one IPv4 and one IPv6"
        + " CIDR for dual-stack";
    assertInvalid(reviews.create(serviceCidr("none")), required);
    ObjectNode noSpec = serviceCidr("none");
    noSpec.remove("spec");
    assertInvalid(reviews.create(noSpec), required);
    assertInvalid(reviews.create(serviceCidr("three", "10.96.0.0/12", "fd00::/108", "10.112.0.0/12")),
        "spec.cidrs: 3 CIDRs given; a ServiceCIDR holds at most 2, one per IP family: put further ranges in"
            + " ServiceCIDRs of their own");
  }

  @Test
  void deniesAnyChangeOfTheCidrs() {
    ObjectNode old = serviceCidr("kubernetes", "10.96.0.0/12");
    assertInvalid(reviews.update(old, serviceCidr("kubernetes", "10.96.0.0/16")),
        "spec.cidrs: field is immutable: it is [\"10.96.0.0/12\"] and the update asks for [\"10.96.0.0/16\"];"
            + " to change the ranges, create a new ServiceCIDR and delete this one");
    assertInvalid(reviews.update(old, serviceCidr("kubernetes", "10.96.0.0/12", "fd00::/108")),
        "spec.cidrs: field is immutable: it is [\"10.96.0.0/12\"] and the update asks for"
            + " [\"10.96.0.0/12\", \"fd00::/108\"]; to change the ranges, create a new ServiceCIDR and delete this"
            + " one");
    ObjectNode dual = serviceCidr("kubernetes", "10.96.0.0/12", "fd00::/108");
    assertThat(reviews.update(dual, serviceCidr("kubernetes", "fd00::/108", "10.96.0.0/12"))
        .path("allowed").asBoolean()).as("reordering changes the primary family").isFalse();
  }

  @Test
  void allowsStatusAndMetadataUpdates() {
    ObjectNode old = serviceCidr("kubernetes", "10.96.0.0/12", "fd00::/108");
    ObjectNode withStatus = old.deepCopy();
    withStatus.set("status", RangeReviews.parse("""
        {"conditions": [{"type": "Ready", "status": "True", "observedGeneration": 1,
                         "lastTransitionTime": "2024-05-01T10:00:00Z", "reason": "Serving", "message": "serving"}],
         "usage": [{"cidr": "10.96.0.0/12", "size": "1048574", "used": "12", "free": "1048562",
                    "staticBandUsed": "2", "dynamicBandUsed": "10"},
                   {"cidr": "fd00::/108", "size": "1048575", "used": "0", "free": "1048575",
                    "staticBandUsed": "0", "dynamicBandUsed": "0"}]}"""));
    assertAllowed(reviews.update(old, withStatus));

    ObjectNode labelled = withStatus.deepCopy();
    ((ObjectNode) labelled.path("metadata")).putObject("labels").put("team", "net");
    ((ObjectNode) labelled.path("metadata")).putArray("finalizers").add("subrange.io/addresses-released");
    assertAllowed(reviews.update(withStatus, labelled));

    ObjectNode deleting = labelled.deepCopy();
    ((ObjectNode) deleting.path("metadata")).put("deletionTimestamp", "2024-05-02T10:00:00Z")
        .put("deletionGracePeriodSeconds", 0);
    assertAllowed(reviews.update(labelled, deleting));
    ObjectNode finalized = deleting.deepCopy();
    ((ObjectNode) finalized.path("metadata")).remove("finalizers");
    assertAllowed(reviews.update(deleting, finalized));
  }

  @Test
  void letsAnInvalidObjectStoredEarlierBeFinalized() {
    ObjectNode stored = serviceCidr("legacy", "10.96.0.1/12");
    ((ObjectNode) stored.path("metadata")).putArray("finalizers").add("subrange.io/addresses-released");
    ObjectNode finalized = stored.deepCopy();
    ((ObjectNode) finalized.path("metadata")).remove("finalizers");
    assertAllowed(reviews.update(stored, finalized));
  }

  @Test
  void leavesDeletesAlone() {
    JsonNode response = reviews.validate(review("DELETE", null, serviceCidr("gone", "10.96.0.1/12"), false));
    assertAllowed(response);
  }
}
