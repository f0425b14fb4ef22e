package io.subrange.webhook.service;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.stereotype.Component;

/**
 * Whether a Service is stored under a name, asked of the API only for a create whose name
 * already holds values in subrange: a retry of a create that never landed (it gets the values it
 * holds) or a duplicate of one that exists (the client must see kube-apiserver's 409
 * AlreadyExists, not an error about its address). Mutating admission runs before the API server
 * checks the name, so subrange has to ask; without an API (subrange.kubernetes.enabled=false)
 * every such create counts as a retry.
 */
@Component
public class ExistingServices implements AutoCloseable {

  private final KubernetesClient client;
  /** The lookups block; admission threads must not. Few run: only creates of held names ask. */
  private final ExecutorService lookups = Executors.newFixedThreadPool(2, r -> {
    Thread thread = new Thread(r, "subrange-service-lookup");
    thread.setDaemon(true);
    return thread;
  });

  public ExistingServices(ObjectProvider<KubernetesClient> clients) {
    this.client = clients.getIfAvailable();
  }

  /** True when a Service named {@code namespace/name} is stored now. */
  public CompletableFuture<Boolean> exists(String namespace, String name) {
    if (client == null) {
      return CompletableFuture.completedFuture(false);
    }
    return CompletableFuture.supplyAsync(() -> client.services().inNamespace(namespace).withName(name).get() != null,
        lookups);
  }

  @Override
  public void close() {
    lookups.shutdownNow();
  }
}
