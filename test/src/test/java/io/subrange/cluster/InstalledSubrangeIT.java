package io.subrange.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.subrange.testing.MonitoringQueries;
import io.subrange.testing.Processes;
import io.subrange.testing.RepoLayout;
import io.subrange.testing.ServiceLoad;
import io.subrange.testing.StoredAllocations;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * subrange installed as a user installs it, running as pods in a real single-node cluster
 * (test/scripts/cluster: kubelet, containerd, kube-proxy, controller-manager and scheduler beside
 * the API server), driven as a user drives it: with kubectl. test/scripts/cluster-e2e brings the
 * cluster up, builds and loads the image, installs subrange from manifests/ and runs this class
 * with KUBECONFIG pointing at the cluster.
 *
 * <p>The order matters only at the end: the uninstall runs last.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class InstalledSubrangeIT {

  private static final String SYSTEM = "subrange-system";
  /** Where the state ConfigMaps and the reconciler's Lease live (manifests/namespace.yaml). */
  private static final String STATE = "subrange-state";
  private static final String NS = "e2e";
  private static final String NODE = "subrange-node";
  private static final String NODE_IP = "198.51.100.10";
  /** test/scripts/cluster's --service-cluster-ip-range and pod range (manifests/configmap.yaml's). */
  private static final String SERVICE_CIDR = "10.96.0.0/12";
  private static final String POD_CIDR = "10.244.0.0/16";
  /** KEP-3070's static band of a /12: 256 addresses from 10.96.0.1. */
  private static final String STATIC_BAND_END = "10.96.1.0";
  /** KEP-3668's static band of 30000-32767: 30000-30085. */
  private static final int NODE_PORT_STATIC_END = 30085;
  /** Batches of 20 the rolling-restart test keeps: about 800 Services, 400 of them NodePort. */
  private static final int ROLLOUT_BATCHES_KEPT = 40;

  private static KubernetesClient client;
  private static RepoLayout repo;

  @BeforeAll
  static void connect() {
    String kubeconfig = System.getenv("KUBECONFIG");
    assertThat(kubeconfig).as("KUBECONFIG of the cluster (test/scripts/cluster-e2e sets it)").isNotBlank();
    assertThat(Path.of(kubeconfig)).exists();
    client = new KubernetesClientBuilder().withConfig(Config.autoConfigure(null)).build();
    repo = RepoLayout.locate();
    kubectl("create", "namespace", NS);
  }

  @AfterAll
  static void close() {
    if (client != null) {
      client.close();
    }
  }

  @Test
  @Order(1)
  void threeWebhookPodsOnThePodNetworkAndTheReconcilerOnTheHostAreReady() {
    Deployment webhook = client.apps().deployments().inNamespace(SYSTEM).withName("subrange-webhook").get();
    assertThat(webhook.getStatus().getReadyReplicas()).as("ready webhook replicas").isEqualTo(3);
    Deployment reconciler = client.apps().deployments().inNamespace(SYSTEM).withName("subrange-reconciler").get();
    assertThat(reconciler.getStatus().getReadyReplicas()).as("ready reconcilers").isEqualTo(1);

    List<Pod> webhookPods = pods("subrange-webhook");
    assertThat(webhookPods).hasSize(3).allSatisfy(pod -> {
      assertThat(pod.getSpec().getContainers().get(0).getImage()).isEqualTo("subrange-webhook:0.1.0");
      assertThat(inCidr(pod.getStatus().getPodIP(), POD_CIDR)).as("pod IP %s on the pod network",
          pod.getStatus().getPodIP()).isTrue();
      assertThat(pod.getSpec().getPriorityClassName()).isEqualTo("system-cluster-critical");
    });
    assertThat(pods("subrange-reconciler")).singleElement()
        .satisfies(pod -> assertThat(pod.getSpec().getHostNetwork()).isTrue());
    // TLS through BoringSSL, serving and to the API server, as built into the image: the native
    // library unpacks into the pod's /tmp (the root filesystem is read-only).
    assertThat(webhookPods).allSatisfy(pod -> assertThat(log(pod))
        .contains("TLS engine: BoringSSL through netty-tcnative")
        .contains("API server client TLS: BoringSSL through netty-tcnative"));
    assertThat(log(pods("subrange-reconciler").get(0))).contains("API server client TLS: BoringSSL through netty-tcnative");
  }

  private static String log(Pod pod) {
    return client.pods().inNamespace(SYSTEM).withName(pod.getMetadata().getName()).getLog();
  }

  /**
   * The node registered before subrange existed, with no pod CIDR (kube-controller-manager runs
   * with --allocate-node-cidrs=false), so it had no pod network and was NotReady. The reconciler,
   * on the host network, gave it one; only then could the webhook pods start.
   */
  @Test
  @Order(2)
  void theNodeGotItsPodCidrFromTheReconcilerAndBecameReady() {
    Node node = client.nodes().withName(NODE).get();
    String podCidr = node.getSpec().getPodCIDR();
    assertThat(podCidr).as("spec.podCIDR").isNotNull();
    assertThat(node.getSpec().getPodCIDRs()).first().isEqualTo(podCidr);
    assertThat(podCidr).endsWith("/24");
    assertThat(inCidr(podCidr.substring(0, podCidr.indexOf('/')), POD_CIDR)).as(podCidr).isTrue();
    assertThat(node.getStatus().getConditions()).filteredOn(c -> "Ready".equals(c.getType()))
        .extracting(NodeCondition::getStatus).containsExactly("True");
    // The reconciler gave it (no webhook pod could run before the node had a pod network): its
    // metrics, on the node's address (host network), count the assignment.
    assertThat(reconcilerMetrics())
        .containsPattern("subrange_reconciler_repairs_total\\{[^}]*kind=\"podcidr\",type=\"assigned\"} 1.0");
  }

  @Test
  @Order(3)
  void kubectlCreateGetsAnAddressFromTheDynamicBand() {
    var created = kubectl("-n", NS, "create", "service", "clusterip", "demo", "--tcp=80");
    assertThat(created.exitCode()).as(created.stderr()).isZero();
    String ip = service("demo").getSpec().getClusterIP();
    assertThat(inCidr(ip, SERVICE_CIDR)).isTrue();
    assertThat(toNumber(ip)).as("%s above the static band (ends %s)", ip, STATIC_BAND_END)
        .isGreaterThan(toNumber(STATIC_BAND_END));
  }

  @Test
  @Order(4)
  void aStaticAddressIsHonouredAndASecondClaimIsDeniedNamingTheHolder() {
    var dns = kubectl("-n", NS, "create", "service", "clusterip", "dns", "--tcp=53", "--clusterip=10.96.0.10");
    assertThat(dns.exitCode()).as(dns.stderr()).isZero();
    assertThat(service("dns").getSpec().getClusterIP()).isEqualTo("10.96.0.10");

    var clash = kubectl("-n", NS, "create", "service", "clusterip", "dns2", "--tcp=53", "--clusterip=10.96.0.10");
    assertThat(clash.exitCode()).isNotZero();
    assertThat(clash.stderr()).contains("denied the request")
        .contains("10.96.0.10 is already allocated to Service " + NS + "/dns");
    assertThat(client.services().inNamespace(NS).withName("dns2").get()).isNull();
  }

  @Test
  @Order(5)
  void aNodePortComesFromAboveTheStaticBand() {
    var created = kubectl("-n", NS, "create", "service", "nodeport", "web", "--tcp=80");
    assertThat(created.exitCode()).as(created.stderr()).isZero();
    ServicePort port = service("web").getSpec().getPorts().get(0);
    assertThat(port.getNodePort()).isBetween(NODE_PORT_STATIC_END + 1, 32767);

    var pinned = kubectl("-n", NS, "create", "service", "nodeport", "pinned", "--tcp=80", "--node-port=30010");
    assertThat(pinned.exitCode()).as(pinned.stderr()).isZero();
    assertThat(service("pinned").getSpec().getPorts().get(0).getNodePort()).isEqualTo(30010);
  }

  /**
   * A webhook pod deleted while Services are being created: the API server's calls to it fail
   * (clients retry those, as kubectl users and controllers do), and nothing is handed out twice
   * or lost: every Service has its own address and ports, and subrange's state names it as
   * their holder.
   */
  /**
   * Every metric the PrometheusRule and the Grafana dashboard query is one this install serves,
   * scraped from every webhook pod (pod IP, :8081) and the reconciler (node IP, :10371) after
   * the creates, clash and pod CIDR assignment above. Prometheus scrapes the pods too: the
   * Service carries only the admission port. (The scrape comes from the node, which
   * manifests/networkpolicy.yaml would not let through to :8081; this cluster's bridge CNI
   * enforces no NetworkPolicy.)
   */
  @Test
  @Order(6)
  void theAlertsAndTheDashboardQueryOnlyMetricsSubrangeServes() {
    Set<String> served = new TreeSet<>(MonitoringQueries.metricsServed(scrape(NODE_IP, 10371)));
    for (Pod pod : pods("subrange-webhook")) {
      served.addAll(MonitoringQueries.metricsServed(scrape(pod.getStatus().getPodIP(), 8081)));
    }
    assertThat(MonitoringQueries.metricsQueried(repo)).isNotEmpty().allSatisfy(name ->
        assertThat(served).as("%s, queried in manifests/monitoring, is not served", name).contains(name));
  }

  /**
   * The allocation state and the reconciler's Lease live in their own namespace, apart from
   * subrange-config; the Service offers the API server the admission port only.
   */
  @Test
  @Order(7)
  void theStateLivesApartFromTheConfiguration() {
    assertThat(client.configMaps().inNamespace(STATE).withLabel("subrange.io/range-kind").list().getItems())
        .as("state ConfigMaps in " + STATE).isNotEmpty();
    assertThat(client.configMaps().inNamespace(SYSTEM).withLabel("subrange.io/range-kind").list().getItems())
        .as("state ConfigMaps in " + SYSTEM).isEmpty();
    assertThat(client.configMaps().inNamespace(SYSTEM).withName("subrange-config").get()).isNotNull();
    var lease = kubectl("-n", STATE, "get", "leases", "subrange-reconciler", "-o", "name");
    assertThat(lease.exitCode()).as(lease.stderr()).isZero();
    assertThat(client.services().inNamespace(SYSTEM).withName("subrange-webhook").get().getSpec().getPorts())
        .extracting(ServicePort::getPort).containsExactly(443);
  }

  /** The PodDisruptionBudget (policy/v1beta1 on 1.20) lets one of the three go at a time. */
  @Test
  @Order(8)
  void thePodDisruptionBudgetAllowsOneWebhookPodToGo() {
    var pdb = kubectl("-n", SYSTEM, "get", "pdb", "subrange-webhook", "-o",
        "jsonpath={.spec.minAvailable} {.status.currentHealthy} {.status.disruptionsAllowed}");
    assertThat(pdb.exitCode()).as(pdb.stderr()).isZero();
    assertThat(pdb.stdout()).isEqualTo("2 3 1");
  }

  @Test
  @Order(9)
  void deletingAWebhookPodUnderLoadLosesNothing() {
    String victim = pods("subrange-webhook").get(0).getMetadata().getName();
    AtomicBoolean deleted = new AtomicBoolean();
    ServiceLoad.Report report;
    try (KubernetesClient load = ServiceLoad.concurrentClient(client.getConfiguration(), 8)) {
      report = ServiceLoad.create(load, NS, "kill", 120, 8, done -> {
        if (done == 30 && deleted.compareAndSet(false, true)) {
          client.pods().inNamespace(SYSTEM).withName(victim).withGracePeriod(0).delete();
        }
      });
    }
    assertThat(deleted).isTrue();
    assertThat(report.failures()).as(report.summary()).isEmpty();
    assertNothingLostOrShared("kill", 120);
    awaitWebhooksReady();
  }

  /**
   * `kubectl rollout restart`: new pods come up before old ones go, and no create fails. Creates
   * run in batches for as long as the rollout takes; a batch is checked and deleted once
   * {@link #ROLLOUT_BATCHES_KEPT} newer ones exist, so a slow rollout (270 s on a saturated
   * two-core node: over 5,000 Services, half of them NodePort) cannot fill the 2,768 NodePorts and
   * fail a create for a reason that is not the rollout.
   */
  @Test
  @Order(10)
  void aRollingRestartFailsNoCreate() throws Exception {
    var restart = kubectl("-n", SYSTEM, "rollout", "restart", "deployment/subrange-webhook");
    assertThat(restart.exitCode()).as(restart.stderr()).isZero();
    CompletableFuture<Processes.Result> rollout = CompletableFuture.supplyAsync(() ->
        kubectl("-n", SYSTEM, "rollout", "status", "deployment/subrange-webhook", "--timeout=420s"));
    List<ServiceLoad.Report> reports = new ArrayList<>();
    int checked = 0;
    try (KubernetesClient load = ServiceLoad.concurrentClient(client.getConfiguration(), 4)) {
      while (!rollout.isDone()) {
        reports.add(ServiceLoad.create(load, NS, "roll" + reports.size(), 20, 4, done -> { }));
        if (reports.size() - checked > ROLLOUT_BATCHES_KEPT) {
          assertRolloutBatch(reports, checked);
          ServiceLoad.deleteAll(client, NS, "roll" + checked++, 4);
        }
      }
    }
    Processes.Result status = rollout.get();
    assertThat(status.exitCode()).as(status.stderr()).isZero();
    assertThat(reports.size()).as("creates ran during the whole rollout").isGreaterThan(1);
    for (int b = checked; b < reports.size(); b++) {
      assertRolloutBatch(reports, b);
    }
  }

  /** README's uninstall leaves no CRD stuck Terminating, and Services work without subrange. */
  @Test
  @Order(100)
  void theDocumentedUninstallRemovesEverything() {
    Path uninstall = repo.root().resolve("manifests/uninstall.sh");
    assertThat(Files.isExecutable(uninstall)).isTrue();
    var result = Processes.exec(List.of(uninstall.toString()), repo.root(), 300);
    assertThat(result.exitCode()).as(result.stdout() + result.stderr()).isZero();

    assertThat(client.apiextensions().v1().customResourceDefinitions().withName("servicecidrs.subrange.io").get())
        .isNull();
    assertThat(client.apiextensions().v1().customResourceDefinitions()
        .withName("clustercidrs.networking.x-k8s.io").get()).isNull();
    assertThat(client.admissionRegistration().v1().mutatingWebhookConfigurations().withName("subrange").get())
        .isNull();
    assertThat(Processes.pollUntil(Duration.ofSeconds(120), 1000,
        () -> client.namespaces().withName(SYSTEM).get() == null)).as("namespace subrange-system gone").isTrue();
    assertThat(Processes.pollUntil(Duration.ofSeconds(120), 1000,
        () -> client.namespaces().withName(STATE).get() == null)).as("namespace subrange-state gone").isTrue();
    var after = kubectl("-n", NS, "create", "service", "clusterip", "after", "--tcp=80");
    assertThat(after.exitCode()).as("the API server alone admits Services: " + after.stderr()).isZero();
  }

  // --- helpers ---------------------------------------------------------------------------------

  private static void assertRolloutBatch(List<ServiceLoad.Report> reports, int batch) {
    ServiceLoad.Report report = reports.get(batch);
    assertThat(report.failures()).as(report.summary()).isEmpty();
    assertThat(report.retries()).as("creates that had to be retried: " + report.summary()).isZero();
    assertNothingLostOrShared("roll" + batch, 20);
  }

  /**
   * Every Service of the batch has values of its own, and subrange's state names it their holder:
   * at once for values written with the create, within the flush delay for values a replica
   * handed out from its reservations, and after the reconciler's grace (60 s in manifests/, then
   * its next pass) for values a replica handed out just before it was killed.
   */
  private static void assertNothingLostOrShared(String prefix, int count) {
    List<Service> services = client.services().inNamespace(NS).list().getItems().stream()
        .filter(s -> s.getMetadata().getName().startsWith(prefix + "-")).toList();
    assertThat(services).hasSize(count);
    Map<String, String> ipOwners = new HashMap<>();
    Map<Integer, String> portOwners = new HashMap<>();
    for (Service service : services) {
      String who = NS + "/" + service.getMetadata().getName();
      String ip = service.getSpec().getClusterIP();
      assertThat(ipOwners.put(ip, who)).as("%s shared by %s", ip, who).isNull();
      for (ServicePort port : service.getSpec().getPorts()) {
        if (port.getNodePort() != null) {
          assertThat(portOwners.put(port.getNodePort(), who)).isNull();
        }
      }
    }
    await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
      StoredAllocations stored = StoredAllocations.read(client, STATE);
      ipOwners.forEach((ip, who) -> assertThat(stored.clusterIps()).as("subrange's state for %s", ip)
          .containsEntry(ip, who));
      portOwners.forEach((port, who) -> assertThat(stored.nodePorts()).containsEntry(port, who));
    });
  }

  private static String reconcilerMetrics() {
    return scrape(NODE_IP, 10371);
  }

  private static String scrape(String host, int port) {
    try {
      return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://" + host + ":" + port
              + "/metrics")).build(),
          HttpResponse.BodyHandlers.ofString()).body();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static void awaitWebhooksReady() {
    var status = kubectl("-n", SYSTEM, "rollout", "status", "deployment/subrange-webhook", "--timeout=180s");
    assertThat(status.exitCode()).as(status.stderr()).isZero();
  }

  private static List<Pod> pods(String app) {
    return client.pods().inNamespace(SYSTEM).withLabel("app.kubernetes.io/name", app).list().getItems().stream()
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null).toList();
  }

  private static Service service(String name) {
    return client.services().inNamespace(NS).withName(name).get();
  }

  private static Processes.Result kubectl(String... args) {
    List<String> command = new ArrayList<>();
    command.add("kubectl");
    command.addAll(List.of(args));
    return Processes.exec(command, repo.root(), 300);
  }

  private static boolean inCidr(String address, String cidr) {
    int slash = cidr.indexOf('/');
    int prefix = Integer.parseInt(cidr.substring(slash + 1));
    BigInteger mask = BigInteger.ONE.shiftLeft(32).subtract(BigInteger.ONE.shiftLeft(32 - prefix));
    return toNumber(address).and(mask).equals(toNumber(cidr.substring(0, slash)));
  }

  private static BigInteger toNumber(String address) {
    try {
      return new BigInteger(1, InetAddress.getByName(address).getAddress());
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException(address, e);
    }
  }
}
