package io.subrange.webhook.admission;

import static io.subrange.webhook.admission.AdmissionReviews.admitted;
import static io.subrange.webhook.admission.AdmissionReviews.port;
import static io.subrange.webhook.admission.AdmissionReviews.review;
import static io.subrange.webhook.admission.AdmissionReviews.service;
import static io.subrange.webhook.admission.AdmissionReviews.update;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * kube-apiserver's own Service storage tables (kubernetes {@code
 * pkg/registry/core/service/storage/storage_test.go}), case by case through {@code /mutate}; each
 * case carries upstream's test and case name. The ranges are upstream's test storage:
 * 10.0.0.0/16 and 2000::/108, NodePorts 30000-32767.
 *
 * <p>Upstream runs every case on a fresh allocator and deletes between cases; here all cases
 * share one store and nothing is deleted, so each case asks for its own nodePorts and addresses
 * in the static bands (30000-30085, 10.0.0.1-10.0.1.0, 2000::1-2000::100), which no dynamic
 * allocation takes while the dynamic bands have room. Upstream's values are in the comments.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "server.ssl.enabled=false",
    "management.server.port=0",
    "subrange.service.cidrs=10.0.0.0/16,2000::/108"})
@DirtiesContext
class UpstreamServiceStorageTablesTest {

  /** Hands each case fresh static-band nodePorts (upstream: 30093, 30076, 30118 and 30000+i). */
  private static final AtomicInteger NEXT_STATIC_PORT = new AtomicInteger(30000);
  /** And fresh static-band addresses (upstream: 10.0.0.1 and 2000::1). */
  private static final AtomicInteger NEXT_STATIC_ADDRESS = new AtomicInteger(1);

  @Autowired
  WebTestClient client;

  // ---- TestUpdatePatchAllocatedValues ----------------------------------------------------

  /**
   * One case of TestUpdatePatchAllocatedValues: created as a LoadBalancer with
   * externalTrafficPolicy Local, health check port {@code hc}, ports p (867/TCP, nodePort
   * {@code p}) and q (5309/TCP, nodePort {@code q}); then updated.
   */
  record PatchCase(int p, int q, int hc, int address) {

    static PatchCase next() {
      int base = NEXT_STATIC_PORT.getAndAdd(3);
      return new PatchCase(base, base + 1, base + 2, NEXT_STATIC_ADDRESS.getAndIncrement());
    }

    String v4() {
      return "10.0.0." + address;
    }

    String v6() {
      return "2000::" + Integer.toHexString(address);
    }
  }

  interface Expectation {
    void check(UpstreamServiceStorageTablesTest test, PatchCase values, JsonNode stored, JsonNode request);
  }

