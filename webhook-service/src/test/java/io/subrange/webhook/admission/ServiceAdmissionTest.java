package io.subrange.webhook.admission;

import static io.subrange.webhook.admission.AdmissionReviews.port;
import static io.subrange.webhook.admission.AdmissionReviews.review;
import static io.subrange.webhook.admission.AdmissionReviews.service;
import static io.subrange.webhook.admission.AdmissionReviews.update;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/** Every Service shape through /mutate and /validate, dual-stack (10.0.0.0/24 primary, fd00::/120). */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "server.ssl.enabled=false",
    "management.server.port=0",
    "subrange.service.cidrs=10.0.0.0/24,fd00::/120"})
@DirtiesContext
class ServiceAdmissionTest {

  private static final Cidr V4 = Cidr.parse("10.0.0.0/24");
  private static final Cidr V6 = Cidr.parse("fd00::/120");

  @Autowired
  WebTestClient client;

  // ---- families ---------------------------------------------------------------------------

  @Test
  void preferDualStackGetsOneAddressPerFamilyPrimaryFirst() {
    ObjectNode svc = service("ds", "prefer", "ClusterIP", null);
    ((ObjectNode) svc.path("spec")).put("ipFamilyPolicy", "PreferDualStack");
    JsonNode stored = create(svc);
    JsonNode spec = stored.path("spec");
    assertThat(texts(spec.path("ipFamilies"))).containsExactly("IPv4", "IPv6");
    assertThat(V4.contains(IpAddress.parse(spec.path("clusterIPs").get(0).asText()))).isTrue();
    assertThat(V6.contains(IpAddress.parse(spec.path("clusterIPs").get(1).asText()))).isTrue();
    assertThat(spec.path("clusterIP").asText()).isEqualTo(spec.path("clusterIPs").get(0).asText());
    assertThat(spec.path("ipFamilyPolicy").asText()).isEqualTo("PreferDualStack");
  }

  @Test
  void ipFamiliesDecideTheOrder() {
    ObjectNode svc = service("ds", "v6first", "ClusterIP", null);
    ((ObjectNode) svc.path("spec")).put("ipFamilyPolicy", "RequireDualStack").putArray("ipFamilies").add("IPv6");
    JsonNode spec = create(svc).path("spec");
    assertThat(texts(spec.path("ipFamilies"))).containsExactly("IPv6", "IPv4");
    assertThat(V6.contains(IpAddress.parse(spec.path("clusterIP").asText()))).isTrue();
  }

  @Test
  void singleStackDefaultsToThePrimaryFamilyAndRefusesTwo() {
    JsonNode spec = create(service("ds", "single", "ClusterIP", null)).path("spec");
    assertThat(texts(spec.path("ipFamilies"))).containsExactly("IPv4");
    assertThat(spec.path("clusterIPs")).hasSize(1);

    ObjectNode two = service("ds", "two", "ClusterIP", null);
    ((ObjectNode) two.path("spec")).put("ipFamilyPolicy", "SingleStack").putArray("ipFamilies").add("IPv4").add("IPv6");
    assertDenied(two, 422, "spec.ipFamilyPolicy: SingleStack allows one IP family");
  }

  @Test
  void staticDualStackAddressesAreHonouredInOrder() {
    ObjectNode svc = service("ds", "static-pair", "ClusterIP", null);
    ((ObjectNode) svc.path("spec")).put("ipFamilyPolicy", "RequireDualStack").putArray("clusterIPs")
        .add("10.0.0.9").add("fd00::9");
    JsonNode spec = create(svc).path("spec");
    assertThat(texts(spec.path("clusterIPs"))).containsExactly("10.0.0.9", "fd00::9");
    assertThat(texts(spec.path("ipFamilies"))).containsExactly("IPv4", "IPv6");

    ObjectNode clash = service("ds", "clash", "ClusterIP", null);
    ((ObjectNode) clash.path("spec")).put("ipFamilyPolicy", "RequireDualStack").putArray("clusterIPs")
        .add("10.0.0.8").add("fd00::9");
    assertDenied(clash, 422, "spec.clusterIPs[1]: fd00::9 is already allocated to Service ds/static-pair");
    // All or nothing: 10.0.0.8 was not kept.
    ObjectNode after = service("ds", "after", "ClusterIP", "10.0.0.8");
    assertThat(admit(review("CREATE", after, false)).path("response").path("allowed").asBoolean()).isTrue();
  }

