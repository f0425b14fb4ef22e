package io.subrange.webhook.service;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.ServiceSpec;
import io.subrange.allocator.net.AddressFormatException;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.store.IpClaim;
import io.subrange.allocator.store.PortClaim;
import io.subrange.allocator.store.Reservation;
import io.subrange.allocator.store.ReservationRequest;
import io.subrange.webhook.admission.AdmissionDenied;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * What one Service needs from subrange, worked out from the Service as admitted and, on update,
 * the stored one; and how to write what was granted back into it.
 *
 * <p>Building a plan also normalises the Service the way Kubernetes expects it:
 * <ul>
 *   <li>on update, allocated fields the request omits (clusterIP(s), ipFamilies,
 *       ipFamilyPolicy, nodePorts, healthCheckNodePort) come back from the stored object, and an
 *       assigned clusterIP cannot change;
 *   <li>a change to ExternalName drops addresses and ports; fields a type no longer uses are
 *       dropped when they are just what the stored object carried;
 *   <li>families follow {@code ipFamilies} and {@code ipFamilyPolicy} (SingleStack,
 *       PreferDualStack, RequireDualStack), ordered, with {@code clusterIP == clusterIPs[0]};
 *   <li>NodePorts for every port of NodePort and LoadBalancer Services (unless
 *       {@code allocateLoadBalancerNodePorts: false}), one shared by ports with the same number,
 *       and {@code healthCheckNodePort} for LoadBalancer with {@code externalTrafficPolicy: Local}.
 * </ul>
 * Anything malformed is refused here with a 422 naming the field, before any allocation.
 */
final class ServiceAllocationPlan {

  static final String HEADLESS = "None";
  private static final Set<String> TYPES = Set.of("ClusterIP", "NodePort", "LoadBalancer", "ExternalName");
  private static final Set<String> POLICIES = Set.of("SingleStack", "PreferDualStack", "RequireDualStack");

  private final ServiceSpec spec;
  private final List<IpFamily> families = new ArrayList<>();
  private final List<IpClaim> ipClaims = new ArrayList<>();
  private final List<PortClaim> portClaims = new ArrayList<>();
  /** Which field each claim came from, by identity (two dynamic claims are equal records). */
  private final Map<Object, String> fields = new IdentityHashMap<>();
  /** clusterIP None: no address, and no NodePorts either. */
  private boolean headless;
  /** For each port claim, the indexes of spec.ports it serves; -1 means healthCheckNodePort. */
  private final Map<PortClaim, List<Integer>> portTargets = new IdentityHashMap<>();
  private boolean touchesAddresses;
  /**
   * The addresses the Service asked for, as the client wrote them: kube-apiserver stores
   * {@code 2000:0:0:0:0:0:0:1} as it is, so subrange must not rewrite it to {@code 2000::1}.
   */
  private final List<String> requestedTexts = new ArrayList<>();

  private ServiceAllocationPlan(ServiceSpec spec) {
    this.spec = spec;
  }

  /**
   * Normalises {@code service} in place (see the class comment: omitted fields come back from the
   * stored object, families are defaulted and ordered) and plans what it needs. The name says
   * it: the argument changes, and the admission patch is the difference.
   *
   * @param old the stored Service on update, null on create
   * @throws AdmissionDenied (422) for anything malformed
   */
  static ServiceAllocationPlan normalising(Service service, Service old, ServiceFamilies configured) {
    if (service.getSpec() == null) {
      service.setSpec(new ServiceSpec());
    }
    ServiceSpec spec = service.getSpec();
    ServiceSpec oldSpec = old == null || old.getSpec() == null ? null : old.getSpec();
    ServiceAllocationPlan plan = new ServiceAllocationPlan(spec);
    String type = spec.getType() == null ? "ClusterIP" : spec.getType();
    if (!TYPES.contains(type)) {
      throw AdmissionDenied.invalid("spec.type: \"" + type + "\" is not one of ClusterIP, NodePort, LoadBalancer,"
          + " ExternalName");
    }
    if (type.equals("ExternalName")) {
      Integer health = spec.getHealthCheckNodePort();
      Integer oldHealth = oldSpec == null ? null : oldSpec.getHealthCheckNodePort();
      if (health != null && health != 0 && !health.equals(oldHealth)) {
        // Only one the stored object carried is dropped with the type change; a new one is an error.
        throw AdmissionDenied.invalid("spec.healthCheckNodePort: may not be set for a Service of type ExternalName;"
            + " remove it");
      }
      plan.dropAddresses(oldSpec);
      plan.dropPorts(oldSpec, true);
      return plan;
    }
    if (oldSpec != null && !"ExternalName".equals(oldSpec.getType())) {
      restoreAddresses(spec, oldSpec);
    }
    plan.planAddresses(oldSpec, configured);
    if (plan.headless && !type.equals("ClusterIP")) {
      // kube-apiserver refuses a headless NodePort or LoadBalancer Service after admission;
      // hold nothing for it (upstream: "may not be set to 'None'" for those types).
      return plan;
    }
    plan.planNodePorts(type, oldSpec);
    return plan;
  }

