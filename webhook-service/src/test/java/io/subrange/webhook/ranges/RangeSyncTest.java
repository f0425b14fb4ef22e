package io.subrange.webhook.ranges;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.APIResourceListBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.subrange.allocator.band.ThreadLocalRandomGenerator;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.port.PortRange;
import io.subrange.allocator.store.InMemoryAllocationStore;
import io.subrange.webhook.config.SubrangeProperties;
import io.subrange.webhook.metrics.AllocatorMetrics;
import io.subrange.webhook.metrics.PodCidrMetrics;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;

/**
 * Where ranges come from, against fabric8's mock API server (the paths a real cluster with the
 * CRDs installed are covered end to end): configuration alone without the CRDs, and a clear
 * failure when the API does not answer.
 */
@EnableKubernetesMockClient
class RangeSyncTest {

  KubernetesMockServer server;
  KubernetesClient client;

  private final InMemoryAllocationStore store = new InMemoryAllocationStore(PortRange.parse("30000-32767"),
      ThreadLocalRandomGenerator.INSTANCE);

  @Test
  void withoutTheCrdsTheConfigurationAloneGivesTheRanges() {
    server.expect().get().withPath("/version").andReturn(200, Map.of("major", "1", "minor", "20", "gitVersion",
        "v1.20.2")).always();
    // Discovery answers: neither subrange.io/v1alpha1 nor networking.x-k8s.io/v1 is served.
    server.expect().get().withPath("/apis/subrange.io/v1alpha1").andReturn(404, "").always();
    server.expect().get().withPath("/apis/networking.x-k8s.io/v1").andReturn(404, "").always();
    server.expect().get().withPath("/apis").andReturn(200, Map.of("kind", "APIGroupList", "groups", List.of()))
        .always();

    RangeSync sync = sync(client, properties(List.of("10.96.0.0/16", "fd00::/112"), List.of("10.244.0.0/16"),
        Duration.ofSeconds(5)));
    sync.start();

    assertThat(store.serviceRanges()).containsExactly(Map.entry("kubernetes",
        List.of(Cidr.parse("10.96.0.0/16"), Cidr.parse("fd00::/112"))));
    assertThat(store.clusterCidrNames()).containsExactly("default-cluster-cidr");
    assertThat(sync.serviceCidrInformer()).isEmpty();
    assertThat(sync.clusterCidrInformer()).isEmpty();
    sync.stop();
  }

  @Test
  void anApiThatDoesNotAnswerStopsStartupWithAClearReason() {
    Config unreachable = new ConfigBuilder().withMasterUrl("https://127.0.0.1:1").withRequestTimeout(200)
        .withConnectionTimeout(200).withRequestRetryBackoffLimit(0).build();
    try (KubernetesClient dead = new KubernetesClientBuilder().withConfig(unreachable).build()) {
      RangeSync sync = sync(dead, properties(List.of("10.96.0.0/16"), List.of(), Duration.ofSeconds(2)));
      assertThatThrownBy(sync::start)
          .hasMessageContaining("did not answer within 2 s")
          .hasMessageContaining("SUBRANGE_KUBERNETES_ENABLED=false");
    }
  }

  @Test
  void withoutTheApiTheConfigurationAloneGivesTheRanges() {
    RangeSync sync = sync(null, properties(List.of("10.100.0.0/24"), List.of(), Duration.ofSeconds(5)));
    sync.start();
    assertThat(store.serviceRanges()).containsExactly(Map.entry("kubernetes", List.of(Cidr.parse("10.100.0.0/24"))));
    assertThat(store.clusterCidrNames()).isEmpty();
  }

  private static SubrangeProperties properties(List<String> serviceCidrs, List<String> podCidrs,
      Duration startupTimeout) {
    return new SubrangeProperties(
        new SubrangeProperties.Service(serviceCidrs.stream().map(Cidr::parse).toList(), PortRange.parse("30000-32767"), 100),
        new SubrangeProperties.Pod(podCidrs.stream().map(Cidr::parse).toList(), 24, 64),
        SubrangeProperties.StoreKind.MEMORY,
        SubrangeProperties.Role.ALL,
        new SubrangeProperties.Admission(Duration.ofSeconds(4), 64, Duration.ofSeconds(10), true, 1, 1000),
        new SubrangeProperties.Tls("/etc/subrange/tls", ""),
        new SubrangeProperties.Kubernetes(true, startupTimeout, Duration.ofSeconds(5), "", Duration.ZERO, 0,
            Duration.ofMillis(500)),
        new SubrangeProperties.Reconciler(Duration.ofSeconds(60), Duration.ofSeconds(10), Duration.ofMinutes(3), "subrange-reconciler",
            Duration.ofSeconds(15), Duration.ofMillis(500)));
  }

  private RangeSync sync(KubernetesClient kubernetes, SubrangeProperties properties) {
    DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
    if (kubernetes != null) {
      beans.registerSingleton("client", kubernetes);
    }
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    return new RangeSync(store, properties, beans.getBeanProvider(KubernetesClient.class),
        new AllocatorMetrics(registry, store), new PodCidrMetrics(registry, store));
  }
}
