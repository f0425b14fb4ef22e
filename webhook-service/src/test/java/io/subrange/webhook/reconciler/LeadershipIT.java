package io.subrange.webhook.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubeapitest.junit.KubeConfig;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Lease decides who reconciles, and a process that lost it takes part again: against a real
 * kube-apiserver and etcd, whose Lease updates are compare-and-swap as a cluster's are.
 */
@EnableKubeAPIServer(kubeAPIVersion = "1.20.2")
class LeadershipIT {

  private static final String LEASE = "subrange-reconciler";

  @KubeConfig
  static String kubeConfigYaml;

  private KubernetesClient client;
  /** A namespace of each test's own, so no test sees another's Lease. */
  private String ns;

  @BeforeEach
  void namespace() {
    client = new KubernetesClientBuilder().withConfig(Config.fromKubeconfig(kubeConfigYaml)).build();
    ns = "subrange-" + UUID.randomUUID().toString().substring(0, 8);
    client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
        .create();
  }

  @AfterEach
  void close() {
    client.close();
  }

  /**
   * Seen on a real cluster: after the first loss (here another holder takes the Lease) the
   * process kept restarting a LeaderElector that may run only once, and never led again.
   */
  @Test
  void aProcessThatLostTheLeaseLeadsAgainOnceItIsFree() throws Exception {
    AtomicInteger started = new AtomicInteger();
    AtomicInteger stopped = new AtomicInteger();
    try (Leadership leadership = Leadership.lease(client, ns, LEASE, "a", Duration.ofSeconds(1))) {
      leadership.start(started::incrementAndGet, stopped::incrementAndGet);
      await("a leads", () -> started.get() == 1);

      // Another process takes the Lease and renews it once, for two seconds. a renews every
      // second, so the take can lose to a renewal (409): read again and retry, as b would.
      for (int attempt = 1; ; attempt++) {
        Lease lease = client.leases().inNamespace(ns).withName(LEASE).get();
        try {
          client.resource(new LeaseBuilder(lease).editSpec()
                  .withHolderIdentity("b").withLeaseDurationSeconds(2)
                  .withRenewTime(ZonedDateTime.now())
                  .withAcquireTime(ZonedDateTime.now())
                  .endSpec().build())
              .update();
          break;
        } catch (KubernetesClientException e) {
          if (e.getCode() != 409 || attempt == 10) {
            throw e;
          }
        }
      }
      await("a notices it lost the lead", () -> stopped.get() == 1);

      // b never renews: once its two seconds pass, a leads again.
      await("a leads again", () -> started.get() == 2);
      assertThat(client.leases().inNamespace(ns).withName(LEASE).get().getSpec().getHolderIdentity()).isEqualTo("a");
    }
  }

  @Test
  void closingReleasesTheLeaseForTheNext() throws Exception {
    AtomicInteger started = new AtomicInteger();
    try (Leadership first = Leadership.lease(client, ns, LEASE, "a", Duration.ofSeconds(10))) {
      first.start(started::incrementAndGet, () -> { });
      await("a leads", () -> started.get() == 1);
    }
    // Released on close: b need not wait out a's ten seconds.
    AtomicInteger next = new AtomicInteger();
    try (Leadership second = Leadership.lease(client, ns, LEASE, "b", Duration.ofSeconds(10))) {
      second.start(next::incrementAndGet, () -> { });
      await("b leads well before a's lease would expire", () -> next.get() == 1);
    }
  }

  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(8);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("timed out waiting until " + what).isLessThan(deadline);
      Thread.sleep(20);
    }
  }
}