  /** ClusterIP claims, in spec.clusterIPs order. */
  List<IpClaim> ipClaims() {
    return List.copyOf(ipClaims);
  }

  /** NodePort claims: one per distinct nodePort, then healthCheckNodePort. */
  List<PortClaim> portClaims() {
    return List.copyOf(portClaims);
  }

  /**
   * Refuses a Service that would newly take more than {@code max} NodePorts: they are held from
   * admission on, before the API server's own checks and quotas, so one Service must not be
   * able to empty the range. What it already holds (an update) does not count.
   *
   * @throws AdmissionDenied (422)
   */
  void requireAtMostNewNodePorts(int max) {
    long fresh = portClaims.stream().filter(c -> !c.kept()).count();
    if (fresh > max) {
      throw AdmissionDenied.invalid("spec.ports: this Service asks for " + fresh + " new NodePorts; subrange gives"
          + " at most " + max + " to one Service (subrange.service.max-node-ports-per-service)");
    }
  }

  /** The field a claim came from, for messages: "spec.clusterIPs[1]", "spec.ports[0].nodePort". */
  String fieldOf(Object claim) {
    String field = claim == null ? null : fields.get(claim);
    return field != null ? field : "spec";
  }

  /**
   * Warnings for values the Service already carried that subrange could not record (out of
   * every range it serves, or held by another object in its books): the update goes ahead.
   */
  List<String> warnings(ReservationRequest request, Reservation reservation) {
    List<String> warnings = new ArrayList<>();
    for (int i = 0; i < reservation.ips().size(); i++) {
      String why = reservation.ips().get(i).unrecorded();
      if (why != null) {
        warnings.add("subrange: " + fieldOf(request.ips().get(i)) + " is kept, but subrange does not manage it: "
            + why);
      }
    }
    for (int i = 0; i < reservation.ports().size(); i++) {
      String why = reservation.ports().get(i).unrecorded();
      if (why != null) {
        warnings.add("subrange: " + fieldOf(request.ports().get(i)) + " is kept, but subrange does not manage it: "
            + why);
      }
    }
    return warnings;
  }

  /** Writes what was granted into the Service. */
  void apply(Reservation reservation) {
    if (touchesAddresses && !reservation.ips().isEmpty()) {
      List<String> addresses = new ArrayList<>();
      for (int i = 0; i < reservation.ips().size(); i++) {
        addresses.add(i < requestedTexts.size() ? requestedTexts.get(i) : reservation.ips().get(i).address().toString());
      }
      spec.setClusterIPs(addresses);
      spec.setClusterIP(addresses.get(0));
      List<String> familyNames = new ArrayList<>();
      families.forEach(f -> familyNames.add(f.kubernetesName()));
      spec.setIpFamilies(familyNames);
    }
    for (int i = 0; i < portClaims.size(); i++) {
      int port = reservation.ports().get(i).port();
      for (int target : portTargets.get(portClaims.get(i))) {
        if (target < 0) {
          spec.setHealthCheckNodePort(port);
        } else {
          spec.getPorts().get(target).setNodePort(port);
        }
      }
    }
  }

  // ---- addresses --------------------------------------------------------------------------

