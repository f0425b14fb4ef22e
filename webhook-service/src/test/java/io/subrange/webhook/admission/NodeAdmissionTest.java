package io.subrange.webhook.admission;

import static io.subrange.webhook.admission.AdmissionReviews.admitted;
import static io.subrange.webhook.admission.AdmissionReviews.node;
import static io.subrange.webhook.admission.AdmissionReviews.review;
import static io.subrange.webhook.admission.AdmissionReviews.update;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.subrange.allocator.net.Cidr;
import java.util.List;
import java.util.Map;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.MediaType;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Nodes through /mutate and /validate with a dual-stack default ClusterCIDR from configuration:
 * 10.244.0.0/16 and fd00:244::/104, node masks /24 and /64 (which one perNodeHostBits turns into
 * /24 and /120 blocks).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "server.ssl.enabled=false",
    "management.server.port=0",
    "subrange.service.cidrs=10.96.0.0/16",
    "subrange.pod.cluster-cidrs=10.244.0.0/16,fd00:244::/104"})
@DirtiesContext
class NodeAdmissionTest {

  @Autowired
  WebTestClient client;

  @Test
  void newNodesGetOneBlockPerFamilyPrimaryFirstInOrder() {
    JsonNode first = create(node("n-1", Map.of()));
    List<String> firstBlocks = podCidrs(first);
    assertThat(firstBlocks).hasSize(2);
    Cidr v4 = Cidr.parse(firstBlocks.get(0));
    Cidr v6 = Cidr.parse(firstBlocks.get(1));
    assertThat(v4.prefixLength()).isEqualTo(24);
    assertThat(Cidr.parse("10.244.0.0/16").contains(v4)).isTrue();
    assertThat(v6.prefixLength()).isEqualTo(120);
    assertThat(Cidr.parse("fd00:244::/104").contains(v6)).isTrue();
    assertThat(first.path("spec").path("podCIDR").asText()).isEqualTo(firstBlocks.get(0));
    // Sequential, like upstream: the next node gets the next block of each family.
    JsonNode second = create(node("n-2", Map.of()));
    assertThat(podCidrs(second)).containsExactly(v4.network().plus(256) + "/24", v6.network().plus(256) + "/120");
  }

  @Test
  void presetPodCidrsAreRecordedWhenFreeAndRefusedWhenAnotherNodeHoldsThem() {
    JsonNode kept = create(node("old-node", Map.of(), "10.244.200.0/24", "fd00:244::c800/120"));
    assertThat(podCidrs(kept)).containsExactly("10.244.200.0/24", "fd00:244::c800/120");

    JsonNode response = post("/mutate", review("CREATE",
        node("twin", Map.of(), "10.244.200.0/24", "fd00:244::c900/120"), false)).path("response");
    assertThat(response.path("allowed").asBoolean()).isFalse();
    assertThat(response.path("status").path("code").asInt()).isEqualTo(409);
    assertThat(response.path("status").path("message").asText())
        .contains("10.244.200.0/24 of node twin is already allocated to node old-node");

    JsonNode validated = post("/validate", review("CREATE",
        node("sneaky", Map.of(), "10.244.200.0/24", "fd00:244::ca00/120"), false)).path("response");
    assertThat(validated.path("status").path("code").asInt()).isEqualTo(409);
  }

  @Test
  void anUpdateKeepingCollidingPodCidrsTheNodeHadBeforeIsAllowedWithAWarning() {
    create(node("holder", Map.of(), "10.244.210.0/24", "fd00:244::d200/120"));
    // A node that got the same blocks while subrange was not looking (its webhooks were off).
    ObjectNode before = node("unseen", Map.of("zone", "a"), "10.244.210.0/24", "fd00:244::d300/120");
    ObjectNode after = node("unseen", Map.of("zone", "b"), "10.244.210.0/24", "fd00:244::d300/120");
    JsonNode relabelled = post("/validate", update(before, after, false)).path("response");
    assertThat(relabelled.path("allowed").asBoolean()).as(relabelled.toString()).isTrue();
    assertThat(relabelled.path("warnings").get(0).asText())
        .contains("10.244.210.0/24 of node unseen is already allocated to node holder")
        .contains("had these pod CIDRs before this update");

    ObjectNode bare = node("unseen-2", Map.of());
    JsonNode takes = post("/validate", update(bare, node("unseen-2", Map.of(), "10.244.210.0/24",
        "fd00:244::d400/120"), false)).path("response");
    assertThat(takes.path("status").path("code").asInt()).as("an update that sets them is refused").isEqualTo(409);
  }

