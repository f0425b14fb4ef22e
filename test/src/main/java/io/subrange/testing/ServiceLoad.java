package io.subrange.testing;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
import java.util.function.IntPredicate;

/**
 * Service creates from many concurrent clients, as controllers and CI pipelines make them: each
 * client creates Services one after another, half of them NodePort. Every attempt is timed; an
 * attempt that failed because the webhook could not be reached (a replica was killed) is retried,
 * an answer from subrange (allowed or denied) never is.
 */
public final class ServiceLoad {

  /** One Service: created or not, the time of its last attempt, the last error. */
  public record Outcome(String name, boolean created, long nanos, int attempts, String error) {
  }

  /** What a run did. */
  public record Report(int clients, Duration wall, List<Outcome> outcomes) {

    public long created() {
      return outcomes.stream().filter(Outcome::created).count();
    }

    public List<Outcome> failures() {
      return outcomes.stream().filter(o -> !o.created()).toList();
    }

    /** Attempts that failed to reach the webhook and were tried again. */
    public int retries() {
      return outcomes.stream().mapToInt(o -> o.attempts() - 1).sum();
    }

    public double createsPerSecond() {
      return created() / (wall.toNanos() / 1e9);
    }

    /** The latency percentile (0-100) of successful creates, in milliseconds. */
    public double percentileMillis(double percentile) {
      List<Long> nanos = new ArrayList<>(outcomes.stream().filter(Outcome::created).map(Outcome::nanos).toList());
      if (nanos.isEmpty()) {
        return Double.NaN;
      }
      Collections.sort(nanos);
      int index = (int) Math.ceil(percentile / 100.0 * nanos.size()) - 1;
      return nanos.get(Math.max(0, Math.min(index, nanos.size() - 1))) / 1e6;
    }

    /** Failures grouped by the first line of their message. */
    public Map<String, Long> failuresByMessage() {
      Map<String, Long> grouped = new TreeMap<>();
      failures().forEach(f -> grouped.merge(String.valueOf(f.error()).lines().findFirst().orElse(""), 1L, Long::sum));
      return grouped;
    }

    public String summary() {
      return String.format("%d clients: %d/%d created in %.1f s, %.1f creates/s, p50 %.1f ms, p99 %.1f ms,"
              + " %d retries, failures %s", clients, created(), outcomes.size(), wall.toMillis() / 1000.0,
          createsPerSecond(), percentileMillis(50), percentileMillis(99), retries(), failuresByMessage());
    }
  }

  private ServiceLoad() {
  }

  /** A client that lets {@code clients} requests run at once (fabric8 allows 5 per host by default). */
  public static KubernetesClient concurrentClient(Config base, int clients) {
    Config config = new ConfigBuilder(base)
        .withMaxConcurrentRequests(Math.max(64, clients * 2))
        .withMaxConcurrentRequestsPerHost(Math.max(64, clients * 2))
        .withRequestRetryBackoffLimit(0)
        .build();
    return new KubernetesClientBuilder().withConfig(config).build();
  }

  /**
   * Creates {@code count} Services named {@code prefix-i} in {@code namespace} from
   * {@code clients} threads; odd ones are NodePort.
   *
   * @param afterEach called with the number of Services done so far (to kill a replica midway)
   */
  public static Report create(KubernetesClient client, String namespace, String prefix, int count, int clients,
      IntConsumer afterEach) {
    return create(client, namespace, prefix, count, clients, Pacing.NONE, afterEach);
  }

  /** As {@link #create(KubernetesClient, String, String, int, int, IntConsumer)}, started no faster than {@code pacing}. */
  static Report create(KubernetesClient client, String namespace, String prefix, int count, int clients,
      Pacing pacing, IntConsumer afterEach) {
    return createAll(client, namespace, prefix, count, clients, pacing, i -> i % 2 == 1, afterEach);
  }

  /**
   * Creates {@code count} ClusterIP Services (no NodePort) named {@code prefix-i} as
   * {@link #create} does: what a range holds while other Services are measured.
   */
  public static Report createClusterIpOnly(KubernetesClient client, String namespace, String prefix, int count,
      int clients) {
    return createAll(client, namespace, prefix, count, clients, Pacing.NONE, i -> false, done -> { });
  }