  /** On update, what the request leaves out of the allocated address fields comes from the stored object. */
  private static void restoreAddresses(ServiceSpec spec, ServiceSpec oldSpec) {
    String oldIp = emptyToNull(oldSpec.getClusterIP());
    List<String> oldIps = nonEmpty(oldSpec.getClusterIPs());
    if (emptyToNull(spec.getClusterIP()) == null && oldIp != null) {
      spec.setClusterIP(oldIp);
    }
    if (nonEmpty(spec.getClusterIPs()).isEmpty() && !oldIps.isEmpty() && Objects.equals(spec.getClusterIP(), oldIps.get(0))) {
      spec.setClusterIPs(new ArrayList<>(oldIps));
    }
    if (nonEmpty(spec.getIpFamilies()).isEmpty() && !nonEmpty(oldSpec.getIpFamilies()).isEmpty()) {
      spec.setIpFamilies(new ArrayList<>(oldSpec.getIpFamilies()));
    }
    if (spec.getIpFamilyPolicy() == null && oldSpec.getIpFamilyPolicy() != null) {
      spec.setIpFamilyPolicy(oldSpec.getIpFamilyPolicy());
    }
    String newIp = emptyToNull(spec.getClusterIP());
    if (oldIp != null && newIp != null && !oldIp.equals(newIp)) {
      throw AdmissionDenied.invalid("spec.clusterIP: field is immutable: it is " + oldIp + " and cannot become "
          + newIp + "; delete and re-create the Service to change its address");
    }
    List<String> newIps = nonEmpty(spec.getClusterIPs());
    for (int i = 0; i < Math.min(oldIps.size(), newIps.size()); i++) {
      if (!oldIps.get(i).equals(newIps.get(i))) {
        throw AdmissionDenied.invalid("spec.clusterIPs[" + i + "]: field is immutable: it is " + oldIps.get(i)
            + " and cannot become " + newIps.get(i));
      }
    }
  }

