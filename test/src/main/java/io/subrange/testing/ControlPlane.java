package io.subrange.testing;

import io.fabric8.kubeapitest.KubeAPIServerConfig;
import io.fabric8.kubeapitest.KubeAPIServerConfigBuilder;
import io.fabric8.kubeapitest.binary.BinaryManager;
import io.fabric8.kubeapitest.cert.CertManager;
import io.fabric8.kubeapitest.kubeconfig.KubeConfig;
import io.fabric8.kubeapitest.process.EtcdProcess;
import io.fabric8.kubeapitest.process.ProcessReadinessChecker;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real kube-apiserver and etcd on loopback.
 *
 * <p>Built from io.fabric8:kube-api-test's parts (binary lookup, certificates, etcd,
 * kubeconfig, readiness checks), except for the API server command line: kube-api-test
 * appends {@code --service-cluster-ip-range 10.0.0.0/24} after any flags it is given, and the
 * last flag wins, so the API server could not share subrange's range. Here the range is ours.
 */
public final class ControlPlane implements AutoCloseable {

  public static final String KUBERNETES_VERSION = "1.20.2";
  /**
   * The 1.20 alpha features subrange's Service semantics assume: dual-stack Services
   * (ipFamilies, ipFamilyPolicy, clusterIPs) and allocateLoadBalancerNodePorts.
   */
  public static final List<String> FEATURE_GATES =
      List.of("--feature-gates=IPv6DualStack=true,ServiceLBNodePortControl=true");
  private static final Logger log = LoggerFactory.getLogger(ControlPlane.class);
  private static final int STARTUP_TIMEOUT_MS = 120_000;

  private final KubeAPIServerConfig config;
  private final BinaryManager binaries;
  private final CertManager certs;
  private final EtcdProcess etcd;
  private final Path logDir;
  private Process apiServer;
  private int port;
  private volatile boolean closing;
  private final String adminToken = UUID.randomUUID().toString();

  private ControlPlane(String testDir, Path logDir) {
    this.config = KubeAPIServerConfigBuilder.anAPIServerConfig()
        .withTestDir(testDir)
        .withApiServerVersion(KUBERNETES_VERSION)
        .withOfflineMode(true)
        .withWaitForEtcdHealthCheckOnStartup(true)
        .withStartupTimeout(STARTUP_TIMEOUT_MS)
        .build();
    this.binaries = new BinaryManager(config);
    this.certs = new CertManager(testDir);
    this.etcd = new EtcdProcess(binaries, process -> {
      if (!closing) {
        log.error("etcd exited unexpectedly ({})", process.exitValue());
      }
    }, true, STARTUP_TIMEOUT_MS);
    this.logDir = logDir;
  }

  /**
   * Starts etcd and kube-apiserver with the given Service ranges, providing the binaries first
   * (test/scripts/provide-control-plane.sh) when they are not cached.
   *
   * @param serviceCidrs value for {@code --service-cluster-ip-range}
   * @param extraFlags more API server flags, e.g. {@code --feature-gates=IPv6DualStack=true}
   * @param logDir where the API server's output goes
   */
  public static ControlPlane start(RepoLayout repo, String serviceCidrs, List<String> extraFlags, Path logDir) {
    ControlPlane plane = new ControlPlane(provideBinaries(repo), logDir);
    try {
      plane.startProcesses(serviceCidrs, extraFlags);
      return plane;
    } catch (RuntimeException e) {
      plane.close();
      throw e;
    }
  }

  /** Runs the provide script (instant when cached) and returns the kube-api-test directory. */
  static String provideBinaries(RepoLayout repo) {
    String out = Processes.run(List.of("bash", repo.provideControlPlaneScript().toString()), repo.root(), 3600);
    List<String> lines = out.lines().filter(l -> !l.isBlank() && !l.startsWith("provide-control-plane:")).toList();
    if (lines.isEmpty()) {
      throw new IllegalStateException("provide-control-plane.sh printed no directory:\n" + out);
    }
    return lines.get(lines.size() - 1).trim();
  }

