package io.subrange.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewStatus;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * manifests/rbac.yaml, applied for real, gives each of subrange's ServiceAccounts exactly what
 * its role needs, as the API server's own authorizer decides (SubjectAccessReview): every right
 * it must have, and the ones it must not have. And the Deployment runs each container as the
 * account these rights are for.
 */
@ExtendWith(E2eCluster.class)
class RbacIT {

  /**
   * subrange's namespace (the pods, their ServiceAccounts, subrange-config); the test reads it
   * from manifests/namespace.yaml and checks it.
   */
  static final String NS = "subrange-system";
  /**
   * Where the allocation state and the reconciler's Lease live, apart from the configuration
   * (manifests/namespace.yaml, SUBRANGE_KUBERNETES_NAMESPACE in manifests/configmap.yaml).
   */
  static final String STATE = "subrange-state";
  static final String WEBHOOK = "subrange-webhook";
  static final String RECONCILER = "subrange-reconciler";
  static final String TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount";

  /** One authorization decision the API server must make for a ServiceAccount. */
  record Expectation(String account, boolean allowed, String verb, String resource, String namespace) {

    /**
     * {@code resource} is written as kubectl writes it ({@code configmaps},
     * {@code leases.coordination.k8s.io}, {@code servicecidrs.subrange.io/status}), or a
     * non-resource path ({@code /apis}); {@code namespace} is null for cluster-scoped resources
     * and for "in every namespace".
     */
    Expectation {
      Objects.requireNonNull(account);
      Objects.requireNonNull(verb);
      Objects.requireNonNull(resource);
    }

    String user() {
      return "system:serviceaccount:" + NS + ":" + account;
    }

    boolean nonResource() {
      return resource.startsWith("/");
    }

    String plural() {
      String withoutSub = resource.contains("/") ? resource.substring(0, resource.indexOf('/')) : resource;
      return withoutSub.contains(".") ? withoutSub.substring(0, withoutSub.indexOf('.')) : withoutSub;
    }

    String group() {
      String withoutSub = resource.contains("/") ? resource.substring(0, resource.indexOf('/')) : resource;
      return withoutSub.contains(".") ? withoutSub.substring(withoutSub.indexOf('.') + 1) : "";
    }

    String subresource() {
      return resource.contains("/") ? resource.substring(resource.indexOf('/') + 1) : "";
    }

    String where() {
      if (nonResource()) {
        return "";
      }
      return namespace == null ? " (cluster-wide)" : " in namespace " + namespace;
    }

    @Override
    public String toString() {
      return account + (allowed ? " MAY " : " MAY NOT ") + verb + " " + resource + where();
    }
  }

  static Expectation may(String account, String verb, String resource, String namespace) {
    return new Expectation(account, true, verb, resource, namespace);
  }

  static Expectation mayNot(String account, String verb, String resource, String namespace) {
    return new Expectation(account, false, verb, resource, namespace);
  }

  static List<Expectation> each(String account, boolean allowed, List<String> verbs, String resource,
      String namespace) {
    return verbs.stream().map(verb -> new Expectation(account, allowed, verb, resource, namespace)).toList();
  }

  static final List<String> READ = List.of("get", "list", "watch");
  static final String SERVICE_CIDRS = "servicecidrs.subrange.io";
  static final String CLUSTER_CIDRS = "clustercidrs.networking.x-k8s.io";
  static final String LEASES = "leases.coordination.k8s.io";