  private void planAddresses(ServiceSpec oldSpec, ServiceFamilies configured) {
    String single = emptyToNull(spec.getClusterIP());
    List<String> listed = nonEmpty(spec.getClusterIPs());
    if (single != null && !listed.isEmpty() && !single.equals(listed.get(0))) {
      throw AdmissionDenied.invalid("spec.clusterIPs[0]: \"" + listed.get(0) + "\" must equal spec.clusterIP \""
          + single + "\"");
    }
    List<String> requested = !listed.isEmpty() ? listed : single != null ? List.of(single) : List.of();
    if (requested.contains(HEADLESS)) {
      if (requested.size() > 1 || !HEADLESS.equals(requested.get(0))) {
        throw AdmissionDenied.invalid("spec.clusterIPs: \"None\" (headless) must be the only entry");
      }
      headless = true;
      return;  // headless: no address
    }
    String policy = spec.getIpFamilyPolicy();
    if (policy == null && (nonEmpty(spec.getIpFamilies()).size() == 2 || requested.size() == 2)) {
      policy = "RequireDualStack";  // asking for two without a policy: upstream's TestCreateInitIPFields
    }
    policy = policy == null ? "SingleStack" : policy;
    List<String> oldListed = oldSpec == null ? List.of() : nonEmpty(oldSpec.getClusterIPs());
    if (oldListed.size() == 2 && requested.size() == 2 && "SingleStack".equals(spec.getIpFamilyPolicy())) {
      // Dual-stack to SingleStack keeps the primary and gives the secondary up (released once
      // the change is stored): upstream's TestUpdateIPsFromDualStack, kubectl patch included.
      requested = List.of(requested.get(0));
      listed = listed.isEmpty() ? listed : List.of(listed.get(0));
      spec.setClusterIPs(new ArrayList<>(requested));
      List<String> names = nonEmpty(spec.getIpFamilies());
      if (names.size() == 2) {
        spec.setIpFamilies(new ArrayList<>(names.subList(0, 1)));
      }
    } else if (oldListed.size() == 2 && requested.size() == 1 && !policy.equals("SingleStack")) {
      throw AdmissionDenied.invalid("spec.clusterIPs: may not be shortened from " + oldListed + " unless"
          + " spec.ipFamilyPolicy becomes SingleStack");
    }
    if (!POLICIES.contains(policy)) {
      throw AdmissionDenied.invalid("spec.ipFamilyPolicy: \"" + policy + "\" is not one of SingleStack,"
          + " PreferDualStack, RequireDualStack");
    }
    List<IpAddress> addresses = new ArrayList<>();
    for (int i = 0; i < requested.size(); i++) {
      addresses.add(parse(requested.get(i), listed.isEmpty() ? "spec.clusterIP" : "spec.clusterIPs[" + i + "]"));
    }
    List<IpFamily> asked = askedFamilies();
    if (addresses.size() > 2 || (addresses.size() == 2 && addresses.get(0).family() == addresses.get(1).family())) {
      throw AdmissionDenied.invalid("spec.clusterIPs: at most one address per IP family, got " + requested);
    }
    for (int i = 0; i < Math.min(addresses.size(), asked.size()); i++) {
      if (addresses.get(i).family() != asked.get(i)) {
        throw AdmissionDenied.invalid("spec.clusterIPs[" + i + "]: " + addresses.get(i) + " is "
            + addresses.get(i).family() + " but spec.ipFamilies[" + i + "] is " + asked.get(i));
      }
    }
    List<IpFamily> wanted = new ArrayList<>(!asked.isEmpty() ? asked
        : !addresses.isEmpty() ? addresses.stream().map(IpAddress::family).toList() : List.of(configured.primary()));
    for (int i = wanted.size(); i < addresses.size(); i++) {
      wanted.add(addresses.get(i).family());
    }
    if (wanted.size() == 2 && policy.equals("SingleStack")) {
      throw AdmissionDenied.invalid("spec.ipFamilyPolicy: SingleStack allows one IP family, but the Service asks"
          + " for " + names(wanted) + "; use PreferDualStack or RequireDualStack for two");
    }
    if (wanted.size() == 1 && !policy.equals("SingleStack")) {
      IpFamily other = wanted.get(0) == IpFamily.IPV4 ? IpFamily.IPV6 : IpFamily.IPV4;
      if (configured.has(other)) {
        wanted.add(other);
      } else if (policy.equals("RequireDualStack")) {
        throw AdmissionDenied.invalid("spec.ipFamilyPolicy: RequireDualStack needs an IPv4 and an IPv6 address,"
            + " but subrange has Service ranges for " + names(configured.configured()) + " only; use"
            + " PreferDualStack, or add a " + other + " Service range");
      }
    }
    Set<IpAddress> oldIps = oldAddresses(oldSpec);
    for (int i = 0; i < wanted.size(); i++) {
      boolean kept = i < addresses.size() && oldIps.contains(addresses.get(i));
      if (!kept && !configured.has(wanted.get(i))) {
        // An address the Service already holds stays valid while its range is being deleted.
        throw configured.configured().isEmpty() ? ServiceFamilies.noneLive()
            : AdmissionDenied.invalid("spec.ipFamilies[" + i + "]: " + wanted.get(i) + " is not served here:"
                + " subrange has Service ranges for " + names(configured.configured()) + " only");
      }
    }
    families.addAll(wanted);
    spec.setIpFamilyPolicy(policy);
    touchesAddresses = true;
    requestedTexts.addAll(requested);
    for (int i = 0; i < wanted.size(); i++) {
      IpClaim claim = i >= addresses.size() ? IpClaim.dynamic(wanted.get(i))
          : oldIps.contains(addresses.get(i)) ? IpClaim.kept(addresses.get(i))
          : IpClaim.specific(addresses.get(i));
      ipClaims.add(claim);
      fields.put(claim, i < addresses.size() && listed.isEmpty() ? "spec.clusterIP" : "spec.clusterIPs[" + i + "]");
    }
  }

  /** The addresses the stored Service carries, compared as addresses, not as text. */
  private static Set<IpAddress> oldAddresses(ServiceSpec oldSpec) {
    Set<IpAddress> addresses = new HashSet<>();
    if (oldSpec != null) {
      for (String text : nonEmpty(oldSpec.getClusterIPs())) {
        try {
          addresses.add(IpAddress.parse(text));
        } catch (AddressFormatException e) {
          // "None", or a value the API server would not have stored: nothing to keep
        }
      }
    }
    return addresses;
  }

