package io.subrange.webhook.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
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

  private static final String CREATOR = "creator";

  @KubeConfig
  static String kubeConfigYaml;

  private KubernetesClient plain;
  private KubernetesClient ours;
  private String ns;

  @BeforeEach
  void clients() {
    // Another user agent, so the server names another field manager for what this client writes.
    Config creator = new ConfigBuilder(Config.fromKubeconfig(kubeConfigYaml)).withUserAgent(CREATOR).build();
    plain = new KubernetesClientBuilder().withConfig(creator).build();
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
      assertThat(served.getMetadata().getManagedFields()).extracting(ManagedFieldsEntry::getManager)
          .containsExactly(CREATOR);
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
      ManagedFieldsEntry created = served.getMetadata().getManagedFields().get(0);
      assertThat(after.getMetadata().getManagedFields())
          .as("the creator's entry survives an update that left managedFields out")
          .anySatisfy(entry -> {
            assertThat(entry.getManager()).isEqualTo(CREATOR);
            assertThat(entry.getFieldsV1()).isEqualTo(created.getFieldsV1());
          })
          .extracting(ManagedFieldsEntry::getManager).hasSize(2);
      await().atMost(Duration.ofSeconds(30)).until(() -> informer.getStore().getByKey(ns + "/web")
          .getMetadata().getLabels().containsKey("tier"));
      assertThat(informer.getStore().getByKey(ns + "/web").getMetadata().getManagedFields()).isEmpty();
    }
  }

  /** The server's own watch events, as it writes them, take the direct path (kind and apiVersion first). */
  @Test
  void theServersWatchEventsTakeTheDirectPath() {
    String since = plain.services().inNamespace(ns).list().getMetadata().getResourceVersion();
    plain.services().inNamespace(ns).resource(new ServiceBuilder()
        .withNewMetadata().withName("api").endMetadata()
        .withNewSpec().addNewPort().withName("http").withPort(80).endPort().endSpec()
        .build()).create();
    plain.services().inNamespace(ns).withName("api").edit(s -> {
      s.getMetadata().setLabels(Map.of("tier", "back"));
      return s;
    });
    plain.services().inNamespace(ns).withName("api").delete();
    String events = plain.raw("/api/v1/namespaces/" + ns + "/services?watch=1&timeoutSeconds=2&resourceVersion=" + since);

    ClientSerialization serialization = new ClientSerialization();
    List<String> lines = events.lines().filter(line -> !line.isBlank()).toList();
    assertThat(lines).hasSize(3);
    assertThat(lines).allSatisfy(line -> {
      WatchEvent event = serialization.watchEvent(line);
      assertThat(event).as(line).isNotNull();
      assertThat(event.getObject()).isInstanceOf(Service.class);
      assertThat(((Service) event.getObject()).getMetadata().getManagedFields()).isEmpty();
    });
    assertThat(lines).extracting(line -> serialization.watchEvent(line).getType())
        .containsExactly("ADDED", "MODIFIED", "DELETED");
  }
}
