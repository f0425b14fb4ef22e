package io.subrange.webhook.admission;

import static io.subrange.webhook.admission.AdmissionReviews.admitted;
import static io.subrange.webhook.admission.AdmissionReviews.review;
import static io.subrange.webhook.admission.AdmissionReviews.service;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * kube-apiserver's TestCreateInitIPFields (kubernetes {@code
 * pkg/registry/core/service/storage/storage_test.go}) through {@code /mutate}: ClusterIPs ×
 * Policy × Families, 100 cases per cluster shape, named as upstream names them. A subclass is
 * one of upstream's cluster groups ("singlestack:v4", "dualstack:v6v4", ...), with upstream's
 * ranges (10.0.0.0/16, 2000::/108) in its order.
 *
 * <p>One deliberate difference: with no policy and two families or two addresses, upstream's
 * storage table (which skips the v1 defaulting) expects an error on a dual-stack cluster;
 * kube-apiserver defaults such a Service to RequireDualStack before admission (its own dual-stack
 * e2e test expects that), and so does subrange, so those cases expect RequireDualStack.
 */
abstract class UpstreamIpFieldsTable {

  @Autowired
  WebTestClient client;

  /** The cluster's families, primary first: ["v4"], ["v6", "v4"], ... */
  abstract List<String> clusterFamilies();

  /**
   * One case; {@code address} picks its static-band pair (10.0.0.N, 2000::N): upstream uses 10.0.0.1
   * and 2000::1 throughout, on a fresh allocator per case, but here the cases share one store.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void createInitIpFields(String name, List<String> clusterIps, String policy, List<String> families, int address) {
    List<String> ips = clusterIps.stream()
        .map(f -> f.equals("v4") ? "10.0.0." + address : "2000::" + Integer.toHexString(address)).toList();
    ObjectNode svc = service("ipfields", "c" + address, "ClusterIP", null);
    ObjectNode spec = (ObjectNode) svc.path("spec");
    if (!ips.isEmpty()) {
      spec.put("clusterIP", ips.get(0));
      ArrayNode listed = spec.putArray("clusterIPs");
      ips.forEach(listed::add);
    }
    if (policy != null) {
      spec.put("ipFamilyPolicy", policy);
    }
    if (!families.isEmpty()) {
      ArrayNode listed = spec.putArray("ipFamilies");
      families.forEach(f -> listed.add(kubernetesName(f)));
    }
    Expected expected = expected(clusterIps, policy, families);
    ObjectNode request = review("CREATE", svc, false);
    JsonNode answer = new AdmissionClient(client).post("/mutate", request);
    if (expected.error()) {
      assertThat(answer.path("response").path("allowed").asBoolean()).as(answer.toString()).isFalse();
      assertThat(answer.path("response").path("status").path("code").asInt()).isEqualTo(422);
      return;
    }
    assertThat(answer.path("response").path("allowed").asBoolean()).as(answer.toString()).isTrue();
    JsonNode stored = admitted(request, answer).path("spec");
    assertThat(stored.path("ipFamilyPolicy").asText()).isEqualTo(expected.policy());
    assertThat(StreamSupport.stream(stored.path("ipFamilies").spliterator(), false).map(JsonNode::asText))
        .containsExactlyElementsOf(expected.families());
    assertThat(stored.path("clusterIPs")).hasSize(expected.families().size());
    for (int i = 0; i < ips.size(); i++) {
      assertThat(stored.path("clusterIPs").get(i).asText()).isEqualTo(ips.get(i));
    }
  }

  record Expected(boolean error, String policy, List<String> families) {

    static final Expected ERROR = new Expected(true, null, null);
  }

  /** Upstream's expectation, by the rules its table follows for this cluster. */
  private Expected expected(List<String> ips, String policy, List<String> families) {
    List<String> cluster = clusterFamilies();
    String effective = policy != null ? policy
        : ips.size() == 2 || families.size() == 2 ? "RequireDualStack" : "SingleStack";
    if (effective.equals("SingleStack") && (ips.size() == 2 || families.size() == 2)) {
      return Expected.ERROR;
    }
    if (effective.equals("RequireDualStack") && cluster.size() < 2) {
      return Expected.ERROR;
    }
    for (int i = 0; i < Math.min(ips.size(), families.size()); i++) {
      if (!ips.get(i).equals(families.get(i))) {
        return Expected.ERROR;  // an address of another family than the one listed for it
      }
    }
    List<String> result = new ArrayList<>(families.size() >= ips.size() ? families : ips);
    if (!cluster.containsAll(result)) {
      return Expected.ERROR;  // a family the cluster does not serve
    }
    if (result.isEmpty()) {
      result.add(cluster.get(0));
    }
    if (!effective.equals("SingleStack") && result.size() == 1 && cluster.size() == 2) {
      result.add(result.get(0).equals("v4") ? "v6" : "v4");
    }
    return new Expected(false, effective, result.stream().map(UpstreamIpFieldsTable::kubernetesName).toList());
  }

  static Stream<Arguments> cases() {
    List<List<String>> shapes = List.of(List.of(), List.of("v4"), List.of("v6"), List.of("v4", "v6"),
        List.of("v6", "v4"));
    List<String> policies = Arrays.asList(null, "SingleStack", "PreferDualStack", "RequireDualStack");
    List<Arguments> cases = new ArrayList<>();
    for (List<String> ips : shapes) {
      for (String policy : policies) {
        for (List<String> families : shapes) {
          String name = "ClusterIPs:" + shapeName(ips) + "_Policy:" + (policy == null ? "unset" : policy)
              + "_Families:" + shapeName(families);
          cases.add(Arguments.of(name, ips, policy, families, cases.size() + 1));
        }
      }
    }
    return cases.stream();
  }

  private static String shapeName(List<String> families) {
    return families.isEmpty() ? "unset" : String.join("", families);
  }

  private static String kubernetesName(String family) {
    return family.equals("v4") ? "IPv4" : "IPv6";
  }
}