  private List<IpFamily> askedFamilies() {
    List<String> names = nonEmpty(spec.getIpFamilies());
    if (names.size() > 2) {
      throw AdmissionDenied.invalid("spec.ipFamilies: at most two families, got " + names);
    }
    List<IpFamily> families = new ArrayList<>();
    for (int i = 0; i < names.size(); i++) {
      IpFamily family;
      try {
        family = IpFamily.fromKubernetesName(names.get(i));
      } catch (IllegalArgumentException e) {
        throw AdmissionDenied.invalid("spec.ipFamilies[" + i + "]: " + e.getMessage());
      }
      if (families.contains(family)) {
        throw AdmissionDenied.invalid("spec.ipFamilies[" + i + "]: " + family + " is listed twice");
      }
      families.add(family);
    }
    return families;
  }

  private void dropAddresses(ServiceSpec oldSpec) {
    if (oldSpec != null && !"ExternalName".equals(oldSpec.getType())) {
      // Becoming ExternalName: the Service gives its addresses up (released once the change is stored).
      spec.setClusterIP(null);
      spec.setClusterIPs(null);
      spec.setIpFamilies(null);
      spec.setIpFamilyPolicy(null);
    }
  }

  private static IpAddress parse(String text, String field) {
    try {
      return IpAddress.parse(text);
    } catch (AddressFormatException e) {
      throw AdmissionDenied.invalid(field + ": " + e.getMessage()
          + "; set a valid address, \"None\" for a headless Service, or leave it empty to get one");
    }
  }

  // ---- ports ------------------------------------------------------------------------------

  /**
   * NodePorts as kube-apiserver gives them. On create, ports with the same number share one
   * (53/TCP and 53/UDP), and one nodePort may not serve two port numbers. On update, omitted
   * nodePorts come back from the stored object by port name unless another port now claims that
   * value, and each port still without one gets its own (upstream's patchAllocatedValues and
   * updateNodePorts; TestUpdatePatchAllocatedValues "swap-ports" and "partial-swap-ports").
   */
  private void planNodePorts(String type, ServiceSpec oldSpec) {
    boolean usesNodePorts = usesNodePorts(type);
    boolean allocates = allocatesNodePorts(spec);
    boolean wantsHealthCheck = type.equals("LoadBalancer") && "Local".equals(spec.getExternalTrafficPolicy());
    List<ServicePort> ports = spec.getPorts() == null ? List.of() : spec.getPorts();
    boolean creating = oldSpec == null;
    if (!usesNodePorts) {
      dropPorts(oldSpec, false);
    } else if (!creating && usesNodePorts(oldSpec.getType()) && allocates) {
      patchOmittedNodePorts(ports, oldSpec);
    }
    Map<String, Integer> explicit = new LinkedHashMap<>();
    Map<Integer, Integer> firstWithNodePort = new LinkedHashMap<>();
    for (int i = 0; i < ports.size(); i++) {
      ServicePort port = ports.get(i);
      int nodePort = port.getNodePort() == null ? 0 : port.getNodePort();
      String field = "spec.ports[" + i + "].nodePort";
      if (nodePort < 0 || nodePort > 65535) {
        throw AdmissionDenied.invalid(field + ": " + nodePort + " is not a port number (1-65535)");
      }
      if (nodePort != 0 && !usesNodePorts) {
        throw AdmissionDenied.invalid(field + ": may not be set for a Service of type " + type
            + "; use type NodePort or LoadBalancer, or remove it");
      }
      Integer first = nodePort == 0 ? null : explicit.putIfAbsent(nodePort + "/" + protocol(port), i);
      if (first != null) {
        throw AdmissionDenied.invalid(field + ": " + nodePort + "/" + protocol(port) + " is already used by spec.ports["
            + first + "]");
      }
      Integer other = nodePort == 0 ? null : firstWithNodePort.putIfAbsent(nodePort, i);
      if (creating && other != null && !Objects.equals(ports.get(other).getPort(), port.getPort())) {
        // Upstream's TestCreateInitNodePorts "multi-port multi-proto conflict" (create only:
        // upstream's update path allows it).
        throw AdmissionDenied.invalid(field + ": " + nodePort + " is already used by spec.ports[" + other
            + "] (port " + ports.get(other).getPort() + "); only ports with the same port number (53/TCP and"
            + " 53/UDP) may share a nodePort");
      }
    }
    Set<Integer> oldPorts = oldNodePorts(oldSpec);
    Map<Integer, PortClaim> claimByNodePort = new LinkedHashMap<>();
    for (int i = 0; i < ports.size(); i++) {
      Integer nodePort = ports.get(i).getNodePort();
      if (nodePort != null && nodePort != 0) {
        int index = i;
        PortClaim claim = claimByNodePort.computeIfAbsent(nodePort, n -> addPortClaim(
            oldPorts.contains(n) ? PortClaim.kept(n) : PortClaim.specific(n), "spec.ports[" + index + "].nodePort"));
        portTargets.get(claim).add(i);
      }
    }
    if (allocates) {
      planUnsetNodePorts(ports, creating, claimByNodePort);
    }
    planHealthCheck(wantsHealthCheck, oldSpec, claimByNodePort.keySet());
  }

