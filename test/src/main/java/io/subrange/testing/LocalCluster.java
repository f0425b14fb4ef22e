package io.subrange.testing;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * The local-run command: a real kube-apiserver and etcd on loopback, subrange's jar with TLS,
 * and the webhook registered, until Ctrl-C. Started by {@code ./run-local}.
 *
 * <p>Environment: {@code SUBRANGE_SERVICE_CIDRS} (default 10.96.0.0/12, given to both the API
 * server and subrange), {@code SUBRANGE_POD_CLUSTER_CIDRS} (10.244.0.0/16),
 * {@code SUBRANGE_LOCAL_PORT} (8443) and {@code SUBRANGE_LOCAL_METRICS_PORT} (8081).
 */
public final class LocalCluster {

  private LocalCluster() {
  }

  public static void main(String[] args) throws InterruptedException {
    RepoLayout repo = RepoLayout.locate();
    Path work = repo.root().resolve(".local");
    String cidrs = env("SUBRANGE_SERVICE_CIDRS", "10.96.0.0/12");
    String podCidrs = env("SUBRANGE_POD_CLUSTER_CIDRS", "10.244.0.0/16");
    int port = Integer.parseInt(env("SUBRANGE_LOCAL_PORT", "8443"));
    int metricsPort = Integer.parseInt(env("SUBRANGE_LOCAL_METRICS_PORT", "8081"));

    Certificates certificates = Certificates.make(repo, work.resolve("certs"));
    ControlPlane controlPlane = ControlPlane.start(repo, cidrs, ControlPlane.FEATURE_GATES, work.resolve("logs"));
    Path kubeconfig = controlPlane.writeKubeconfig(work.resolve("kubeconfig"));
    SubrangeServer subrange;
    try (KubernetesClient client = controlPlane.client()) {
      WebhookRegistration.installCrds(client, repo);
      subrange = SubrangeServer.start(repo, certificates, port, metricsPort, Map.of(
              "SUBRANGE_SERVICE_CIDRS", cidrs,
              "SUBRANGE_POD_CLUSTER_CIDRS", podCidrs,
              "KUBECONFIG", kubeconfig.toString()),
          work.resolve("logs/subrange.log"));
    } catch (RuntimeException e) {
      controlPlane.close();
      throw e;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      // SIGTERM and Ctrl-C alike (both run shutdown hooks): the API server and etcd are this
      // JVM's children and would outlive it.
      System.out.println("\nStopping subrange, kube-apiserver and etcd...");
      try {
        subrange.close();
      } finally {
        controlPlane.close();
        stopped.countDown();
      }
    }));
    try (KubernetesClient client = controlPlane.client()) {
      WebhookRegistration.register(client, repo, subrange);
    }
    Processes.reapWhenGone(ProcessHandle.current(), ProcessHandle.current().children().toList());

    System.out.printf("""

        subrange is running with a real kube-apiserver %s and etcd on loopback.
          kube-apiserver  https://127.0.0.1:%d  (--service-cluster-ip-range=%s)
          subrange        %s   (webhook registered, started in %d ms)
          metrics         http://localhost:%d/metrics
          logs            %s

        In another terminal:
          export KUBECONFIG=%s
          kubectl create service clusterip demo --tcp=80
          kubectl get service demo
          kubectl get servicecidrs,clustercidrs
          curl -s localhost:%d/metrics | grep '^subrange_clusterip'
          curl -s -H 'Accept: text/plain' localhost:%d/ranges

        (kubectl %s, matching the server, is at %s)
        Press Ctrl-C to stop.
        """, ControlPlane.KUBERNETES_VERSION, controlPlane.port(), cidrs, subrange.mutateUrl(),
        subrange.startupTime().toMillis(), metricsPort, work.resolve("logs"), kubeconfig, metricsPort, metricsPort,
        ControlPlane.KUBERNETES_VERSION, controlPlane.kubectl());
    stopped.await();
  }

  private static String env(String name, String fallback) {
    String value = System.getenv(name);
    return value == null || value.isBlank() ? fallback : value;
  }
}