  static Stream<Expectation> expectations() {
    List<Expectation> table = new ArrayList<>();

    // ---- subrange-webhook: admission replicas ---------------------------------------------
    // The allocation state: read it, write it with compare-and-swap, patch a shard to take a
    // turn at it; nothing more.
    table.addAll(each(WEBHOOK, true, List.of("get", "list", "watch", "update", "patch"), "configmaps", STATE));
    table.addAll(each(WEBHOOK, false, List.of("create", "delete", "deletecollection"), "configmaps", STATE));
    table.addAll(each(WEBHOOK, false, List.of("get", "update"), "configmaps", "default"));
    // ... and not the configuration: subrange-config (the JVM flags every subrange pod runs
    // with) lives in subrange's own namespace, where this account may write nothing.
    table.addAll(each(WEBHOOK, false, List.of("update", "patch", "create", "delete"), "configmaps", NS));
    // The range objects: read only.
    table.addAll(each(WEBHOOK, true, READ, SERVICE_CIDRS, null));
    table.addAll(each(WEBHOOK, true, READ, CLUSTER_CIDRS, null));
    table.addAll(each(WEBHOOK, false, List.of("create", "update", "patch", "delete"), SERVICE_CIDRS, null));
    table.addAll(each(WEBHOOK, false, List.of("create", "update", "patch", "delete"), CLUSTER_CIDRS, null));
    table.addAll(each(WEBHOOK, false, List.of("update", "patch"), SERVICE_CIDRS + "/status", null));
    // API discovery (whether the range CRDs are served): granted to everyone authenticated.
    table.add(may(WEBHOOK, "get", "/apis", null));
    table.add(may(WEBHOOK, "get", "/apis/subrange.io/v1alpha1", null));
    // Nodes reach it through admission only.
    // One Service by name (is a create a duplicate?), nothing more.
    table.add(may(WEBHOOK, "get", "services", "default"));
    table.addAll(each(WEBHOOK, false, List.of("list", "watch", "update", "patch", "create", "delete"), "services", null));
    table.addAll(each(WEBHOOK, false, List.of("get", "list", "watch", "update"), "nodes", null));
    // No Lease, no Events: those are the reconciler's.
    table.addAll(each(WEBHOOK, false, List.of("get", "create", "update", "patch"), LEASES, STATE));
    table.addAll(each(WEBHOOK, false, List.of("get", "create", "update", "patch"), LEASES, NS));
    table.addAll(each(WEBHOOK, false, List.of("create", "patch"), "events", NS));
    table.add(mayNot(WEBHOOK, "create", "events", "default"));
    // Nothing else: no Secrets, no pods.
    table.addAll(each(WEBHOOK, false, List.of("get", "list"), "secrets", NS));
    table.addAll(each(WEBHOOK, false, List.of("get", "list"), "secrets", STATE));
    table.add(mayNot(WEBHOOK, "create", "pods", NS));

    // ---- subrange-reconciler --------------------------------------------------------------
    // The allocation state: build, rebuild, release, delete what no range uses.
    table.addAll(each(RECONCILER, true, List.of("get", "list", "watch", "create", "update", "patch", "delete"),
        "configmaps", STATE));
    // ... in the state's namespace only: not subrange-config beside the pods, nor anywhere else.
    table.addAll(each(RECONCILER, false, List.of("update", "patch", "delete"), "configmaps", NS));
    table.addAll(each(RECONCILER, false, List.of("get", "create", "update", "delete"), "configmaps", "default"));
    table.addAll(each(RECONCILER, false, List.of("create", "update"), "configmaps", "kube-system"));
    // Leader election, in the state's namespace.
    table.addAll(each(RECONCILER, true, List.of("get", "create", "update", "patch"), LEASES, STATE));
    table.add(mayNot(RECONCILER, "delete", LEASES, STATE));
    table.addAll(each(RECONCILER, false, List.of("create", "update"), LEASES, NS));
    table.addAll(each(RECONCILER, false, List.of("get", "update"), LEASES, "kube-system"));
    // Services and Nodes, everywhere, read.
    table.addAll(each(RECONCILER, true, READ, "services", null));
    table.addAll(each(RECONCILER, true, READ, "services", "default"));
    table.addAll(each(RECONCILER, true, READ, "nodes", null));
    table.addAll(each(RECONCILER, false, List.of("create", "update", "patch", "delete"), "services", null));
    table.addAll(each(RECONCILER, false, List.of("update", "patch", "delete"), "services", "default"));
    table.addAll(each(RECONCILER, false, List.of("update", "patch", "delete"), "services/status", "default"));
    // ... and patches a Node's pod CIDRs when it has none; never creates, replaces or deletes one.
    table.add(may(RECONCILER, "patch", "nodes", null));
    table.addAll(each(RECONCILER, false, List.of("create", "update", "delete"), "nodes", null));
    table.addAll(each(RECONCILER, false, List.of("update", "patch"), "nodes/status", null));
    // Events on what it repairs, in that object's namespace (a Node's go to "default").
    table.addAll(each(RECONCILER, true, List.of("create", "patch"), "events", null));
    table.addAll(each(RECONCILER, true, List.of("create", "patch"), "events", "default"));
    table.addAll(each(RECONCILER, true, List.of("create", "patch"), "events", "kube-system"));
    table.addAll(each(RECONCILER, false, List.of("delete", "update"), "events", "default"));
    table.add(mayNot(RECONCILER, "create", "events.events.k8s.io", "default"));
    // The range objects: defaults, finalizers, ServiceCIDR status; never delete them.
    table.addAll(each(RECONCILER, true, List.of("get", "list", "watch", "create", "update", "patch"),
        SERVICE_CIDRS, null));
    table.addAll(each(RECONCILER, true, List.of("get", "list", "watch", "create", "update", "patch"),
        CLUSTER_CIDRS, null));
    table.addAll(each(RECONCILER, true, List.of("get", "update", "patch"), SERVICE_CIDRS + "/status", null));
    table.addAll(each(RECONCILER, false, List.of("delete", "deletecollection"), SERVICE_CIDRS, null));
    table.addAll(each(RECONCILER, false, List.of("delete", "deletecollection"), CLUSTER_CIDRS, null));
    table.add(may(RECONCILER, "get", "/apis", null));
    // Nothing else.
    table.addAll(each(RECONCILER, false, List.of("get", "list"), "secrets", NS));
    table.addAll(each(RECONCILER, false, List.of("get", "list"), "secrets", STATE));
    table.add(mayNot(RECONCILER, "get", "secrets", "default"));
    table.addAll(each(RECONCILER, false, List.of("create", "delete"), "pods", NS));
    table.add(mayNot(RECONCILER, "create", "pods", "default"));
    table.add(mayNot(RECONCILER, "create", "serviceaccounts/token", NS));
    table.add(mayNot(RECONCILER, "update", "roles.rbac.authorization.k8s.io", NS));
    table.add(mayNot(RECONCILER, "update", "roles.rbac.authorization.k8s.io", STATE));
    table.add(mayNot(RECONCILER, "update", "customresourcedefinitions.apiextensions.k8s.io", null));
    return table.stream();
  }