  private void startProcesses(String serviceCidrs, List<String> extraFlags) {
    binaries.initAndDownloadIfRequired();
    certs.createCertificatesIfNeeded();
    int etcdPort = etcd.startEtcd();
    port = Processes.freePort();
    List<String> command = new ArrayList<>(List.of(
        binaries.binaries().getApiServer().getAbsolutePath(),
        "--bind-address", "127.0.0.1",
        "--secure-port", String.valueOf(port),
        "--cert-dir", config.getKubeAPITestDir(),
        "--etcd-servers", "http://127.0.0.1:" + etcdPort,
        "--authorization-mode", "RBAC",
        "--client-ca-file", certs.getClientCertPath(),
        "--service-account-issuer", "https://localhost",
        "--service-account-signing-key-file", certs.getAPIServerKeyPath(),
        "--service-account-key-file", certs.getAPIServerKeyPath(),
        "--disable-admission-plugins", "ServiceAccount",
        "--service-cluster-ip-range", serviceCidrs,
        "--allow-privileged",
        "--token-auth-file", writeTokens().toString()));
    command.addAll(extraFlags);
    try {
      Files.createDirectories(logDir);
      Path apiLog = logDir.resolve("kube-apiserver.log");
      apiServer = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(apiLog.toFile()).start();
      log.info("kube-apiserver {} on https://127.0.0.1:{} (service range {}), log {}", KUBERNETES_VERSION, port,
          serviceCidrs, apiLog);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ProcessReadinessChecker readiness = new ProcessReadinessChecker();
    readiness.waitUntilReady(port, "readyz", "kube-apiserver", true, STARTUP_TIMEOUT_MS);
    readiness.waitUntilDefaultNamespaceAvailable(port, binaries, certs, config, STARTUP_TIMEOUT_MS);
  }

  public int port() {
    return port;
  }

  private Path writeTokens() {
    try {
      Files.createDirectories(logDir);
      Path file = logDir.resolve("tokens.csv");
      Files.writeString(file, adminToken + ",subrange-test-admin,subrange-test-admin,system:masters\n",
          StandardCharsets.UTF_8);
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * A kubeconfig that reaches the API server at {@code server} (a proxy in front of it) with
   * the admin token.
   */
  public Path writeTokenKubeconfig(Path file, String server) {
    String yaml = """
        apiVersion: v1
        kind: Config
        clusters:
        - name: proxied
          cluster:
            server: %s
            insecure-skip-tls-verify: true
        users:
        - name: admin
          user:
            token: %s
        contexts:
        - name: proxied
          context:
            cluster: proxied
            user: admin
            namespace: default
        current-context: proxied
        """.formatted(server, adminToken);
    try {
      Files.createDirectories(file.toAbsolutePath().getParent());
      Files.writeString(file, yaml, StandardCharsets.UTF_8);
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A kubeconfig for an admin (system:masters) user, with certificate files by path. */
  public String kubeconfigYaml() {
    return new KubeConfig(certs, binaries).generateKubeConfigYaml(port);
  }

  public Path writeKubeconfig(Path file) {
    try {
      Files.createDirectories(file.toAbsolutePath().getParent());
      Files.writeString(file, kubeconfigYaml(), StandardCharsets.UTF_8);
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public KubernetesClient client() {
    return new KubernetesClientBuilder().withConfig(config()).build();
  }

  /** The admin configuration, for clients built otherwise (more concurrent requests, say). */
  public Config config() {
    return Config.fromKubeconfig(kubeconfigYaml());
  }

  /** Creates a namespace unless it exists. */
  public static void ensureNamespace(KubernetesClient client, String name) {
    client.resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build())
        .createOr(NonDeletingOperation::update);
  }

  /** kubectl of the same version as the API server. */
  public Path kubectl() {
    return binaries.binaries().getKubectl().toPath();
  }

  @Override
  public void close() {
    closing = true;
    if (apiServer != null) {
      apiServer.destroy();
      try {
        if (!apiServer.waitFor(10, TimeUnit.SECONDS)) {
          apiServer.destroyForcibly();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    etcd.stopEtcd();
    try {
      etcd.cleanEtcdData();
    } catch (RuntimeException e) {
      log.debug("etcd data not cleaned (it may never have started)", e);
    }
  }
}