  @Test
  void malformedFamilyFieldsAreRefused() {
    ObjectNode bad = service("ds", "badfam", "ClusterIP", null);
    ((ObjectNode) bad.path("spec")).putArray("ipFamilies").add("IPv5");
    assertDenied(bad, 422, "spec.ipFamilies[0]: unknown IP family \"IPv5\"");
    ObjectNode policy = service("ds", "badpolicy", "ClusterIP", null);
    ((ObjectNode) policy.path("spec")).put("ipFamilyPolicy", "Sometimes");
    assertDenied(policy, 422, "spec.ipFamilyPolicy: \"Sometimes\" is not one of");
    ObjectNode mismatch = service("ds", "mismatch", "ClusterIP", null);
    ((ObjectNode) mismatch.path("spec")).putArray("ipFamilies").add("IPv6");
    ((ObjectNode) mismatch.path("spec")).putArray("clusterIPs").add("10.0.0.30");
    assertDenied(mismatch, 422, "spec.clusterIPs[0]: 10.0.0.30 is IPv4 but spec.ipFamilies[0] is IPv6");
  }

  // ---- NodePorts ----------------------------------------------------------------------------

  @Test
  void nodePortServicesGetAPortPerPortNumberShared53TcpAndUdp() {
    ObjectNode svc = service("np", "dns", "NodePort", null);
    port(svc, "dns-tcp", 53, "TCP", null);
    port(svc, "dns-udp", 53, "UDP", null);
    JsonNode ports = create(svc).path("spec").path("ports");
    int http = ports.get(0).path("nodePort").asInt();
    int dnsTcp = ports.get(1).path("nodePort").asInt();
    int dnsUdp = ports.get(2).path("nodePort").asInt();
    assertThat(dnsTcp).isEqualTo(dnsUdp).isBetween(30086, 32767);
    assertThat(http).isBetween(30086, 32767).isNotEqualTo(dnsTcp);
  }

  @Test
  void requestedNodePortsAreHonouredOrRefusedNamingTheHolder() {
    ObjectNode first = service("np", "owner", "NodePort", null);
    ((ObjectNode) first.path("spec").path("ports").get(0)).put("nodePort", 30080);
    assertThat(create(first).path("spec").path("ports").get(0).path("nodePort").asInt()).isEqualTo(30080);

    ObjectNode second = service("np", "other", "NodePort", null);
    ((ObjectNode) second.path("spec").path("ports").get(0)).put("nodePort", 30080);
    assertDenied(second, 422, "spec.ports[0].nodePort: port 30080 is already allocated to Service np/owner in"
        + " 30000-32767; choose a free port");

    ObjectNode outside = service("np", "outside", "NodePort", null);
    ((ObjectNode) outside.path("spec").path("ports").get(0)).put("nodePort", 8080);
    assertDenied(outside, 422, "spec.ports[0].nodePort: port 8080 is not in the NodePort range 30000-32767");
    ObjectNode huge = service("np", "huge", "NodePort", null);
    ((ObjectNode) huge.path("spec").path("ports").get(0)).put("nodePort", 70000);
    assertDenied(huge, 422, "spec.ports[0].nodePort: 70000 is not a port number (1-65535)");
    ObjectNode onClusterIp = service("np", "cip", "ClusterIP", null);
    ((ObjectNode) onClusterIp.path("spec").path("ports").get(0)).put("nodePort", 30090);
    assertDenied(onClusterIp, 422, "spec.ports[0].nodePort: may not be set for a Service of type ClusterIP");
  }

  @Test
  void loadBalancersGetNodePortsUnlessToldNotToAndAHealthCheckPortWhenLocal() {
    ObjectNode local = service("lb", "local", "LoadBalancer", null);
    ((ObjectNode) local.path("spec")).put("externalTrafficPolicy", "Local");
    JsonNode spec = create(local).path("spec");
    int nodePort = spec.path("ports").get(0).path("nodePort").asInt();
    int health = spec.path("healthCheckNodePort").asInt();
    assertThat(nodePort).isBetween(30000, 32767);
    assertThat(health).isBetween(30000, 32767).isNotEqualTo(nodePort);

    ObjectNode none = service("lb", "none", "LoadBalancer", null);
    ((ObjectNode) none.path("spec")).put("allocateLoadBalancerNodePorts", false);
    port(none, "asked", 443, "TCP", 30044);
    JsonNode noneSpec = create(none).path("spec");
    assertThat(noneSpec.path("ports").get(0).has("nodePort")).as("none allocated").isFalse();
    assertThat(noneSpec.path("ports").get(1).path("nodePort").asInt()).as("requested is honoured").isEqualTo(30044);
    assertThat(noneSpec.has("healthCheckNodePort")).isFalse();
  }