  static Stream<Arguments> updatePatchAllocatedValues() {
    return Stream.of(
        patchCase("single-ip_single-port", true, false, (svc, v) -> {
          // Created with clusterIPs [10.0.0.1] and one unnamed 93/TCP port on 30093;
          // the update sends no clusterIP, nodePort or health check port.
          strip(svc);
        }, (t, v, stored, request) -> {
          JsonNode spec = t.updated(stored, request).path("spec");
          assertThat(texts(spec.path("clusterIPs"))).containsExactly(v.v4());
          assertThat(nodePorts(spec)).containsExactly(v.p());
          assertThat(spec.path("healthCheckNodePort").asInt()).isEqualTo(v.hc());
        }),
        patchCase("multi-ip_multi-port", false, true, (svc, v) -> strip(svc), (t, v, stored, request) -> {
          JsonNode spec = t.updated(stored, request).path("spec");
          assertThat(texts(spec.path("clusterIPs"))).containsExactly(v.v4(), v.v6());
          assertThat(nodePorts(spec)).containsExactly(v.p(), v.q());
          assertThat(spec.path("healthCheckNodePort").asInt()).isEqualTo(v.hc());
        }),
        patchCase("multi-ip_partial", false, true, (svc, v) -> {
          // Only the primary address, policy left out: upstream adopts the stored policy
          // (PreferDualStack), so dropping the secondary without SingleStack is an error.
          ((ObjectNode) svc.path("spec")).putArray("clusterIPs").add(v.v4());
          ((ObjectNode) svc.path("spec")).remove(List.of("clusterIP", "ipFamilies", "ipFamilyPolicy"));
        }, (t, v, stored, request) -> t.assertRefused(stored, request, "spec.clusterIPs: may not be shortened")),
        patchCase("multi-port_partial", false, false, (svc, v) -> {
          // "provide just 1 value": p keeps its nodePort, q's comes back from the stored object.
          setNodePorts(svc, v.p(), 0);
          ((ObjectNode) svc.path("spec")).remove("healthCheckNodePort");
        }, (t, v, stored, request) -> {
          JsonNode spec = t.updated(stored, request).path("spec");
          assertThat(nodePorts(spec)).containsExactly(v.p(), v.q());
          assertThat(spec.path("healthCheckNodePort").asInt()).isEqualTo(v.hc());
        }),
        patchCase("swap-ports", false, false, (svc, v) -> {
          // The ports listed the other way round, without nodePorts: values follow the names.
          ArrayNode ports = (ArrayNode) svc.path("spec").path("ports");
          JsonNode p = ports.remove(0);
          ports.add(p);
          setNodePorts(svc, 0, 0);
        }, (t, v, stored, request) -> {
          JsonNode spec = t.updated(stored, request).path("spec");
          assertThat(spec.path("ports").get(0).path("name").asText()).isEqualTo("q");
          assertThat(nodePorts(spec)).containsExactly(v.q(), v.p());
        }),
        patchCase("partial-swap-ports", false, false, (svc, v) -> {
          // "set [0] to [1]'s value, omit [1]": q's old value is claimed by p, so q gets a new one.
          setNodePorts(svc, v.q(), 0);
        }, (t, v, stored, request) -> {
          JsonNode spec = t.updated(stored, request).path("spec");
          List<Integer> ports = nodePorts(spec);
          assertThat(ports.get(0)).isEqualTo(v.q());
          // Upstream asks only that q's differ from 30076 (p has it now). subrange may give q the
          // value p gave up: the Service already holds it, so nothing else can have taken it.
          assertThat(ports.get(1)).isNotIn(v.q(), v.hc()).isBetween(30000, 32767);
        }),
        patchCase("swap-port-with-hcnp", false, false, (svc, v) -> {
          // "set [0] to [1]'s value, [1] to HCNP's value", health check port omitted.
          setNodePorts(svc, v.q(), v.hc());
          ((ObjectNode) svc.path("spec")).remove("healthCheckNodePort");
        }, (t, v, stored, request) -> t.assertRefused(stored, request,
            "spec.ports[1].nodePort: " + v.hc() + " is this Service's healthCheckNodePort")),
        patchCase("partial-swap-port-with-hcnp", false, false, (svc, v) -> {
          // "set [0] to HCNP's value, omit [1]".
          setNodePorts(svc, v.hc(), 0);
        }, (t, v, stored, request) -> t.assertRefused(stored, request,
            "spec.ports[0].nodePort: " + v.hc() + " is this Service's healthCheckNodePort")),
        patchCase("update-hcnp", false, false, (svc, v) -> {
          ((ObjectNode) svc.path("spec")).put("healthCheckNodePort", v.hc() + 1000);
        }, (t, v, stored, request) -> t.assertRefused(stored, request,
            "spec.healthCheckNodePort: field is immutable once set: it is " + v.hc())));
  }