  /**
   * Ports still without a nodePort: on create, ports with the same number share one (an
   * explicit one of the group, or one allocated for the group); on update each gets its own.
   */
  private void planUnsetNodePorts(List<ServicePort> ports, boolean creating, Map<Integer, PortClaim> claimByNodePort) {
    Map<Integer, PortClaim> sharedByPortNumber = new LinkedHashMap<>();
    if (creating) {
      for (ServicePort port : ports) {
        if (port.getPort() != null && port.getNodePort() != null && port.getNodePort() != 0) {
          sharedByPortNumber.putIfAbsent(port.getPort(), claimByNodePort.get(port.getNodePort()));
        }
      }
    }
    for (int i = 0; i < ports.size(); i++) {
      ServicePort port = ports.get(i);
      if (port.getNodePort() != null && port.getNodePort() != 0) {
        continue;
      }
      PortClaim claim = creating && port.getPort() != null ? sharedByPortNumber.get(port.getPort()) : null;
      if (claim == null) {
        claim = addPortClaim(PortClaim.dynamic(), "spec.ports[" + i + "].nodePort");
        if (creating && port.getPort() != null) {
          sharedByPortNumber.put(port.getPort(), claim);
        }
      }
      portTargets.get(claim).add(i);
    }
  }

  private void planHealthCheck(boolean wanted, ServiceSpec oldSpec, Set<Integer> portNodePorts) {
    int asked = spec.getHealthCheckNodePort() == null ? 0 : spec.getHealthCheckNodePort();
    if (!wanted) {
      Integer old = oldSpec == null ? null : oldSpec.getHealthCheckNodePort();
      if (asked != 0 && old != null && old == asked) {
        spec.setHealthCheckNodePort(null);  // no longer used by the new type or policy
      } else if (asked != 0) {
        throw AdmissionDenied.invalid("spec.healthCheckNodePort: only a LoadBalancer Service with"
            + " externalTrafficPolicy Local has one; remove it");
      }
      return;
    }
    Integer oldHealthCheck = oldSpec == null ? null : oldSpec.getHealthCheckNodePort();
    if (asked == 0 && oldHealthCheck != null && oldHealthCheck != 0) {
      asked = oldHealthCheck;
    }
    if (asked < 0 || asked > 65535) {
      throw AdmissionDenied.invalid("spec.healthCheckNodePort: " + asked + " is not a port number (1-65535)");
    }
    if (oldHealthCheck != null && oldHealthCheck != 0 && asked != oldHealthCheck) {
      throw AdmissionDenied.invalid("spec.healthCheckNodePort: field is immutable once set: it is " + oldHealthCheck
          + " and cannot become " + asked);
    }
    List<ServicePort> ports = spec.getPorts() == null ? List.of() : spec.getPorts();
    for (int i = 0; asked != 0 && portNodePorts.contains(asked) && i < ports.size(); i++) {
      if (!Objects.equals(ports.get(i).getNodePort(), asked)) {
        continue;
      }
      if (Objects.equals(oldHealthCheck, asked)) {
        // The health check keeps its port; the port that now asks for it is the one in error
        // (upstream's "swap-port-with-hcnp" and "partial-swap-port-with-hcnp").
        throw AdmissionDenied.invalid("spec.ports[" + i + "].nodePort: " + asked + " is this Service's"
            + " healthCheckNodePort; choose another port, or leave it unset (0) to get one");
      }
      throw AdmissionDenied.invalid("spec.healthCheckNodePort: " + asked + " is already spec.ports[" + i
          + "].nodePort; the health check needs a port of its own");
    }
    PortClaim claim = addPortClaim(asked == 0 ? PortClaim.dynamic()
        : Objects.equals(oldHealthCheck, asked) ? PortClaim.kept(asked) : PortClaim.specific(asked),
        "spec.healthCheckNodePort");
    portTargets.get(claim).add(-1);
  }