  // ---- updates ------------------------------------------------------------------------------

  @Test
  void clusterIpToNodePortAllocatesTheMissingPortsAndKeepsTheAddress() {
    JsonNode stored = create(service("up", "grow", "ClusterIP", null));
    ObjectNode changed = stored.deepCopy();
    ((ObjectNode) changed.path("spec")).put("type", "NodePort");
    JsonNode updated = updateTo(stored, changed);
    assertThat(updated.path("spec").path("clusterIP").asText()).isEqualTo(stored.path("spec").path("clusterIP").asText());
    assertThat(updated.path("spec").path("ports").get(0).path("nodePort").asInt()).isBetween(30000, 32767);

    ObjectNode morePorts = updated.deepCopy();
    port(morePorts, "extra", 9090, "TCP", null);
    JsonNode again = updateTo(updated, morePorts);
    assertThat(again.path("spec").path("ports").get(0).path("nodePort"))
        .isEqualTo(updated.path("spec").path("ports").get(0).path("nodePort"));
    assertThat(again.path("spec").path("ports").get(1).path("nodePort").asInt()).isBetween(30000, 32767);
  }

  @Test
  void fieldsTheRequestOmitsComeBackFromTheStoredObject() {
    ObjectNode lb = service("up", "replace", "LoadBalancer", null);
    ((ObjectNode) lb.path("spec")).put("externalTrafficPolicy", "Local").put("ipFamilyPolicy", "PreferDualStack");
    JsonNode stored = create(lb);
    // What `kubectl replace` with the original manifest sends: no allocated fields at all.
    ObjectNode bare = lb.deepCopy();
    JsonNode updated = updateTo(stored, bare);
    for (String field : new String[] {"clusterIP", "clusterIPs", "ipFamilies", "healthCheckNodePort"}) {
      assertThat(updated.path("spec").path(field)).as(field).isEqualTo(stored.path("spec").path(field));
    }
    assertThat(updated.path("spec").path("ports")).isEqualTo(stored.path("spec").path("ports"));
  }

  @Test
  void anAssignedClusterIpCannotChange() {
    JsonNode stored = create(service("up", "fixed", "ClusterIP", null));
    ObjectNode moved = stored.deepCopy();
    // An address in the static band (10.0.0.1-16 of this /24): the dynamic allocation above never
    // hands one out while the upper band has room, so the update always asks for a different address.
    ((ObjectNode) moved.path("spec")).put("clusterIP", "10.0.0.5").remove("clusterIPs");
    JsonNode response = admit(update(stored, moved, false)).path("response");
    assertThat(response.path("status").path("code").asInt()).isEqualTo(422);
    assertThat(response.path("status").path("message").asText())
        .startsWith("spec.clusterIP: field is immutable: it is " + stored.path("spec").path("clusterIP").asText());
  }

  @Test
  void becomingExternalNameDropsAddressesAndPortsAndComingBackAllocates() {
    ObjectNode np = service("up", "flip", "NodePort", null);
    JsonNode stored = create(np);
    ObjectNode external = stored.deepCopy();
    ((ObjectNode) external.path("spec")).put("type", "ExternalName").put("externalName", "example.com");
    JsonNode asExternal = updateTo(stored, external);
    assertThat(asExternal.path("spec").has("clusterIP")).isFalse();
    assertThat(asExternal.path("spec").has("clusterIPs")).isFalse();
    assertThat(asExternal.path("spec").path("ports").get(0).has("nodePort")).isFalse();

    ObjectNode back = asExternal.deepCopy();
    ((ObjectNode) back.path("spec")).put("type", "ClusterIP").remove("externalName");
    JsonNode asClusterIp = updateTo(asExternal, back);
    assertThat(V4.contains(IpAddress.parse(asClusterIp.path("spec").path("clusterIP").asText()))).isTrue();
  }

