package io.subrange.testing;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
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
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
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
      CustomResourceDefinition crd = load(client, file, CustomResourceDefinition.class);
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
    MutatingWebhookConfiguration mutating = load(client,
        repo.manifests().resolve("mutatingwebhookconfiguration.yaml"), MutatingWebhookConfiguration.class);
    for (MutatingWebhook webhook : mutating.getWebhooks()) {
      webhook.setClientConfig(loopback(webhook.getClientConfig(), baseUrl, caBundle));
    }
    ValidatingWebhookConfiguration validating = load(client,
        repo.manifests().resolve("validatingwebhookconfiguration.yaml"), ValidatingWebhookConfiguration.class);
    for (ValidatingWebhook webhook : validating.getWebhooks()) {
      webhook.setClientConfig(loopback(webhook.getClientConfig(), baseUrl, caBundle));
    }
    client.resource(asLoopback(mutating)).createOr(NonDeletingOperation::update);
    client.resource(asLoopback(validating)).createOr(NonDeletingOperation::update);
    awaitEffective(client, baseUrl, serviceCreates);
  }

  /** Removes both loopback webhook configurations: the API server stops calling subrange. */
  public static void unregister(KubernetesClient client) {
    client.admissionRegistration().v1().mutatingWebhookConfigurations().withName(LOOPBACK_NAME).delete();
    client.admissionRegistration().v1().validatingWebhookConfigurations().withName(LOOPBACK_NAME).delete();
  }

  /** Removes the loopback MutatingWebhookConfiguration, so only the validating webhooks run. */
  public static void unregisterMutating(KubernetesClient client) {
    client.admissionRegistration().v1().mutatingWebhookConfigurations().withName(LOOPBACK_NAME).delete();
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

  private static <T> T load(KubernetesClient client, Path file, Class<T> type) {
    try (InputStream in = Files.newInputStream(file)) {
      return client.getKubernetesSerialization().unmarshal(in, type);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The API server picks up webhook configurations asynchronously; wait until a server-side
   * dry-run create of a Service reaches subrange (which keeps nothing for dry runs).
   */
  private static void awaitEffective(KubernetesClient client, String baseUrl, DoubleSupplier serviceCreates) {
    client.resource(new NamespaceBuilder().withNewMetadata().withName(PROBE_NAMESPACE).endMetadata().build())
        .createOr(NonDeletingOperation::update);
    double before = serviceCreates.getAsDouble();
    Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
    while (Instant.now().isBefore(deadline)) {
      client.services().inNamespace(PROBE_NAMESPACE).resource(new ServiceBuilder()
              .withNewMetadata().withName("webhook-probe").endMetadata()
              .withNewSpec().addNewPort().withPort(80).endPort().endSpec().build())
          .dryRun().create();
      if (serviceCreates.getAsDouble() > before) {
        return;
      }
      try {
        Thread.sleep(250);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
    throw new IllegalStateException("the API server never called subrange's webhook at " + baseUrl + "/mutate");
  }
}