  @BeforeAll
  static void applyNamespaceAndRbac(E2eCluster cluster) throws IOException {
    Path manifests = cluster.repo().manifests();
    // Both namespaces, subrange's own and the state's, before the Roles and RoleBindings in them.
    List<HasMetadata> namespaces = loadAll(cluster, manifests.resolve("namespace.yaml"));
    assertThat(namespaces).as("manifests/namespace.yaml")
        .allSatisfy(o -> assertThat(o).isInstanceOf(Namespace.class))
        .extracting(o -> o.getMetadata().getName()).containsExactlyInAnyOrder(NS, STATE);
    for (String file : List.of("namespace.yaml", "rbac.yaml")) {
      var applied = cluster.kubectl("apply", "-f", manifests.resolve(file).toString());
      assertThat(applied.exitCode()).as("kubectl apply -f manifests/" + file + ": " + applied.stderr()).isZero();
    }
  }

  @AfterAll
  static void removeRbac(E2eCluster cluster) {
    // The namespace stays: other tests apply it too, and a terminating namespace would refuse them.
    cluster.kubectl("delete", "--ignore-not-found", "-f", cluster.repo().manifests().resolve("rbac.yaml").toString());
  }

  @Test
  void theTableCoversBothAccountsBothWays() {
    assertThat(expectations().map(e -> e.account() + " " + e.allowed()).distinct())
        .containsExactlyInAnyOrder(WEBHOOK + " true", WEBHOOK + " false", RECONCILER + " true", RECONCILER + " false");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("expectations")
  void theApiServerDecidesAsTheRoleNeeds(Expectation expected, E2eCluster cluster) {
    SubjectAccessReviewStatus status = review(cluster, expected);
    assertThat(status.getAllowed())
        .as("%s: expected the API server to %s %s to %s %s%s, but it %s (reason: %s%s)", expected,
            expected.allowed() ? "ALLOW" : "DENY", expected.user(), expected.verb(), expected.resource(),
            expected.where(), Boolean.TRUE.equals(status.getAllowed()) ? "allowed it" : "denied it",
            Optional.ofNullable(status.getReason()).filter(r -> !r.isBlank()).orElse("none given"),
            Optional.ofNullable(status.getEvaluationError()).filter(r -> !r.isBlank())
                .map(e -> "; evaluation error: " + e).orElse(""))
        .isEqualTo(expected.allowed());
  }

  /**
   * The rights above are only worth something if each role's pods authenticate as its account:
   * the webhook Deployment runs as subrange-webhook, the reconciler Deployment as
   * subrange-reconciler, each with the token the ServiceAccount admission plugin mounts.
   */
  @Test
  void theDeploymentsRunEachRoleAsItsOwnAccount(E2eCluster cluster) throws IOException {
    Path manifests = cluster.repo().manifests();
    List<HasMetadata> rbac = loadAll(cluster, manifests.resolve("rbac.yaml"));
    assertThat(rbac).filteredOn(ServiceAccount.class::isInstance).extracting(o -> o.getMetadata().getName())
        .containsExactlyInAnyOrder(WEBHOOK, RECONCILER);
    // The accounts live with their pods; the state Roles and RoleBindings with the state, and
    // nothing grants a namespaced right in subrange-system.
    rbac.forEach(o -> {
      if (!o.getKind().startsWith("Cluster")) {
        assertThat(o.getMetadata().getNamespace()).as(o.getKind() + " " + o.getMetadata().getName())
            .isEqualTo(o instanceof ServiceAccount ? NS : STATE);
      }
    });
    assertThat(rbac).filteredOn(RoleBinding.class::isInstance).map(RoleBinding.class::cast)
        .flatExtracting(RoleBinding::getSubjects).isNotEmpty()
        .allSatisfy(subject -> assertThat(subject.getNamespace()).as(subject.getName()).isEqualTo(NS));
    assertThat(rbac).filteredOn(ClusterRoleBinding.class::isInstance).map(ClusterRoleBinding.class::cast)
        .flatExtracting(ClusterRoleBinding::getSubjects).isNotEmpty()
        .allSatisfy(subject -> assertThat(subject.getNamespace()).as(subject.getName()).isEqualTo(NS));
    // ... and the pods look for their state where those Roles are.
    ConfigMap config = load(cluster, manifests.resolve("configmap.yaml"), ConfigMap.class);
    assertThat(config.getMetadata().getNamespace()).isEqualTo(NS);
    assertThat(config.getData()).containsEntry("SUBRANGE_KUBERNETES_NAMESPACE", STATE);
    assertThat(rbac).filteredOn(ServiceAccount.class::isInstance).map(ServiceAccount.class::cast)
        .allSatisfy(account -> assertThat(account.getAutomountServiceAccountToken())
            .as("%s's pods need its token", account.getMetadata().getName()).isNotEqualTo(Boolean.FALSE));

    PodSpec webhookPod = load(cluster, manifests.resolve("deployment.yaml"), Deployment.class).getSpec()
        .getTemplate().getSpec();
    PodSpec reconcilerPod = load(cluster, manifests.resolve("reconciler.yaml"), Deployment.class).getSpec()
        .getTemplate().getSpec();
    assertThat(webhookPod.getServiceAccountName()).isEqualTo(WEBHOOK);
    assertThat(reconcilerPod.getServiceAccountName()).isEqualTo(RECONCILER);
    assertThat(webhookPod.getContainers()).singleElement().isEqualTo(containerWithRole(webhookPod, "webhook"));
    assertThat(reconcilerPod.getContainers()).singleElement()
        .isEqualTo(containerWithRole(reconcilerPod, "reconciler"));
    for (PodSpec pod : List.of(webhookPod, reconcilerPod)) {
      assertThat(pod.getContainers().get(0).getVolumeMounts())
          .as("no container replaces the token its pod's own account gets")
          .extracting(VolumeMount::getMountPath).doesNotContain(TOKEN_PATH);
    }
  }

  private static SubjectAccessReviewStatus review(E2eCluster cluster, Expectation expected) {
    var spec = new SubjectAccessReviewBuilder().withNewSpec()
        .withUser(expected.user())
        // What a ServiceAccount token authenticates as.
        .withGroups("system:serviceaccounts", "system:serviceaccounts:" + NS, "system:authenticated");
    if (expected.nonResource()) {
      spec.withNewNonResourceAttributes().withVerb(expected.verb()).withPath(expected.resource())
          .endNonResourceAttributes();
    } else {
      spec.withNewResourceAttributes()
          .withVerb(expected.verb())
          .withGroup(expected.group())
          .withResource(expected.plural())
          .withSubresource(expected.subresource())
          .withNamespace(expected.namespace() == null ? "" : expected.namespace())
          .endResourceAttributes();
    }
    SubjectAccessReview review = cluster.client().authorization().v1().subjectAccessReview()
        .create(spec.endSpec().build());
    assertThat(review.getStatus()).as("SubjectAccessReview status for " + expected).isNotNull();
    return review.getStatus();
  }

  private static Container containerWithRole(PodSpec pod, String role) {
    return pod.getContainers().stream()
        .filter(c -> c.getEnv() != null && c.getEnv().stream()
            .anyMatch(e -> "SUBRANGE_ROLE".equals(e.getName()) && role.equals(e.getValue())))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no container in deployment.yaml has SUBRANGE_ROLE=" + role + "; "
            + pod.getContainers().stream().map(c -> c.getName() + " " + c.getEnv().stream()
                .map(EnvVar::getName).toList()).toList()));
  }

  private static <T> T load(E2eCluster cluster, Path file, Class<T> type) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      return cluster.client().getKubernetesSerialization().unmarshal(in, type);
    }
  }

  private static List<HasMetadata> loadAll(E2eCluster cluster, Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      return cluster.client().load(in).items();
    }
  }
}
