package io.subrange.webhook.kubernetes;

import io.fabric8.kubernetes.client.KubernetesClient;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The client for the cluster subrange serves, configured as fabric8 finds it: the pod's
 * ServiceAccount in a cluster, {@code KUBECONFIG} or ~/.kube/config outside one. Absent with
 * {@code subrange.kubernetes.enabled=false}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "subrange.kubernetes.enabled", havingValue = "true", matchIfMissing = true)
class KubernetesClientConfiguration {

  @Bean(destroyMethod = "close")
  KubernetesClient kubernetesClient() {
    return KubernetesClients.fromEnvironment();
  }
}