  @Test
  void addingTheSecondFamilyAllocatesItAndKeepsTheFirst() {
    JsonNode stored = create(service("up", "widen", "ClusterIP", null));
    ObjectNode wider = stored.deepCopy();
    ((ObjectNode) wider.path("spec")).put("ipFamilyPolicy", "PreferDualStack");
    JsonNode updated = updateTo(stored, wider);
    assertThat(updated.path("spec").path("clusterIPs").get(0)).isEqualTo(stored.path("spec").path("clusterIPs").get(0));
    assertThat(V6.contains(IpAddress.parse(updated.path("spec").path("clusterIPs").get(1).asText()))).isTrue();
    assertThat(texts(updated.path("spec").path("ipFamilies"))).containsExactly("IPv4", "IPv6");
  }

  @Test
  void anExistingServiceWithAnAddressSubrangeDoesNotServeCanStillBeUpdated() {
    // Created before subrange, from a range it does not serve: updates must not be refused.
    ObjectNode stored = service("up", "legacy", "NodePort", null);
    ((ObjectNode) stored.path("spec")).put("clusterIP", "10.9.9.9").putArray("clusterIPs").add("10.9.9.9");
    ((ObjectNode) stored.path("spec").path("ports").get(0)).put("nodePort", 20080);
    ObjectNode relabelled = stored.deepCopy();
    ((ObjectNode) relabelled.path("metadata")).putObject("labels").put("tier", "web");
    for (String path : new String[] {"/mutate", "/validate"}) {
      JsonNode response = post(path, update(stored, relabelled, false)).path("response");
      assertThat(response.path("allowed").asBoolean()).as(path + ": " + response).isTrue();
      assertThat(response.path("warnings").toString())
          .contains("spec.clusterIPs[0] is kept, but subrange does not manage it: 10.9.9.9 is not in any Service range")
          .contains("spec.ports[0].nodePort is kept, but subrange does not manage it: port 20080 is not in the"
              + " NodePort range");
    }
    // A new out-of-range address is still refused.
    ObjectNode moved = relabelled.deepCopy();
    ((ObjectNode) moved.path("spec").path("ports").get(0)).put("nodePort", 20081);
    assertThat(post("/mutate", update(stored, moved, false)).path("response").path("status").path("code").asInt())
        .isEqualTo(422);
  }

  // ---- /validate ----------------------------------------------------------------------------

  @Test
  void validateRefusesAConflictEvenWhenMutationDidNotRun() {
    create(service("val", "holder", "ClusterIP", "10.0.0.11"));
    ObjectNode sneaky = service("val", "sneaky", "ClusterIP", "10.0.0.11");
    JsonNode response = validate(review("CREATE", sneaky, false)).path("response");
    assertThat(response.path("allowed").asBoolean()).isFalse();
    assertThat(response.path("status").path("code").asInt()).isEqualTo(422);
    assertThat(response.path("status").path("message").asText())
        .startsWith("spec.clusterIP: 10.0.0.11 is already allocated to Service val/holder in 10.0.0.0/24");
  }

  @Test
  void validateRecordsFreeValuesSoTheyAreNeverHandedOutAgain() {
    ObjectNode unseen = service("val", "unseen", "NodePort", "10.0.0.12");
    ((ObjectNode) unseen.path("spec").path("ports").get(0)).put("nodePort", 30012);
    assertThat(validate(review("CREATE", unseen, false)).path("response").path("allowed").asBoolean()).isTrue();
    assertDenied(service("val", "late", "ClusterIP", "10.0.0.12"), 422, "spec.clusterIP: 10.0.0.12 is already"
        + " allocated to Service val/unseen");
    // The same object validated again (an update) is fine.
    assertThat(validate(review("CREATE", unseen, false)).path("response").path("allowed").asBoolean()).isTrue();
  }

  @Test
  void dryRunsAllocateNothingForPortsEither() {
    // Ports asked for by number come from the static band (30000-30085), which no dynamic
    // allocation of another test can have taken.
    ObjectNode np = service("dry", "ports", "NodePort", null);
    ((ObjectNode) np.path("spec").path("ports").get(0)).put("nodePort", 30055);
    assertThat(admit(review("CREATE", np, true)).path("response").path("allowed").asBoolean()).isTrue();
    ObjectNode real = service("dry", "real", "NodePort", null);
    ((ObjectNode) real.path("spec").path("ports").get(0)).put("nodePort", 30055);
    assertThat(admit(review("CREATE", real, false)).path("response").path("allowed").asBoolean()).isTrue();
  }