  private PortClaim addPortClaim(PortClaim claim, String field) {
    portClaims.add(claim);
    fields.put(claim, field);
    portTargets.put(claim, new ArrayList<>());
    return claim;
  }

  /**
   * On update, a port sent without a nodePort keeps the one the stored port of the same name
   * had, unless another port of the request now claims that value: upstream matches by name, so
   * values follow their ports when the list is reordered (patchAllocatedValues).
   */
  private static void patchOmittedNodePorts(List<ServicePort> ports, ServiceSpec oldSpec) {
    if (oldSpec.getPorts() == null) {
      return;
    }
    Set<Integer> claimedNow = new HashSet<>();
    ports.stream().map(ServicePort::getNodePort).filter(n -> n != null && n != 0).forEach(claimedNow::add);
    Map<String, Integer> oldByName = new HashMap<>();
    for (ServicePort before : oldSpec.getPorts()) {
      oldByName.put(before.getName() == null ? "" : before.getName(),
          before.getNodePort() == null ? 0 : before.getNodePort());
    }
    for (ServicePort port : ports) {
      if (port.getNodePort() != null && port.getNodePort() != 0) {
        continue;
      }
      int old = oldByName.getOrDefault(port.getName() == null ? "" : port.getName(), 0);
      if (old != 0 && !claimedNow.contains(old)) {
        port.setNodePort(old);
      }
    }
  }

  /**
   * For types without NodePorts: nodePorts and healthCheckNodePort that are just what the
   * stored object carried are dropped (the Service gives them up; they are released once the
   * change is stored). With {@code denyOthers}, ExternalName, nothing is kept either way.
   */
  private void dropPorts(ServiceSpec oldSpec, boolean denyOthers) {
    List<ServicePort> ports = spec.getPorts() == null ? List.of() : spec.getPorts();
    Set<Integer> old = oldNodePorts(oldSpec);
    for (ServicePort port : ports) {
      Integer nodePort = port.getNodePort();
      if (nodePort != null && nodePort != 0 && (denyOthers || old.contains(nodePort))) {
        port.setNodePort(null);
      }
    }
    if (denyOthers && spec.getHealthCheckNodePort() != null) {
      spec.setHealthCheckNodePort(null);
    }
  }

  private static Set<Integer> oldNodePorts(ServiceSpec oldSpec) {
    Set<Integer> ports = new HashSet<>();
    if (oldSpec != null && oldSpec.getPorts() != null) {
      oldSpec.getPorts().stream().map(ServicePort::getNodePort).filter(n -> n != null && n != 0).forEach(ports::add);
    }
    return ports;
  }

  private static boolean usesNodePorts(String type) {
    return "NodePort".equals(type) || "LoadBalancer".equals(type);
  }

  /** Whether ports without a nodePort get one: NodePort, and LoadBalancer unless told not to. */
  private static boolean allocatesNodePorts(ServiceSpec spec) {
    return "NodePort".equals(spec.getType())
        || ("LoadBalancer".equals(spec.getType()) && !Boolean.FALSE.equals(spec.getAllocateLoadBalancerNodePorts()));
  }

  private static String protocol(ServicePort port) {
    return port.getProtocol() == null ? "TCP" : port.getProtocol();
  }

  private static String names(List<IpFamily> families) {
    return families.stream().map(IpFamily::kubernetesName).toList().toString();
  }

  private static String emptyToNull(String value) {
    return value == null || value.isEmpty() ? null : value;
  }

  private static List<String> nonEmpty(List<String> values) {
    return values == null ? List.of() : values.stream().filter(v -> v != null && !v.isEmpty()).toList();
  }
}