  @ParameterizedTest(name = "TestUpdatePatchAllocatedValues/{0}")
  @MethodSource
  void updatePatchAllocatedValues(String name, PatchSpec spec) {
    PatchCase values = PatchCase.next();
    ObjectNode svc = service("patch", name.replace('_', '-'), "LoadBalancer", null);
    ((ObjectNode) svc.path("spec")).put("externalTrafficPolicy", "Local").put("healthCheckNodePort", values.hc());
    if (spec.singlePort()) {
      ObjectNode only = (ObjectNode) svc.path("spec").path("ports").get(0);
      only.remove("name");
      only.put("port", 93).put("targetPort", 93).put("nodePort", values.p());
      ((ObjectNode) svc.path("spec")).putArray("clusterIPs").add(values.v4());
    } else {
      ((ArrayNode) svc.path("spec").path("ports")).removeAll();
      port(svc, "p", 867, "TCP", values.p());
      port(svc, "q", 5309, "TCP", values.q());
    }
    if (spec.dualStack()) {
      ((ObjectNode) svc.path("spec")).put("ipFamilyPolicy", "PreferDualStack")
          .putArray("clusterIPs").add(values.v4()).add(values.v6());
    }
    JsonNode stored = create(svc);
    ObjectNode changed = stored.deepCopy();
    spec.change().accept(changed, values);
    spec.expectation().check(this, values, stored, changed);
  }

  record PatchSpec(boolean singlePort, boolean dualStack, BiConsumer<ObjectNode, PatchCase> change,
      Expectation expectation) {
  }

  private static Arguments patchCase(String name, boolean singlePort, boolean dualStack,
      BiConsumer<ObjectNode, PatchCase> change, Expectation expectation) {
    return Arguments.of(name, new PatchSpec(singlePort, dualStack, change, expectation));
  }

  // ---- TestPatchAllocatedValues: which omitted values come back --------------------------

  /** "keep_NodePort": a LoadBalancer that allocates NodePorts gets an omitted one back. */
  @ParameterizedTest(name = "TestPatchAllocatedValues/{0}")
  @MethodSource
  void patchAllocatedValues(String name, Boolean allocateLoadBalancerNodePorts, boolean secondOnly,
      boolean expectPatched) {
    int first = NEXT_STATIC_PORT.getAndAdd(2);
    ObjectNode svc = service("patch", name.toLowerCase().replace('_', '-'), "LoadBalancer", null);
    ((ArrayNode) svc.path("spec").path("ports")).removeAll();
    port(svc, "", 93, "TCP", first);
    if (secondOnly) {
      port(svc, "b", 94, "TCP", first + 1);
    }
    if (allocateLoadBalancerNodePorts != null) {
      ((ObjectNode) svc.path("spec")).put("allocateLoadBalancerNodePorts", allocateLoadBalancerNodePorts);
    }
    JsonNode stored = create(svc);
    ObjectNode changed = stored.deepCopy();
    // The nodePort sent as 0: the last one for "reset_partial_NodePorts", the only one otherwise.
    JsonNode ports = changed.path("spec").path("ports");
    ((ObjectNode) ports.get(ports.size() - 1)).put("nodePort", 0);
    JsonNode after = updated(stored, changed).path("spec").path("ports");
    int expected = secondOnly ? first + 1 : first;
    if (expectPatched) {
      assertThat(after.get(after.size() - 1).path("nodePort").asInt()).isEqualTo(expected);
    } else {
      assertThat(after.get(after.size() - 1).path("nodePort").asInt(0)).isZero();
    }
  }

  static Stream<Arguments> patchAllocatedValues() {
    return Stream.of(
        Arguments.of("keep_NodePort", true, false, true),
        Arguments.of("NPs_patched", null, false, true),
        Arguments.of("reset_NodePort", false, false, false),
        Arguments.of("reset_partial_NodePorts", false, true, false));
  }

  // ---- TestCreateInitNodePorts ------------------------------------------------------------