  @Test
  void manyNodePortServicesNeverShareAPort() {
    Set<Integer> seen = new HashSet<>();
    for (int i = 0; i < 60; i++) {
      JsonNode ports = create(service("many", "s" + i, "NodePort", null)).path("spec").path("ports");
      assertThat(seen.add(ports.get(0).path("nodePort").asInt())).isTrue();
    }
  }

  // ---- upstream's Service storage tables (kubernetes pkg/registry/core/service/storage) ------

  /** TestCreateInitNodePorts, "multi-port multi-proto conflict": 93/TCP and 76/UDP on 30093. */
  @Test
  void oneNodePortForTwoPortNumbersIsRefused() {
    ObjectNode svc = service("up", "multiproto", "NodePort", null);
    ((ObjectNode) svc.path("spec").path("ports").get(0)).put("port", 93).put("nodePort", 30093);
    port(svc, "q", 76, "UDP", 30093);
    assertDenied(svc, 422, "spec.ports[1].nodePort: 30093 is already used by spec.ports[0] (port 93)");

    // ... while the same port number over two protocols shares one (TestCreateInitNodePorts
    // "multi-port same-port multi-proto").
    ObjectNode shared = service("up", "dns", "NodePort", null);
    ((ObjectNode) shared.path("spec").path("ports").get(0)).put("port", 53).put("nodePort", 30053);
    port(shared, "dns-udp", 53, "UDP", 30053);
    JsonNode ports = create(shared).path("spec").path("ports");
    assertThat(ports.get(0).path("nodePort").asInt()).isEqualTo(ports.get(1).path("nodePort").asInt()).isEqualTo(30053);
  }

  /** TestCreateInitNodePorts "explicit health check port conflicts with node port" (later tables). */
  @Test
  void aHealthCheckNodePortThatIsAlsoANodePortIsRefused() {
    ObjectNode svc = service("up", "same-hc", "LoadBalancer", null);
    ((ObjectNode) svc.path("spec")).put("externalTrafficPolicy", "Local").put("healthCheckNodePort", 30111);
    ((ObjectNode) svc.path("spec").path("ports").get(0)).put("nodePort", 30111);
    assertDenied(svc, 422, "spec.healthCheckNodePort: 30111 is already spec.ports[0].nodePort");
  }

  /** TestServiceRegistryUpdateLoadBalancerService / healthCheckNodePort immutable on update. */
  @Test
  void aHealthCheckNodePortCannotChange() {
    ObjectNode svc = service("up", "hc-fixed", "LoadBalancer", null);
    ((ObjectNode) svc.path("spec")).put("externalTrafficPolicy", "Local");
    JsonNode stored = create(svc);
    int health = stored.path("spec").path("healthCheckNodePort").asInt();
    ObjectNode changed = stored.deepCopy();
    ((ObjectNode) changed.path("spec")).put("healthCheckNodePort", health == 31999 ? 31998 : 31999);
    JsonNode response = admit(update(stored, changed, false)).path("response");
    assertThat(response.path("allowed").asBoolean()).isFalse();
    assertThat(response.path("status").path("message").asText())
        .startsWith("spec.healthCheckNodePort: field is immutable once set: it is " + health);
    // Leaving it out keeps it.
    ObjectNode omitted = stored.deepCopy();
    ((ObjectNode) omitted.path("spec")).remove("healthCheckNodePort");
    assertThat(updateTo(stored, omitted).path("spec").path("healthCheckNodePort").asInt()).isEqualTo(health);
  }

  /** ExternalName with a healthCheckNodePort: refused as upstream validation refuses it, not stripped. */
  @Test
  void externalNameWithAHealthCheckNodePortIsRefused() {
    ObjectNode svc = service("up", "ext-hc", "ExternalName", null);
    ((ObjectNode) svc.path("spec")).put("externalName", "example.com").put("healthCheckNodePort", 30222);
    ((ArrayNode) svc.path("spec").path("ports")).removeAll();
    assertDenied(svc, 422, "spec.healthCheckNodePort: may not be set for a Service of type ExternalName");
  }

