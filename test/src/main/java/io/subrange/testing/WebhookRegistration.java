package io.subrange.testing;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhook;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.WebhookClientConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * Registers subrange with a running API server using the repository's own
 * manifests/mutatingwebhookconfiguration.yaml (its rules, selectors, failure policy and
 * timeout), with the in-cluster service reference swapped for subrange's loopback URL and CA,
 * under the name {@code subrange-loopback}.
 */
public final class WebhookRegistration {

  public static final String PROBE_NAMESPACE = "subrange-probe";

  private WebhookRegistration() {
  }

  public static MutatingWebhookConfiguration register(KubernetesClient client, RepoLayout repo,
      SubrangeServer subrange) {
    MutatingWebhookConfiguration configuration = load(client, repo.manifests().resolve("mutatingwebhookconfiguration.yaml"));
    configuration.getMetadata().setAnnotations(null);  // no cert-manager here: caBundle is set directly
    // Its own name, so the manifest itself can still be applied beside it.
    configuration.getMetadata().setName(configuration.getMetadata().getName() + "-loopback");
    configuration.getMetadata().setResourceVersion(null);
    for (MutatingWebhook webhook : configuration.getWebhooks()) {
      String path = webhook.getClientConfig().getService().getPath();
      webhook.setClientConfig(new WebhookClientConfigBuilder()
          .withUrl(subrange.baseUrl() + path)
          .withCaBundle(subrange.certificates().caBundle())
          .build());
    }
    MutatingWebhookConfiguration registered = client.resource(configuration).createOr(existing -> existing.update());
    awaitEffective(client, subrange);
    return registered;
  }

  private static MutatingWebhookConfiguration load(KubernetesClient client, Path file) {
    try (InputStream in = Files.newInputStream(file)) {
      return client.getKubernetesSerialization().unmarshal(in, MutatingWebhookConfiguration.class);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The API server picks up webhook configurations asynchronously; wait until a server-side
   * dry-run create of a Service reaches subrange (which keeps nothing for dry runs).
   */
  private static void awaitEffective(KubernetesClient client, SubrangeServer subrange) {
    client.resource(new NamespaceBuilder().withNewMetadata().withName(PROBE_NAMESPACE).endMetadata().build())
        .createOr(existing -> existing.update());
    Map<String, String> serviceCreates = Map.of("kind", "Service", "operation", "CREATE");
    double before = subrange.metric("subrange_admission_requests_total", serviceCreates);
    Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
    while (Instant.now().isBefore(deadline)) {
      client.services().inNamespace(PROBE_NAMESPACE).resource(new ServiceBuilder()
              .withNewMetadata().withName("webhook-probe").endMetadata()
              .withNewSpec().addNewPort().withPort(80).endPort().endSpec().build())
          .dryRun().create();
      if (subrange.metric("subrange_admission_requests_total", serviceCreates) > before) {
        return;
      }
      try {
        Thread.sleep(250);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
    throw new IllegalStateException("the API server never called subrange's webhook at " + subrange.mutateUrl());
  }
}
