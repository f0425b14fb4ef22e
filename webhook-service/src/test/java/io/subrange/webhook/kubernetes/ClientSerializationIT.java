package io.subrange.webhook.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubeapitest.junit.KubeConfig;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * subrange's clients read objects without managedFields (ClientSerialization) against a real
 * kube-apiserver: watch events carry everything else, and a write of an object read that way
 * leaves the server's managedFields as they were, bar the writer's own entry.
 */
@EnableKubeAPIServer(kubeAPIVersion = "1.20.2")
class ClientSerializationIT {

  @KubeConfig
  static String kubeConfigYaml;

  private KubernetesClient plain;
  private KubernetesClient ours;
  private String ns;

  @BeforeEach
  void clients() {
    plain = new KubernetesClientBuilder().withConfig(Config.fromKubeconfig(kubeConfigYaml)).build();
    ours = KubernetesClients.build(Config.fromKubeconfig(kubeConfigYaml));
    ns = "serialization-" + UUID.randomUUID().toString().substring(0, 8);
    plain.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
  }

  @AfterEach
  void close() {
    ours.close();
    plain.close();
  }

  @Test
  void watchedServicesCarryEverythingButManagedFieldsAndWritesKeepThem() {
    try (SharedIndexInformer<Service> informer = ours.services().inNamespace(ns).inform()) {
      plain.services().inNamespace(ns).resource(new ServiceBuilder()
          .withNewMetadata().withName("web").withLabels(Map.of("app", "web")).endMetadata()
          .withNewSpec().withType("NodePort").addNewPort().withName("http").withPort(80).endPort().endSpec()
          .build()).create();

      Service served = plain.services().inNamespace(ns).withName("web").get();
      assertThat(served.getMetadata().getManagedFields()).isNotEmpty();
      await().atMost(Duration.ofSeconds(30)).until(() -> informer.getStore().getByKey(ns + "/web") != null);
      Service watched = informer.getStore().getByKey(ns + "/web");
      assertThat(watched.getMetadata().getManagedFields()).isEmpty();
      assertThat(watched.getSpec()).isEqualTo(served.getSpec());
      assertThat(watched.getSpec().getPorts().get(0).getNodePort()).isBetween(30000, 32767);
      assertThat(watched.getMetadata().getUid()).isEqualTo(served.getMetadata().getUid());
      assertThat(watched.getMetadata().getLabels()).isEqualTo(Map.of("app", "web"));

      // A whole-object update of what our client read: the server keeps the managedFields.
      Service read = ours.services().inNamespace(ns).withName("web").get();
      assertThat(read.getMetadata().getManagedFields()).isEmpty();
      read.getMetadata().getLabels().put("tier", "front");
      ours.resource(read).update();

      Service after = plain.services().inNamespace(ns).withName("web").get();
      assertThat(after.getMetadata().getLabels()).containsEntry("tier", "front");
      List<String> managers = after.getMetadata().getManagedFields().stream().map(ManagedFieldsEntry::getManager).toList();
      assertThat(managers).containsAll(served.getMetadata().getManagedFields().stream()
          .map(ManagedFieldsEntry::getManager).toList());
      await().atMost(Duration.ofSeconds(30)).until(() -> informer.getStore().getByKey(ns + "/web")
          .getMetadata().getLabels().containsKey("tier"));
      assertThat(informer.getStore().getByKey(ns + "/web").getMetadata().getManagedFields()).isEmpty();
    }
  }
}