  /** TestCreateInitIPFields: no policy with two families, or two addresses, is RequireDualStack. */
  @Test
  void twoFamiliesOrTwoAddressesWithoutAPolicyAreRequireDualStack() {
    ObjectNode families = service("up", "two-families", "ClusterIP", null);
    ((ObjectNode) families.path("spec")).putArray("ipFamilies").add("IPv6").add("IPv4");
    JsonNode spec = create(families).path("spec");
    assertThat(spec.path("ipFamilyPolicy").asText()).isEqualTo("RequireDualStack");
    assertThat(texts(spec.path("ipFamilies"))).containsExactly("IPv6", "IPv4");
    assertThat(spec.path("clusterIPs")).hasSize(2);

    // Static-band addresses, which no dynamic allocation of another test can have taken.
    ObjectNode addresses = service("up", "two-ips", "ClusterIP", null);
    ((ObjectNode) addresses.path("spec")).putArray("clusterIPs").add("10.0.0.14").add("fd00::e");
    JsonNode pair = create(addresses).path("spec");
    assertThat(pair.path("ipFamilyPolicy").asText()).isEqualTo("RequireDualStack");
    assertThat(texts(pair.path("clusterIPs"))).containsExactly("10.0.0.14", "fd00::e");
  }

  /** TestUpdateIPsFromDualStack: to SingleStack keeps the primary; shortened without it is refused. */
  @Test
  void dualStackToSingleStackKeepsThePrimaryAndShorteningOtherwiseIsRefused() {
    ObjectNode svc = service("up", "downgrade", "ClusterIP", null);
    ((ObjectNode) svc.path("spec")).put("ipFamilyPolicy", "RequireDualStack");
    JsonNode stored = create(svc);
    String primary = stored.path("spec").path("clusterIPs").get(0).asText();

    ObjectNode shortened = stored.deepCopy();
    ((ObjectNode) shortened.path("spec")).putArray("clusterIPs").add(primary);
    ((ObjectNode) shortened.path("spec")).putArray("ipFamilies").add("IPv4");
    JsonNode refused = admit(update(stored, shortened, false)).path("response");
    assertThat(refused.path("allowed").asBoolean()).isFalse();
    assertThat(refused.path("status").path("message").asText()).startsWith("spec.clusterIPs: may not be shortened");

    // As `kubectl patch -p '{"spec":{"ipFamilyPolicy":"SingleStack"}}'` sends it: both still listed.
    ObjectNode single = stored.deepCopy();
    ((ObjectNode) single.path("spec")).put("ipFamilyPolicy", "SingleStack");
    JsonNode spec = updateTo(stored, single).path("spec");
    assertThat(texts(spec.path("clusterIPs"))).containsExactly(primary);
    assertThat(texts(spec.path("ipFamilies"))).containsExactly("IPv4");
    assertThat(spec.path("clusterIP").asText()).isEqualTo(primary);
  }

  /**
   * IPv6 addresses are stored as the client wrote them (kube-apiserver keeps
   * "2000:0:0:0:0:0:0:1"; its immutability check compares text), on create and on updates of
   * Services created before subrange.
   */
  @Test
  void ipv6AddressesAreKeptAsTheClientWroteThem() {
    ObjectNode svc = service("up", "v6-long", "ClusterIP", null);
    ((ObjectNode) svc.path("spec")).put("ipFamilyPolicy", "RequireDualStack")
        .putArray("clusterIPs").add("10.0.0.13").add("fd00:0:0:0:0:0:0:d");
    JsonNode stored = create(svc);
    assertThat(texts(stored.path("spec").path("clusterIPs"))).containsExactly("10.0.0.13", "fd00:0:0:0:0:0:0:d");
    // Held as the address it is: the canonical spelling is the same address.
    assertDenied(service("up", "v6-short", "ClusterIP", "fd00::d"), 422, "spec.clusterIP: fd00::d is already"
        + " allocated to Service up/v6-long");

    // Created before subrange, spelled long, IPv6 first: a label change keeps every spelling.
    ObjectNode legacy = service("up", "v6-legacy", "ClusterIP", "fd00:0:0:0:0:0:0:c");
    ((ObjectNode) legacy.path("spec")).put("ipFamilyPolicy", "SingleStack")
        .putArray("clusterIPs").add("fd00:0:0:0:0:0:0:c");
    ((ObjectNode) legacy.path("spec")).putArray("ipFamilies").add("IPv6");
    ObjectNode relabelled = legacy.deepCopy();
    ((ObjectNode) relabelled.path("metadata")).putObject("labels").put("tier", "web");
    JsonNode updated = updateTo(legacy, relabelled);
    assertThat(updated.path("spec").path("clusterIP").asText()).isEqualTo("fd00:0:0:0:0:0:0:c");
    assertThat(texts(updated.path("spec").path("clusterIPs"))).containsExactly("fd00:0:0:0:0:0:0:c");
    // ... and the update recorded it as that Service's (a kept address, not a new request).
    assertDenied(service("up", "v6-taker", "ClusterIP", "fd00::c"), 422, "spec.clusterIP: fd00::c is already"
        + " allocated to Service up/v6-legacy");
  }

