package io.subrange.testing;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhook;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhook;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.WebhookClientConfig;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.WebhookClientConfigBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.DoubleSupplier;
import java.util.stream.Stream;

/**
 * Registers subrange with a running API server using the repository's own manifests: the CRDs
 * in manifests/crds, and manifests/mutatingwebhookconfiguration.yaml and
 * validatingwebhookconfiguration.yaml (their rules, selectors, failure policies and timeouts)
 * with each webhook's in-cluster service reference swapped for subrange's loopback URL and CA,
 * under the names {@code subrange-loopback}.
 */
public final class WebhookRegistration {

  public static final String PROBE_NAMESPACE = "subrange-probe";
  public static final String LOOPBACK_NAME = "subrange-loopback";
  /** The labels of subrange_admission_requests_total for mutated Service CREATEs. */
  public static final Map<String, String> SERVICE_CREATES = Map.of("webhook", "mutate", "kind", "Service",
      "operation", "CREATE");

  private WebhookRegistration() {
  }

  /** Installs the range CRDs and waits until they are served (before subrange starts watching them). */
  public static void installCrds(KubernetesClient client, RepoLayout repo) {
    List<Path> files;
    try (Stream<Path> listing = Files.list(repo.manifests().resolve("crds"))) {
      files = listing.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    for (Path file : files) {
      CustomResourceDefinition crd = repo.manifest("crds/" + file.getFileName(), CustomResourceDefinition.class);
      client.resource(crd).createOr(NonDeletingOperation::update);
      client.apiextensions().v1().customResourceDefinitions().withName(crd.getMetadata().getName())
          .waitUntilCondition(c -> c.getStatus() != null && c.getStatus().getConditions() != null
              && c.getStatus().getConditions().stream()
              .anyMatch(cond -> cond.getType().equals("Established") && cond.getStatus().equals("True")),
              60, TimeUnit.SECONDS);
    }
  }

  public static void register(KubernetesClient client, RepoLayout repo, SubrangeServer subrange) {
    register(client, repo, subrange.baseUrl(), subrange.certificates().caBundle(),
        () -> subrange.metric("subrange_admission_requests_total", SERVICE_CREATES));
  }

  /**
   * Registers both webhook configurations with {@code baseUrl} (one server, or a balancer in
   * front of several) and waits until the API server calls it.
   *
   * @param serviceCreates how many Service CREATEs the servers behind it have been asked to mutate
   */
  public static void register(KubernetesClient client, RepoLayout repo, String baseUrl, String caBundle,
      DoubleSupplier serviceCreates) {
    MutatingWebhookConfiguration mutating = repo.manifest("mutatingwebhookconfiguration.yaml",
        MutatingWebhookConfiguration.class);
    for (MutatingWebhook webhook : mutating.getWebhooks()) {
      webhook.setClientConfig(loopback(webhook.getClientConfig(), baseUrl, caBundle));
    }
    ValidatingWebhookConfiguration validating = repo.manifest("validatingwebhookconfiguration.yaml",
        ValidatingWebhookConfiguration.class);
    for (ValidatingWebhook webhook : validating.getWebhooks()) {
      webhook.setClientConfig(loopback(webhook.getClientConfig(), baseUrl, caBundle));
    }
    client.resource(asLoopback(mutating)).createOr(NonDeletingOperation::update);
    client.resource(asLoopback(validating)).createOr(NonDeletingOperation::update);
    awaitEffective(client, baseUrl, serviceCreates);
  }

  /**
   * Removes both loopback webhook configurations and waits until the API server stops calling
   * subrange ({@code serviceCreates} as for {@link #register}).
   */
  public static void unregister(KubernetesClient client, DoubleSupplier serviceCreates) {
    client.admissionRegistration().v1().mutatingWebhookConfigurations().withName(LOOPBACK_NAME).delete();
    client.admissionRegistration().v1().validatingWebhookConfigurations().withName(LOOPBACK_NAME).delete();
    awaitNotCalled(client, serviceCreates);
  }

  /** Removes the loopback MutatingWebhookConfiguration and waits until only the validating webhooks run. */
  public static void unregisterMutating(KubernetesClient client, DoubleSupplier serviceCreates) {
    client.admissionRegistration().v1().mutatingWebhookConfigurations().withName(LOOPBACK_NAME).delete();
    awaitNotCalled(client, serviceCreates);
  }

  private static <T extends HasMetadata> T asLoopback(T configuration) {
    // No cert-manager here: caBundle is set directly. Its own name, so the manifest itself can
    // still be applied beside it.
    configuration.getMetadata().setAnnotations(null);
    configuration.getMetadata().setResourceVersion(null);
    configuration.getMetadata().setName(LOOPBACK_NAME);
    return configuration;
  }

  private static WebhookClientConfig loopback(WebhookClientConfig inCluster, String baseUrl, String caBundle) {
    return new WebhookClientConfigBuilder()
        .withUrl(baseUrl + inCluster.getService().getPath())
        .withCaBundle(caBundle)
        .build();
  }

  /**
   * The API server picks up webhook configurations asynchronously; wait until a server-side
   * dry-run create of a Service reaches subrange (which keeps nothing for dry runs).
   */
  private static void awaitEffective(KubernetesClient client, String baseUrl, DoubleSupplier serviceCreates) {
    double before = serviceCreates.getAsDouble();
    if (!probeUntil(client, () -> serviceCreates.getAsDouble() > before)) {
      throw new IllegalStateException("the API server never called subrange's webhook at " + baseUrl + "/mutate");
    }
  }

  /** The API server drops webhook configurations asynchronously too: wait until a probe is not mutated. */
  private static void awaitNotCalled(KubernetesClient client, DoubleSupplier serviceCreates) {
    double[] before = {serviceCreates.getAsDouble()};
    boolean stopped = probeUntil(client, () -> {
      double now = serviceCreates.getAsDouble();
      boolean unchanged = now == before[0];
      before[0] = now;
      return unchanged;
    });
    if (!stopped) {
      throw new IllegalStateException("the API server kept calling subrange's mutating webhook");
    }
  }

  /** Server-side dry-run Service creates (subrange keeps nothing for them) until {@code done}, for 60 s at most. */
  private static boolean probeUntil(KubernetesClient client, BooleanSupplier done) {
    ControlPlane.ensureNamespace(client, PROBE_NAMESPACE);
    return Processes.pollUntil(Duration.ofSeconds(60), 250, () -> {
      client.services().inNamespace(PROBE_NAMESPACE).resource(new ServiceBuilder()
              .withNewMetadata().withName("webhook-probe").endMetadata()
              .withNewSpec().addNewPort().withPort(80).endPort().endSpec().build())
          .dryRun().create();
      return done.getAsBoolean();
    });
  }
}
