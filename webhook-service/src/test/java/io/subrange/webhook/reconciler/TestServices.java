package io.subrange.webhook.reconciler;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/** Services as the reconciler's tests put them in a cluster (the mock server): one port, maybe a NodePort. */
final class TestServices {

  private TestServices() {
  }

  /** Creates {@code namespace/name} carrying {@code clusterIp}, of type NodePort when {@code nodePort} is set. */
  static Service create(KubernetesClient client, String namespace, String name, String clusterIp, Integer nodePort) {
    client.namespaces().resource(new NamespaceBuilder().withNewMetadata()
        .withName(namespace).endMetadata().build()).createOr(c -> c.update());
    ServiceBuilder builder = new ServiceBuilder().withNewMetadata().withName(name).withNamespace(namespace)
        .endMetadata().withNewSpec().withType(nodePort == null ? "ClusterIP" : "NodePort")
        .withClusterIP(clusterIp).withClusterIPs(clusterIp)
        .addNewPort().withPort(80).withNodePort(nodePort).endPort().endSpec();
    return client.services().inNamespace(namespace).resource(builder.build()).create();
  }
}