  @Test
  void malformedPodCidrsAreRefusedWith422() {
    assertDenied(node("bad", Map.of(), "10.244.3.1/24"), "spec.podCIDRs[0]: \"10.244.3.1/24\" is not a CIDR: host bits are set");
    assertDenied(node("two-v4", Map.of(), "10.244.3.0/24", "10.244.4.0/24"), "spec.podCIDRs[1]: a second IPv4 CIDR");
    ObjectNode mismatch = node("mismatch", Map.of(), "10.244.5.0/24");
    ((ObjectNode) mismatch.path("spec")).put("podCIDR", "10.244.6.0/24");
    assertDenied(mismatch, "spec.podCIDRs[0]: \"10.244.5.0/24\" must equal spec.podCIDR \"10.244.6.0/24\"");
  }

  @Test
  void podCidrsOutsideEveryClusterCidrAreAdmittedWithAWarning() {
    JsonNode answer = post("/mutate", review("CREATE", node("foreign", Map.of(), "192.168.7.0/24"), false));
    assertThat(answer.path("response").path("allowed").asBoolean()).isTrue();
    assertThat(answer.path("response").path("warnings").get(0).asText())
        .contains("are in no ClusterCIDR, so subrange does not manage them");
  }

  @Test
  void anUpdateGivesANodeWithoutPodCidrsItsBlocksAndNeverChangesThemAfterwards() {
    ObjectNode bare = node("late", Map.of("zone", "a"));
    ObjectNode labelled = node("late", Map.of("zone", "b"));
    ObjectNode request = update(bare, labelled, false);
    JsonNode answer = post("/mutate", request);
    JsonNode stored = admitted(request, answer);
    assertThat(podCidrs(stored)).hasSize(2);

    ObjectNode omitted = node("late", Map.of("zone", "c"));
    ObjectNode again = update(stored, omitted, false);
    JsonNode restored = admitted(again, post("/mutate", again));
    assertThat(podCidrs(restored)).isEqualTo(podCidrs(stored));

    ObjectNode changed = node("late", Map.of(), "10.244.250.0/24", "fd00:244::fa00/120");
    JsonNode refused = post("/mutate", update(stored, changed, false)).path("response");
    assertThat(refused.path("status").path("code").asInt()).isEqualTo(422);
    assertThat(refused.path("status").path("message").asText()).startsWith("spec.podCIDRs: field is immutable once set");
  }

  @Test
  void dryRunShowsBlocksAndKeepsNothing() {
    JsonNode dry = admitted(review("CREATE", node("dry-a", Map.of()), true),
        post("/mutate", review("CREATE", node("dry-a", Map.of()), true)));
    JsonNode real = create(node("dry-b", Map.of()));
    assertThat(podCidrs(real)).isEqualTo(podCidrs(dry));
  }

  private JsonNode create(ObjectNode node) {
    ObjectNode request = review("CREATE", node, false);
    JsonNode answer = post("/mutate", request);
    assertThat(answer.path("response").path("allowed").asBoolean()).as(answer.toString()).isTrue();
    return admitted(request, answer);
  }

  private void assertDenied(ObjectNode node, String messageStart) {
    JsonNode response = post("/mutate", review("CREATE", node, false)).path("response");
    assertThat(response.path("allowed").asBoolean()).isFalse();
    assertThat(response.path("status").path("code").asInt()).isEqualTo(422);
    assertThat(response.path("status").path("message").asText()).startsWith(messageStart);
  }

  private JsonNode post(String path, ObjectNode request) {
    return client.post().uri(path).contentType(MediaType.APPLICATION_JSON).bodyValue(request.toString())
        .exchange().expectStatus().isOk().expectBody(JsonNode.class).returnResult().getResponseBody();
  }

  private static List<String> podCidrs(JsonNode node) {
    return StreamSupport.stream(node.path("spec").path("podCIDRs").spliterator(), false).map(JsonNode::asText).toList();
  }
}