  /** Headless NodePort/LoadBalancer: the API server refuses them, so nothing is held for them. */
  @Test
  void headlessNodePortAndLoadBalancerServicesHoldNoNodePorts() {
    for (String type : List.of("NodePort", "LoadBalancer")) {
      ObjectNode svc = service("up", "headless-" + type.toLowerCase(), type, "None");
      ((ObjectNode) svc.path("spec")).put("externalTrafficPolicy", "Local");
      JsonNode spec = create(svc).path("spec");
      assertThat(spec.path("ports").get(0).has("nodePort")).as(type).isFalse();
      assertThat(spec.has("healthCheckNodePort")).as(type).isFalse();
    }
    // ... and an update of a headless ClusterIP Service to NodePort holds none either.
    JsonNode stored = create(service("up", "headless-update", "ClusterIP", "None"));
    ObjectNode changed = stored.deepCopy();
    ((ObjectNode) changed.path("spec")).put("type", "NodePort");
    assertThat(updateTo(stored, changed).path("spec").path("ports").get(0).has("nodePort")).isFalse();
  }

  /**
   * The API server sends managedFields in request.object (and oldObject). Admission drops them
   * before decoding; they must come through untouched: no patch operation reaches metadata.
   */
  @Test
  void managedFieldsPassThroughUntouched() throws Exception {
    ObjectNode svc = service("mf", "tracked", "NodePort", null);
    JsonNode managed = AdmissionReviews.JSON.readTree("""
        [{"manager":"kubectl-create","operation":"Update","apiVersion":"v1","time":"2026-11-27T13:37:25Z",
          "fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:ports":{".":{},
          "k:{\\"port\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:name":{},"f:port":{}}},"f:type":{}}}}]
        """);
    ((ObjectNode) svc.path("metadata")).set("managedFields", managed);
    ObjectNode request = review("CREATE", svc, false);
    JsonNode answer = admit(request);
    assertThat(AdmissionReviews.patch(answer)).isNotEmpty()
        .allSatisfy(op -> assertThat(op.path("path").asText()).startsWith("/spec"));
    JsonNode stored = AdmissionReviews.admitted(request, answer);
    assertThat(stored.path("metadata").path("managedFields")).isEqualTo(managed);
    assertThat(stored.path("spec").path("ports").get(0).path("nodePort").asInt()).isPositive();
    assertThat(stored.path("spec").path("clusterIP").asText()).isNotEmpty();

    ObjectNode changed = stored.deepCopy();
    ((ObjectNode) changed.path("metadata")).putObject("labels").put("tier", "front");
    JsonNode updated = updateTo(stored, changed);
    assertThat(updated.path("metadata").path("managedFields")).isEqualTo(managed);
    assertThat(updated.path("metadata").path("labels").path("tier").asText()).isEqualTo("front");
    assertThat(updated.path("spec")).isEqualTo(stored.path("spec"));
  }

  // ---- helpers ------------------------------------------------------------------------------

  private JsonNode create(ObjectNode service) {
    return admission().created(service);
  }

  private JsonNode updateTo(JsonNode stored, JsonNode changed) {
    return admission().updated(stored, changed);
  }

  private void assertDenied(ObjectNode object, int code, String messageStart) {
    admission().denied(review("CREATE", object, false), code, messageStart);
  }

  private JsonNode admit(ObjectNode request) {
    return post("/mutate", request);
  }

  private JsonNode validate(ObjectNode request) {
    return post("/validate", request);
  }

  private JsonNode post(String path, ObjectNode request) {
    return admission().post(path, request);
  }

  private AdmissionClient admission() {
    return new AdmissionClient(client);
  }

  private static List<String> texts(JsonNode array) {
    return StreamSupport.stream(((ArrayNode) array).spliterator(), false).map(JsonNode::asText).toList();
  }
}