  /**
   * One case of TestCreateInitNodePorts: {@code ports} as "name:port/protocol:nodePort" (nodePort
   * "u" asks for a unique static-band one, "0" for none); expected: error, no nodePorts, or every
   * port with one, requested ones kept and only ports of the same number sharing.
   */
  @ParameterizedTest(name = "TestCreateInitNodePorts/{0}")
  @MethodSource
  void createInitNodePorts(String name, String type, Boolean allocateLoadBalancerNodePorts, List<String> ports,
      String expect) {
    ObjectNode svc = service("init", name.toLowerCase().replace(':', '-').replace('_', '-'), type, null);
    ((ArrayNode) svc.path("spec").path("ports")).removeAll();
    if (allocateLoadBalancerNodePorts != null) {
      ((ObjectNode) svc.path("spec")).put("allocateLoadBalancerNodePorts", allocateLoadBalancerNodePorts);
    }
    List<Integer> requested = new ArrayList<>();
    int shared = 0;
    for (String entry : ports) {
      String[] parts = entry.split(":");
      String[] portProtocol = parts[1].split("/");
      int nodePort = switch (parts[2]) {
        case "u" -> NEXT_STATIC_PORT.getAndIncrement();
        case "same" -> shared != 0 ? shared : (shared = NEXT_STATIC_PORT.getAndIncrement());
        default -> Integer.parseInt(parts[2]);
      };
      requested.add(nodePort);
      port(svc, parts[0], Integer.parseInt(portProtocol[0]), portProtocol[1], nodePort == 0 ? null : nodePort);
    }
    JsonNode answer = post(review("CREATE", svc, false));
    if (expect.equals("error")) {
      assertThat(answer.path("response").path("allowed").asBoolean()).as(answer.toString()).isFalse();
      assertThat(answer.path("response").path("status").path("code").asInt()).isEqualTo(422);
      return;
    }
    assertThat(answer.path("response").path("allowed").asBoolean()).as(answer.toString()).isTrue();
    JsonNode spec = admitted(review("CREATE", svc, false), answer).path("spec");
    List<Integer> got = nodePorts(spec);
    if (expect.equals("none")) {
      assertThat(got).allMatch(p -> p == 0);
      return;
    }
    assertThat(got).allMatch(p -> p >= 30000 && p <= 32767);
    for (int i = 0; i < got.size(); i++) {
      if (requested.get(i) != 0) {
        assertThat(got.get(i)).as("spec.ports[%d] as requested", i).isEqualTo(requested.get(i));
      }
      for (int j = 0; j < i; j++) {
        boolean samePort = spec.path("ports").get(i).path("port").asInt() == spec.path("ports").get(j).path("port").asInt();
        if (!samePort) {
          assertThat(got.get(i)).as("spec.ports[%d] vs [%d]", i, j).isNotEqualTo(got.get(j));
        }
      }
    }
  }

