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
 * 1.20.2 and etcd on loopback with {@link #SERVICE_CIDR}, subrange's jar with TLS and the
 * same range, registered through the repository's webhook manifest. Test classes get it as a
 * parameter; it stops when the run ends (JUnit 5.12 closes CloseableResource values of the
 * root store).
 */
public final class E2eCluster implements ParameterResolver, AutoCloseable,
    ExtensionContext.Store.CloseableResource {

  static final String SERVICE_CIDR = "10.96.0.0/20";

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
      cluster.controlPlane = ControlPlane.start(cluster.repo, SERVICE_CIDR, cluster.workDir);
      cluster.subrange = SubrangeServer.start(cluster.repo, certificates, Processes.freePort(), Processes.freePort(),
          Map.of("SUBRANGE_SERVICE_CIDRS", SERVICE_CIDR), cluster.workDir.resolve("subrange.log"));
      cluster.client = cluster.controlPlane.client();
      WebhookRegistration.register(cluster.client, cluster.repo, cluster.subrange);
      cluster.controlPlane.writeKubeconfig(cluster.workDir.resolve("kubeconfig"));
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
