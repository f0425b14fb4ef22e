package io.subrange.testing;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * subrange as it runs in a cluster, on loopback: webhook replicas sharing their state through
 * ConfigMaps ({@code subrange.store=kubernetes}), one reconciler process (in a cluster, the
 * reconciler Deployment's pods elect theirs through a Lease), and a TCP balancer in front of the replicas standing in for the
 * Service the API server calls. Each process is probed from its start as the kubelet probes its
 * pod, and scraped as Prometheus scrapes it ({@link KubeletProbes}).
 */
public final class ReplicatedCluster implements AutoCloseable {

  /**
   * Where the state ConfigMaps and the Lease live ({@code SUBRANGE_KUBERNETES_NAMESPACE}), as in
   * manifests/: their own namespace, apart from subrange's configuration.
   */
  public static final String NAMESPACE = "subrange-state";
  private static final String RECONCILER_POD = "reconciler";

  private final RepoLayout repo;
  private final KubernetesClient client;
  private final Certificates certificates;
  private final Settings settings;
  private final Path workDir;
  private final List<SubrangeServer> webhooks = new ArrayList<>();
  private SubrangeServer reconciler;
  private TcpBalancer balancer;
  private final KubeletProbes probes = new KubeletProbes();
  private final List<KubeletProbes.HttpProbe> webhookProbes;
  private final List<KubeletProbes.HttpProbe> reconcilerProbes;

  /**
   * @param webhooks how many webhook replicas
   * @param serviceCidrs {@code SUBRANGE_SERVICE_CIDRS}
   * @param podCidrs {@code SUBRANGE_POD_CLUSTER_CIDRS}
   * @param orphanGrace {@code SUBRANGE_RECONCILER_ORPHAN_GRACE}
   * @param reconcilerInterval {@code SUBRANGE_RECONCILER_INTERVAL}
   * @param leaseDuration {@code SUBRANGE_RECONCILER_LEASE_DURATION}
   * @param webhookKubeconfig the kubeconfig the webhook replicas use (a proxy in front of the API
   *     server), or null for the direct one
   * @param reserveAhead {@code SUBRANGE_KUBERNETES_RESERVE_AHEAD} of the webhook replicas (as
   *     manifests/deployment.yaml sets it unless changed; 0: none)
   * @param callsPerConnection {@code SUBRANGE_ADMISSION_CALLS_PER_CONNECTION} of the webhook
   *     replicas, or null for the product's default
   */
  public record Settings(int webhooks, String serviceCidrs, String podCidrs, Duration orphanGrace,
      Duration reconcilerInterval, Duration leaseDuration, Path webhookKubeconfig, int reserveAhead,
      Integer callsPerConnection) {

    /** Three replicas, the product's defaults for grace and intervals, values reserved ahead as deployed. */
    public static Settings defaults() {
      return new Settings(3, "10.96.0.0/20", "10.244.0.0/16", Duration.ofSeconds(60), Duration.ofSeconds(10),
          Duration.ofSeconds(15), null, deployedReserveAhead(RepoLayout.locate()), null);
    }

    /** What manifests/deployment.yaml reserves ahead per batch, so the harness runs what is deployed. */
    static int deployedReserveAhead(RepoLayout repo) {
      return Integer.parseInt(repo.deployedEnv("deployment.yaml", "SUBRANGE_KUBERNETES_RESERVE_AHEAD"));
    }

    /** {@code SUBRANGE_SERVICE_CIDRS}, e.g. the API server's own --service-cluster-ip-range. */
    public Settings withServiceCidrs(String cidrs) {
      return new Settings(webhooks, cidrs, podCidrs, orphanGrace, reconcilerInterval, leaseDuration,
          webhookKubeconfig, reserveAhead, callsPerConnection);
    }

    /** {@code SUBRANGE_KUBERNETES_RESERVE_AHEAD} of the webhook replicas; 0 reserves nothing ahead. */
    public Settings withReserveAhead(int batch) {
      return new Settings(webhooks, serviceCidrs, podCidrs, orphanGrace, reconcilerInterval, leaseDuration,
          webhookKubeconfig, batch, callsPerConnection);
    }

    /** Admission calls per connection before its answer closes it; small, to see calls spread. */
    public Settings withCallsPerConnection(int calls) {
      return new Settings(webhooks, serviceCidrs, podCidrs, orphanGrace, reconcilerInterval, leaseDuration,
          webhookKubeconfig, reserveAhead, calls);
    }

    public Settings withWebhooks(int count) {
      return new Settings(count, serviceCidrs, podCidrs, orphanGrace, reconcilerInterval, leaseDuration,
          webhookKubeconfig, reserveAhead, callsPerConnection);
    }

    /** Short grace, interval and Lease, so tests see reclaims and failover in seconds. */
    public Settings quick() {
      return new Settings(webhooks, serviceCidrs, podCidrs, Duration.ofSeconds(5), Duration.ofSeconds(1),
          Duration.ofSeconds(6), webhookKubeconfig, reserveAhead, callsPerConnection);
    }

    public Settings withOrphanGrace(Duration grace) {
      return new Settings(webhooks, serviceCidrs, podCidrs, grace, reconcilerInterval, leaseDuration,
          webhookKubeconfig, reserveAhead, callsPerConnection);
    }

    public Settings withWebhookKubeconfig(Path kubeconfig) {
      return new Settings(webhooks, serviceCidrs, podCidrs, orphanGrace, reconcilerInterval, leaseDuration,
          kubeconfig, reserveAhead, callsPerConnection);
    }
  }

  private ReplicatedCluster(RepoLayout repo, KubernetesClient client, Certificates certificates, Settings settings,
      Path workDir) {
    this.repo = repo;
    this.client = client;
    this.certificates = certificates;
    this.settings = settings;
    this.workDir = workDir;
    this.webhookProbes = KubeletProbes.declared(repo, "deployment.yaml");
    this.reconcilerProbes = KubeletProbes.declared(repo, "reconciler.yaml");
  }

  /**
   * Starts the reconciler, waits until it has built the ranges' state, starts the replicas side
   * by side, puts the balancer in front of them and registers both webhook configurations there.
   * The range CRDs are installed first.
   */
  public static ReplicatedCluster start(RepoLayout repo, ControlPlane plane, Path workDir, Settings settings) {
    ReplicatedCluster cluster = null;
    try {
      Files.createDirectories(workDir);
      KubernetesClient client = plane.client();
      ControlPlane.ensureNamespace(client, NAMESPACE);
      WebhookRegistration.installCrds(client, repo);
      Certificates certificates = Certificates.make(repo, Files.createTempDirectory("subrange-replicated-certs"));
      cluster = new ReplicatedCluster(repo, client, certificates, settings, workDir);
      Path kubeconfig = plane.writeKubeconfig(workDir.resolve("kubeconfig"));
      cluster.reconciler = SubrangeServer.launch(repo, certificates, Processes.freePort(), Processes.freePort(),
          cluster.environment("reconciler", kubeconfig), workDir.resolve("subrange-reconciler.log"));
      cluster.watchReconciler();
      cluster.reconciler.awaitReady(Duration.ofSeconds(90));
      Path webhookKubeconfig = settings.webhookKubeconfig() == null ? kubeconfig : settings.webhookKubeconfig();
      for (int i = 0; i < settings.webhooks(); i++) {
        cluster.webhooks.add(SubrangeServer.launch(repo, certificates, Processes.freePort(), Processes.freePort(),
            cluster.environment("webhook", webhookKubeconfig), workDir.resolve("subrange-webhook-" + i + ".log")));
        cluster.watchWebhook(i);
      }
      for (SubrangeServer webhook : cluster.webhooks) {
        webhook.awaitReady(Duration.ofSeconds(120));
      }
      cluster.balancer = TcpBalancer.start(cluster.webhooks.stream().map(SubrangeServer::port).toList());
      cluster.registerWebhooks();
      return cluster;
    } catch (IOException e) {
      if (cluster != null) {
        cluster.close();
      }
      throw new UncheckedIOException(e);
    } catch (RuntimeException e) {
      if (cluster != null) {
        cluster.close();
      }
      throw e;
    }
  }

  private void watchWebhook(int replica) {
    probes.watch(pod(podName(replica), webhooks.get(replica), webhookProbes));
  }

  private void watchReconciler() {
    probes.watch(pod(RECONCILER_POD, reconciler, reconcilerProbes));
  }

  /** The name replica {@code replica} goes by in {@link #probes()}. */
  public static String podName(int replica) {
    return "webhook-" + replica;
  }

  private static KubeletProbes.Pod pod(String name, SubrangeServer server, List<KubeletProbes.HttpProbe> declared) {
    return KubeletProbes.Pod.of(name, server.port(), server.managementPort(), server.certificates(), declared);
  }

  private Map<String, String> environment(String role, Path kubeconfig) {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("SUBRANGE_ROLE", role);
    if (role.equals("reconciler")) {
      // As manifests/reconciler.yaml: only the kubelet's probes and Prometheus call it.
      env.put("SERVER_SSL_ENABLED", "false");
    }
    env.put("SUBRANGE_STORE", "kubernetes");
    env.put("SUBRANGE_KUBERNETES_NAMESPACE", NAMESPACE);
    env.put("SUBRANGE_SERVICE_CIDRS", settings.serviceCidrs());
    env.put("SUBRANGE_POD_CLUSTER_CIDRS", settings.podCidrs());
    env.put("SUBRANGE_KUBERNETES_RECONCILE_INTERVAL", "1s");
    env.put("SUBRANGE_RECONCILER_ORPHAN_GRACE", settings.orphanGrace().toSeconds() + "s");
    env.put("SUBRANGE_RECONCILER_INTERVAL", settings.reconcilerInterval().toMillis() + "ms");
    env.put("SUBRANGE_RECONCILER_LEASE_DURATION", settings.leaseDuration().toSeconds() + "s");
    env.put("SUBRANGE_KUBERNETES_RESERVE_AHEAD", String.valueOf(settings.reserveAhead()));
    if (settings.callsPerConnection() != null) {
      env.put("SUBRANGE_ADMISSION_CALLS_PER_CONNECTION", String.valueOf(settings.callsPerConnection()));
    }
    env.put("KUBECONFIG", kubeconfig.toString());
    return env;
  }

  /** Registers both webhook configurations at the balancer and waits until the API server calls it. */
  public void registerWebhooks() {
    WebhookRegistration.register(client, repo, "https://127.0.0.1:" + balancer.port(), certificates.caBundle(),
        this::serviceCreatesAdmitted);
  }

  /**
   * Removes both webhook configurations and waits until the API server calls neither (the
   * validating one included): before {@link #close} when the API server lives on, since with
   * failurePolicy Fail a configuration left behind would refuse every Service create.
   */
  public void unregisterWebhooks() {
    WebhookRegistration.unregister(client, () -> webhookMetric("subrange_admission_requests_total",
        Map.of("kind", "Service", "operation", "CREATE")));
  }

  /** Service CREATEs the replicas have mutated (those alive now). */
  public double serviceCreatesAdmitted() {
    return webhookMetric("subrange_admission_requests_total", WebhookRegistration.SERVICE_CREATES);
  }

  /** The sum of a metric over the live webhook replicas. */
  public double webhookMetric(String name, Map<String, String> labels) {
    return PrometheusSamples.sum(webhookSamples(), name, labels);
  }

  /** The samples of every live webhook replica, one scrape each ({@link SubrangeServer#samples}). */
  public List<PrometheusSamples.Sample> webhookSamples() {
    List<PrometheusSamples.Sample> samples = new ArrayList<>();
    for (SubrangeServer webhook : webhooks) {
      if (webhook.isAlive()) {
        samples.addAll(webhook.samples());
      }
    }
    return samples;
  }

  public KubernetesClient client() {
    return client;
  }

  public List<SubrangeServer> webhooks() {
    return List.copyOf(webhooks);
  }

  public SubrangeServer reconciler() {
    return reconciler;
  }

  public TcpBalancer balancer() {
    return balancer;
  }

  /** The kubelet's probes and Prometheus' scrapes of every process here. */
  public KubeletProbes probes() {
    return probes;
  }

  public Settings settings() {
    return settings;
  }

  /** kill -9 of one webhook replica. */
  public void kill(int replica) {
    probes.forget(podName(replica));
    webhooks.get(replica).kill();
  }

  /** Starts a killed or stopped replica again (same ports, so the balancer finds it). */
  public void restart(int replica) {
    webhooks.set(replica, webhooks.get(replica).relaunch(repo));
    watchWebhook(replica);
    webhooks.get(replica).awaitReady(Duration.ofSeconds(90));
  }

  /** Stops every subrange process (the cluster keeps running): an outage, or before a restart. */
  public void stopAll() {
    for (int i = 0; i < webhooks.size(); i++) {
      probes.forget(podName(i));
      webhooks.get(i).close();
    }
    probes.forget(RECONCILER_POD);
    reconciler.close();
  }

  /** Starts every process again after {@link #stopAll}, the reconciler first, and waits until all are ready. */
  public void startAll() {
    reconciler = reconciler.relaunch(repo);
    watchReconciler();
    reconciler.awaitReady(Duration.ofSeconds(90));
    for (int i = 0; i < webhooks.size(); i++) {
      restart(i);
    }
  }

  /** What the ConfigMaps hold now. */
  public StoredAllocations stored() {
    return StoredAllocations.read(client, NAMESPACE);
  }

  @Override
  public void close() {
    probes.close();
    if (balancer != null) {
      balancer.close();
    }
    webhooks.forEach(SubrangeServer::close);
    if (reconciler != null) {
      reconciler.close();
    }
    client.close();
  }
}