  static Stream<Arguments> createInitNodePorts() {
    List<String> one = List.of("p:80/TCP:0");
    List<String> oneSpecified = List.of("p:80/TCP:u");
    List<String> two = List.of("p:80/TCP:0", "q:443/TCP:0");
    List<String> twoSpecified = List.of("p:80/TCP:u", "q:443/TCP:u");
    List<String> twoSame = List.of("p:80/TCP:same", "q:443/TCP:same");
    List<String> proto = List.of("p:53/TCP:0", "q:53/UDP:0");
    List<String> protoSpecified = List.of("p:53/TCP:u", "q:53/UDP:u");
    List<String> protoSame = List.of("p:53/TCP:same", "q:53/UDP:same");
    List<String> protoConflict = List.of("p:93/TCP:same", "q:76/UDP:same");
    List<Arguments> cases = new ArrayList<>(List.of(
        Arguments.of("type:ExternalName", "ClusterIP", null, one, "none"),
        // Upstream's "ExternalName" cases build a ClusterIP Service (svctest.MakeService's default).
        Arguments.of("type:ExternalName_with_NodePorts", "ClusterIP", null, oneSpecified, "error"),
        Arguments.of("type:ClusterIP", "ClusterIP", null, one, "none"),
        Arguments.of("type:ClusterIP_with_NodePorts", "ClusterIP", null, oneSpecified, "error"),
        Arguments.of("type:NodePort_single_port_unspecified", "NodePort", null, one, "all"),
        Arguments.of("type:NodePort_single_port_specified", "NodePort", null, oneSpecified, "all"),
        Arguments.of("type:NodePort_multiport_unspecified", "NodePort", null, two, "all"),
        Arguments.of("type:NodePort_multiport_specified", "NodePort", null, twoSpecified, "all"),
        Arguments.of("type:NodePort_multiport_same", "NodePort", null, twoSame, "error"),
        Arguments.of("type:NodePort_multiport_multiproto_unspecified", "NodePort", null, proto, "all"),
        Arguments.of("type:NodePort_multiport_multiproto_specified", "NodePort", null, protoSpecified, "all"),
        Arguments.of("type:NodePort_multiport_multiproto_same", "NodePort", null, protoSame, "all"),
        Arguments.of("type:NodePort_multiport_multiproto_conflict", "NodePort", null, protoConflict, "error")));
    for (boolean allocate : new boolean[] {false, true}) {
      String suffix = ":on_alloc:" + allocate;
      cases.add(Arguments.of("type:LoadBalancer_single_port_unspecified" + suffix, "LoadBalancer", allocate, one,
          allocate ? "all" : "none"));
      cases.add(Arguments.of("type:LoadBalancer_single_port_specified" + suffix, "LoadBalancer", allocate,
          oneSpecified, "all"));
      cases.add(Arguments.of("type:LoadBalancer_multiport_unspecified" + suffix, "LoadBalancer", allocate, two,
          allocate ? "all" : "none"));
      cases.add(Arguments.of("type:LoadBalancer_multiport_specified" + suffix, "LoadBalancer", allocate,
          twoSpecified, "all"));
    }
    cases.add(Arguments.of("type:LoadBalancer_multiport_same", "LoadBalancer", null, twoSame, "error"));
    cases.add(Arguments.of("type:LoadBalancer_multiport_multiproto_unspecified", "LoadBalancer", null, proto, "all"));
    cases.add(Arguments.of("type:LoadBalancer_multiport_multiproto_specified", "LoadBalancer", null, protoSpecified,
        "all"));
    cases.add(Arguments.of("type:LoadBalancer_multiport_multiproto_same", "LoadBalancer", null, protoSame, "all"));
    cases.add(Arguments.of("type:LoadBalancer_multiport_multiproto_conflict", "LoadBalancer", null, protoConflict,
        "error"));
    return cases.stream();
  }

  // ---- helpers ------------------------------------------------------------------------------

  private JsonNode create(ObjectNode service) {
    return new AdmissionClient(client).created(service);
  }

  private JsonNode updated(JsonNode stored, JsonNode changed) {
    return new AdmissionClient(client).updated(stored, changed);
  }

  private void assertRefused(JsonNode stored, JsonNode changed, String messageStart) {
    new AdmissionClient(client).denied(update(stored, changed, false), 422, messageStart);
  }

  private JsonNode post(ObjectNode request) {
    return new AdmissionClient(client).post("/mutate", request);
  }

  /** What the update leaves out: allocated fields, as `kubectl replace` with a manifest sends. */
  private static void strip(ObjectNode svc) {
    ((ObjectNode) svc.path("spec")).remove(List.of("clusterIP", "clusterIPs", "healthCheckNodePort"));
    svc.path("spec").path("ports").forEach(p -> ((ObjectNode) p).remove("nodePort"));
  }

  private static void setNodePorts(ObjectNode svc, int... nodePorts) {
    for (int i = 0; i < nodePorts.length; i++) {
      ((ObjectNode) svc.path("spec").path("ports").get(i)).put("nodePort", nodePorts[i]);
    }
  }

  private static List<Integer> nodePorts(JsonNode spec) {
    List<Integer> ports = new ArrayList<>();
    spec.path("ports").forEach(p -> ports.add(p.path("nodePort").asInt(0)));
    return ports;
  }

  private static List<String> texts(JsonNode array) {
    return StreamSupport.stream(array.spliterator(), false).map(JsonNode::asText).toList();
  }
}