  private static Report createAll(KubernetesClient client, String namespace, String prefix, int count, int clients,
      Pacing pacing, IntPredicate nodePort, IntConsumer afterEach) {
    AtomicInteger next = new AtomicInteger();
    AtomicInteger done = new AtomicInteger();
    List<Outcome> outcomes = Collections.synchronizedList(new ArrayList<>());
    ExecutorService pool = Executors.newFixedThreadPool(clients);
    long started = System.nanoTime();
    List<Future<?>> workers = new ArrayList<>();
    for (int c = 0; c < clients; c++) {
      workers.add(pool.submit(() -> {
        for (int i = next.getAndIncrement(); i < count; i = next.getAndIncrement()) {
          pacing.awaitTurn(started, i);
          outcomes.add(createOne(client, namespace, prefix + "-" + i, nodePort.test(i)));
          afterEach.accept(done.incrementAndGet());
        }
      }));
    }
    awaitAll(pool, workers, "a load client failed");
    return new Report(clients, Duration.ofNanos(System.nanoTime() - started), List.copyOf(outcomes));
  }

  /** The Service the load creates: one port, NodePort or ClusterIP. */
  private static Service service(String namespace, String name, boolean nodePort) {
    return new ServiceBuilder()
        .withNewMetadata().withName(name).withNamespace(namespace).endMetadata()
        .withNewSpec().withType(nodePort ? "NodePort" : "ClusterIP")
        .addNewPort().withName("http").withPort(80).endPort()
        .endSpec().build();
  }

  private static Outcome createOne(KubernetesClient client, String namespace, String name, boolean nodePort) {
    Service service = service(namespace, name, nodePort);
    String error = null;
    long nanos = 0;
    int attempt = 1;
    for (; attempt <= 10; attempt++) {
      long started = System.nanoTime();
      try {
        client.services().inNamespace(namespace).resource(service).create();
        return new Outcome(name, true, System.nanoTime() - started, attempt, null);
      } catch (KubernetesClientException e) {
        nanos = System.nanoTime() - started;
        error = e.getStatus() != null && e.getStatus().getMessage() != null ? e.getStatus().getMessage() : e.getMessage();
        if (e.getCode() == 409 && String.valueOf(error).contains("already exists") && attempt > 1) {
          return new Outcome(name, true, nanos, attempt, null);  // an earlier attempt landed
        }
        if (!unreachableWebhook(error)) {
          break;
        }
        Processes.sleep(200L * attempt);
      }
    }
    return new Outcome(name, false, nanos, Math.min(attempt, 10), error);
  }

  /**
   * Creates {@code count} Services that subrange admits (and allocates for) but the API server
   * then refuses: their label value is invalid, and the API server validates objects after the
   * mutating webhooks ran. Each leaves values that no object carries, as a create refused by a
   * later webhook or a quota would: what the reconciler frees after its grace period.
   *
   * @return how many were refused as expected (422, "Invalid value")
   */
  public static int createRefusedAfterAdmission(KubernetesClient client, String namespace, String prefix,
      int count) {
    int refused = 0;
    for (int i = 0; i < count; i++) {
      Service service = service(namespace, prefix + "-" + i, i % 2 == 1);
      service.getMetadata().setLabels(Map.of("subrange.io/load", "not a valid label value!"));
      try {
        client.services().inNamespace(namespace).resource(service).create();
      } catch (KubernetesClientException e) {
        if (e.getCode() == 422 && String.valueOf(e.getMessage()).contains("Invalid value")) {
          refused++;
        }
      }
    }
    return refused;
  }

  /** The API server could not get an answer from the webhook: not subrange's answer, so try again. */
  static boolean unreachableWebhook(String message) {
    return message != null && message.contains("failed calling webhook") && !message.contains("denied");
  }

  /** Deletes every Service in the namespace with the given prefix, from {@code clients} threads. */
  public static void deleteAll(KubernetesClient client, String namespace, String prefix, int clients) {
    List<String> names = client.services().inNamespace(namespace).list().getItems().stream()
        .map(s -> s.getMetadata().getName()).filter(n -> n.startsWith(prefix + "-")).toList();
    ExecutorService pool = Executors.newFixedThreadPool(clients);
    List<Future<?>> deletions = new ArrayList<>();
    for (String name : names) {
      deletions.add(pool.submit(() -> client.services().inNamespace(namespace).withName(name).delete()));
    }
    awaitAll(pool, deletions, "deleting Services failed");
  }

  /** Waits for every task; the pool is shut down whatever happens. */
  private static void awaitAll(ExecutorService pool, List<Future<?>> tasks, String failure) {
    try {
      for (Future<?> task : tasks) {
        task.get();
      }
    } catch (Exception e) {
      throw new IllegalStateException(failure, e);
    } finally {
      pool.shutdownNow();
    }
  }
}
