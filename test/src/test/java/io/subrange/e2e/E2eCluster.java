package io.subrange.e2e;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.subrange.testing.Certificates;
import io.subrange.testing.ControlPlane;
import io.subrange.testing.Processes;
import io.subrange.testing.RepoLayout;
import io.subrange.testing.SubrangeServer;
import io.subrange.testing.WebhookRegistration;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * One real control plane and one subrange for the whole end-to-end run: kube-apiserver
 * 1.20.2 and etcd on loopback, dual-stack, with the range CRDs installed; subrange's jar with
 * TLS, a kubeconfig, and the configuration below; both webhook configurations registered from
 * the repository's manifests. Test classes get it as a parameter; it stops when the run ends
 * (JUnit 5.12 closes CloseableResource values of the root store).
 *
 * <p>The API server's Service ranges ({@link #APISERVER_SERVICE_CIDRS}) contain subrange's
 * ({@link #SERVICE_CIDR}, {@link #SERVICE_CIDR_V6}), so ServiceCIDRs added during the tests
 * inside them give addresses the API server accepts.
 */
public final class E2eCluster implements ParameterResolver, AutoCloseable,
    ExtensionContext.Store.CloseableResource {

  static final String SERVICE_CIDR = "10.96.0.0/20";
  static final String SERVICE_CIDR_V6 = "fd00:96::/112";
  static final String APISERVER_SERVICE_CIDRS = "10.96.0.0/16,fd00:96::/108";
  static final String POD_CIDRS = "10.244.0.0/16,fd00:244::/104";

  private RepoLayout repo;
  private ControlPlane controlPlane;
  private SubrangeServer subrange;
  private KubernetesClient client;
  private Path workDir;
  private Duration startupTime;

  /** Used by JUnit as the extension; the cluster itself lives in the root store. */
  public E2eCluster() {
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == E2eCluster.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL)
        .getOrComputeIfAbsent(E2eCluster.class, key -> E2eCluster.start(), E2eCluster.class);
  }

  private static E2eCluster start() {
    E2eCluster cluster = new E2eCluster();
    Instant started = Instant.now();
    try {
      cluster.repo = RepoLayout.locate();
      cluster.workDir = Files.createDirectories(cluster.repo.root().resolve("test/target/e2e"));
      Certificates certificates = Certificates.make(cluster.repo, Files.createTempDirectory("subrange-e2e-certs"));
      cluster.controlPlane = ControlPlane.start(cluster.repo, APISERVER_SERVICE_CIDRS, ControlPlane.FEATURE_GATES,
          cluster.workDir);
      Path kubeconfig = cluster.controlPlane.writeKubeconfig(cluster.workDir.resolve("kubeconfig"));
      cluster.client = cluster.controlPlane.client();
      WebhookRegistration.installCrds(cluster.client, cluster.repo);
      cluster.subrange = SubrangeServer.start(cluster.repo, certificates, Processes.freePort(), Processes.freePort(),
          Map.of("SUBRANGE_SERVICE_CIDRS", SERVICE_CIDR + "," + SERVICE_CIDR_V6,
              "SUBRANGE_POD_CLUSTER_CIDRS", POD_CIDRS,
              "SUBRANGE_KUBERNETES_RECONCILE_INTERVAL", "1s",
              "KUBECONFIG", kubeconfig.toString()),
          cluster.workDir.resolve("subrange.log"));
      WebhookRegistration.register(cluster.client, cluster.repo, cluster.subrange);
      cluster.startupTime = Duration.between(started, Instant.now());
      System.out.printf("e2e cluster ready in %d ms (subrange startup %d ms)%n", cluster.startupTime.toMillis(),
          cluster.subrange.startupTime().toMillis());
      return cluster;
    } catch (IOException e) {
      cluster.close();
      throw new UncheckedIOException(e);
    } catch (RuntimeException e) {
      cluster.close();
      throw e;
    }
  }

  public KubernetesClient client() {
    return client;
  }

  public SubrangeServer subrange() {
    return subrange;
  }

  /** Re-registers both webhook configurations (after a test removed the mutating one). */
  public void reregister() {
    WebhookRegistration.register(client, repo, subrange);
  }

  public RepoLayout repo() {
    return repo;
  }

  /** Runs the API server's own kubectl against it. */
  public Processes.Result kubectl(String... args) {
    List<String> command = new ArrayList<>();
    command.add(controlPlane.kubectl().toString());
    command.add("--kubeconfig=" + workDir.resolve("kubeconfig"));
    command.addAll(List.of(args));
    return Processes.exec(command, workDir, 120);
  }

  @Override
  public synchronized void close() {
    if (client != null) {
      client.close();
      client = null;
    }
    if (subrange != null) {
      subrange.close();
      subrange = null;
    }
    if (controlPlane != null) {
      controlPlane.close();
      controlPlane = null;
    }
  }
}
