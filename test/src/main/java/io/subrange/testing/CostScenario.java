package io.subrange.testing;

import static io.subrange.testing.PrometheusSamples.sum;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.subrange.testing.PrometheusSamples.Sample;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;

/**
 * The load harness's {@code cost} scenario (issue 12): what a Service create costs, in CPU per
 * process and in throughput, at each API server Service range {@code 10.96.0.0/P}, against the
 * same API server and etcd one configuration after another: the built-in allocation alone, a
 * webhook that does nothing ({@link NoOpWebhook}), subrange with one replica, and subrange as
 * deployed (R replicas and the reconciler); at the first /12 (or widest) range also with many
 * Services held, then empty again once they are deleted; then the built-in alone again, so that
 * what the others are compared with spans the same hour, and at that range the built-in alone
 * with as many Services held (what holding them costs the API server by itself). Each measured run
 * follows warm-up rounds of creates and deletes of the same size.
 */
final class CostScenario {

  /** Where the held Services live. */
  static final String HELD_NAMESPACE = "held";
  /** The API server's own Service (default/kubernetes), the first address of every range here. */
  private static final String API_SERVER_SERVICE_IP = "10.96.0.1";

  // The configurations, in the order they run.
  private static final String BUILT_IN = "built-in";
  private static final String NO_OP = "no-op";
  private static final String ONE = "one-replica";
  private static final String REPLICAS = "replicas";
  private static final String HELD = "held-run";
  /**
   * subrange's second empty stretch, after the held run and the held Services' deletes (see
   * replicas). Measured with the held run.
   */
  private static final String REPLICAS_AFTER = "replicas-after";
  /** The built-in's second stretch, after the webhooks are gone (see measure). */
  private static final String BUILT_IN_AFTER = "built-in-after";
  /**
   * The built-in alone with as many Services held, created by itself after its second stretch: the
   * held run's comparison for the API server's own part (see measure). Measured with the held run.
   */
  private static final String BUILT_IN_HELD = "built-in-held";
  /** The harness's own process: the load client, and the balancer in front of the replicas. */
  private static final List<ProcessHandle> HARNESS = List.of(ProcessHandle.current());
  /** The clock as test/scripts/machine-speed prints it (see clockTime). */
  private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss");
  /** How long a measured run waits for compiles started before it (see awaitJitIdle). */
  private static final Duration JIT_IDLE_LIMIT = Duration.ofSeconds(5);

  /** The command line's options, with the scenario's defaults. */
  record Options(int services, int clients, int held, List<Integer> prefixes, int replicas, int warmUpRounds,
      int warmUpLimit, int measuredRuns, Set<String> only, int apiServerProfileSeconds, boolean noOpPatches,
      Pacing pacing) {

    /** Every configuration, in the order they run: what {@code --only} chooses from. */
    static final List<String> CONFIGURATIONS = List.of(BUILT_IN, NO_OP, ONE, REPLICAS, HELD);

    static Options from(Map<String, String> options) {
      List<Integer> prefixes = Arrays.stream(options.getOrDefault("ranges", "12,16").split(","))
          .map(String::trim).map(p -> p.startsWith("/") ? p.substring(1) : p).map(Integer::parseInt).toList();
      int warmUpRounds = Integer.parseInt(options.getOrDefault("warm-up-rounds", "3"));
      return new Options(Integer.parseInt(options.getOrDefault("services", "2000")),
          Integer.parseInt(options.getOrDefault("clients", "16").split(",")[0]),
          Integer.parseInt(options.getOrDefault("held", "20000")), prefixes,
          Integer.parseInt(options.getOrDefault("replicas", "3")),
          warmUpRounds,
          Integer.parseInt(options.getOrDefault("warm-up-limit", String.valueOf(Math.max(12, warmUpRounds)))),
          Integer.parseInt(options.getOrDefault("measured-runs", "3")),
          Set.copyOf(Arrays.asList(options.getOrDefault("only", String.join(",", CONFIGURATIONS)).split(","))),
          Integer.parseInt(options.getOrDefault("api-server-profile", "0")),
          Boolean.parseBoolean(options.getOrDefault("no-op-patches", "false")),
          new Pacing(Double.parseDouble(options.getOrDefault("rate", "0"))));
    }

    Options {
      if (warmUpRounds < 1) {
        throw new IllegalArgumentException("--warm-up-rounds is at least 1, not " + warmUpRounds);
      }
      if (warmUpLimit < warmUpRounds) {
        throw new IllegalArgumentException("--warm-up-limit is at least --warm-up-rounds (" + warmUpRounds
            + "), not " + warmUpLimit);
      }
      if (measuredRuns < 1) {
        throw new IllegalArgumentException("--measured-runs is at least 1, not " + measuredRuns);
      }
      if (apiServerProfileSeconds < 0) {
        throw new IllegalArgumentException("--api-server-profile is seconds, 0 for none, not "
            + apiServerProfileSeconds);
      }
      if (!CONFIGURATIONS.containsAll(only)) {
        throw new IllegalArgumentException("--only takes some of " + String.join(",", CONFIGURATIONS) + ", not "
            + String.join(",", only));
      }
    }

    /** Whether this run measures {@code configuration} (--only; all by default). */
    boolean measures(String configuration) {
      return only.contains(configuration);
    }

    /** Whether every configuration is measured: only then can every target be checked. */
    boolean complete() {
      return only.containsAll(CONFIGURATIONS) || !only.contains(HELD) && held == 0
          && only.containsAll(CONFIGURATIONS.subList(0, 4));
    }

    WarmUp warmUp() {
      return new WarmUp(warmUpRounds, warmUpLimit);
    }

    /** The range the held Services go in: /12 if measured, else the widest. */
    int heldPrefix() {
      return prefixes.contains(12) ? 12 : Collections.min(prefixes);
    }
  }

  /**
   * Rounds of creates and deletes before a measured run: at least {@code min}, then more until
   * the JIT has settled (its threads under {@link #SETTLED_JIT_MILLIS} per create in each of the
   * last {@link #QUIET_ROUNDS} rounds), at most {@code limit}.
   */
  record WarmUp(int min, int limit) {

    /** ms of compiler threads' CPU per create and delete in a round, summed over the measured JVMs. */
    static final double SETTLED_JIT_MILLIS = 0.03;

    /**
     * Consecutive rounds under {@link #SETTLED_JIT_MILLIS} that count as settled. One was not
     * enough: in the thirty-sixth round's held run at /12 a single round at 0.010, after 61 at
     * 0.035-0.515, ended the warm-up, and the replicas then compiled for 0.24 and 0.32 ms per create
     * in two of the three measured runs (docs/performance.md).
     */
    static final int QUIET_ROUNDS = 3;

    /** Whether the JIT has settled, given its ms per create and delete in each round so far. */
    static boolean settled(List<Double> jitByRound) {
      return jitByRound.size() >= QUIET_ROUNDS && jitByRound.subList(jitByRound.size() - QUIET_ROUNDS,
          jitByRound.size()).stream().allMatch(jit -> jit < SETTLED_JIT_MILLIS);
    }

    /**
     * For subrange with R webhook replicas and the reconciler, whose JVMs compile for far longer
     * than the no-op webhook's (settled in five to nine rounds). One replica: at most three times
     * the limit; in the thirty-first round its compilers were still at 0.56 ms per create and
     * delete in the twelfth round at /12, and at 0.57 in the twelfth and 0.17 in the thirty-sixth
     * at /16. R replicas: each serves about an Rth of a round, so at least R times the rounds and
     * at most 2R times the limit. The API server's calls do not spread evenly over the replicas
     * (it reuses the connection it used last first): in one of the thirtieth round's measured runs
     * one replica served for 0.01 of the 0.33 ms per create the three spent serving. The
     * least-called replica keeps compiling long after R times one replica's rounds: in that
     * round's /12 run three replicas were still at 0.195 ms of JIT per create and delete in their
     * 36th round, and settled after 31 more (docs/performance.md).
     */
    WarmUp forSubrange(int replicas) {
      return replicas == 1 ? new WarmUp(min, 3 * limit) : new WarmUp(min * replicas, 2 * limit * replicas);
    }
  }

  /** One measured run: what the clients saw, and the CPU each part used per create (ms). */
  record Run(ServiceLoad.Report report, Map<String, Double> cpu) {

    double cpu(String part) {
      return cpu.getOrDefault(part, 0.0);
    }

    /** subrange's JVMs, webhooks and reconciler. */
    double subrange() {
      return cpu(CpuUse.WEBHOOKS) + cpu(CpuUse.RECONCILER);
    }

    /** What answers the webhook calls: subrange's webhook replicas, or the no-op (the reconciler has its column). */
    double webhookJvms() {
      return cpu(CpuUse.WEBHOOKS) + cpu(CpuUse.NO_OP);
    }

    double total() {
      return cpu.values().stream().mapToDouble(Double::doubleValue).sum();
    }
  }

  /**
   * A configuration's measured runs, one after another on the same warm JVMs: each figure is the
   * median of the runs' (of each run's sum, for sums), so one slow or fast 20 seconds on shared
   * cores does not decide a target alone.
   */
  record Measured(List<Run> runs) {

    Measured {
      if (runs.isEmpty()) {
        throw new IllegalArgumentException("a configuration is measured at least once");
      }
      runs = List.copyOf(runs);
    }

    /** The median of {@code figure} over the runs (the mean of the middle two for an even count). */
    double median(ToDoubleFunction<Run> figure) {
      double[] values = runs.stream().mapToDouble(figure).sorted().toArray();
      int middle = values.length / 2;
      return values.length % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
    }

    /** The runs' values of {@code figure} in the order they ran, then their median: "0.71 0.66 0.74: 0.71". */
    String spread(ToDoubleFunction<Run> figure) {
      String each = runs.stream().map(run -> String.format("%.2f", figure.applyAsDouble(run)))
          .collect(Collectors.joining(" "));
      return runs.size() == 1 ? each : String.format("%s: %.2f", each, median(figure));
    }

    double cpu(String part) {
      return median(run -> run.cpu(part));
    }

    /** These runs and {@code later}'s as one configuration's: measured in two stretches, judged on all. */
    Measured with(Measured later) {
      List<Run> all = new ArrayList<>(runs);
      all.addAll(later.runs);
      return new Measured(all);
    }

    double subrange() {
      return median(Run::subrange);
    }

    double webhookJvms() {
      return median(Run::webhookJvms);
    }

    double total() {
      return median(Run::total);
    }

    double createsPerSecond() {
      return median(run -> run.report().createsPerSecond());
    }

    double percentileMillis(double percentile) {
      return median(run -> run.report().percentileMillis(percentile));
    }
  }

  private final Options options;
  private final RepoLayout repo = RepoLayout.locate();
  private final List<String> rows = new ArrayList<>();
  private boolean ok = true;

  private CostScenario(Options options) {
    this.options = options;
  }

  /** Runs the scenario; true when every check passed. */
  static boolean cost(Map<String, String> commandLine) {
    Options options = Options.from(commandLine);
    System.out.printf("== cost: %d Services (half NodePort) per run, %d clients (%s), API server ranges %s;"
            + " built-in, no-op webhook, subrange with 1 and with %d replicas + reconciler; %,d ClusterIP Services"
            + " held at /%d%n", options.services(), options.clients(), options.pacing(),
        options.prefixes().stream().map(p -> "/" + p).toList(), options.replicas(), options.held(),
        options.heldPrefix());
    CostScenario scenario = new CostScenario(options);
    for (int prefix : options.prefixes()) {
      scenario.measure(prefix);
    }
    System.out.println("== cost: all ranges");
    System.out.println(header());
    scenario.rows.forEach(System.out::println);
    if (!options.complete()) {
      // An experiment on some configurations: it checks what it can, and never passes.
      System.out.printf("   [----] partial run (--only %s): not every target was checked%n",
          String.join(",", options.only()));
      return false;
    }
    return scenario.ok;
  }

  /** Every configuration against one API server with {@code --service-cluster-ip-range 10.96.0.0/prefix}. */
  private void measure(int prefix) {
    String range = "10.96.0.0/" + prefix;
    Path workDir = repo.root().resolve("test/target/load-cost-" + prefix);
    Map<String, Measured> results = new LinkedHashMap<>();
    System.out.printf("== /%d: kube-apiserver --service-cluster-ip-range %s, subrange's ServiceCIDR the same%n",
        prefix, range);
    // At /12 the built-in allocator writes a 128 KiB bitmap to etcd per create and per delete: tens
    // of thousands of them fill etcd's 2 GiB quota unless the history is compacted often (the API
    // server's default is every 5 minutes; test/scripts/load also raises the quota).
    List<String> flags = new ArrayList<>(ControlPlane.FEATURE_GATES);
    flags.addAll(List.of("--etcd-compaction-interval", "30s"));
    try (ControlPlane plane = ControlPlane.start(repo, range, flags, workDir);
         KubernetesClient admin = plane.client()) {
      Config config = plane.config();
      Measured builtInBefore = null;
      if (options.measures(BUILT_IN)) {
        builtInBefore = run(config, workDir, BUILT_IN, options.warmUp(), Map.of(), null, null);
        results.put(BUILT_IN, builtInBefore);
      }
      if (options.measures(NO_OP)) {
        results.put(NO_OP, noOp(config, admin, workDir));
      }
      ReplicatedCluster.Settings settings = ReplicatedCluster.Settings.defaults().withServiceCidrs(range);
      if (options.measures(ONE)) {
        try (ReplicatedCluster cluster = ReplicatedCluster.start(repo, plane, workDir.resolve("one-replica"),
            settings.withWebhooks(1))) {
          // The next cluster starts from the store this one leaves (run leaves it as it found it),
          // and registers under the same names: let nothing call this one's address once it is gone.
          results.put(ONE, run(config, workDir, ONE, options.warmUp().forSubrange(1), CpuUse.processes(cluster),
              cluster, cluster.probes()));
          checkNothingRepaired(cluster, prefix, ONE);
          cluster.unregisterWebhooks();
        }
      }
      boolean held = options.measures(HELD) && prefix == options.heldPrefix() && options.held() > 0;
      if (options.measures(REPLICAS) || held) {
        replicas(config, plane, workDir, prefix, settings, held, results);
      }
      if (builtInBefore != null && results.size() > 1) {
        // The ratio and the p99 overhead compare the built-in with configurations measured up to
        // an hour later, on a machine whose speed drifts within minutes: in the thirtieth round's
        // /12 run three replicas made 240.5, 181.1 and 165.9 creates/s in three consecutive runs,
        // while the API server's CPU for the same work went from 4.09 to 5.34 ms per create and the
        // load client's from 0.53 to 0.89. So the built-in runs again once the webhooks are gone,
        // and its figures are the medians of both stretches, which bracket the others in time.
        Measured after = run(config, workDir, BUILT_IN_AFTER, options.warmUp(), Map.of(), null, null);
        results.put(BUILT_IN, bothStretches(BUILT_IN, "the webhooks", builtInBefore, after));
        if (held) {
          // In the thirty-fourth, thirty-sixth and thirty-seventh rounds the API server took 2.4-2.5
          // ms more per create with the Services held than without, next to subrange: whether it
          // does so alone too says how much of the held run's slowdown is the API server's own. The
          // built-in holds them itself (subrange is gone), right after its own second empty
          // stretch, which is its closest comparison in time. They stay: the control plane goes next.
          hold(config, "the built-in");
          Measured builtInHeld = run(config, workDir, BUILT_IN_HELD, options.warmUp(), Map.of(), null, null);
          results.put(BUILT_IN_HELD, builtInHeld);
          printBuiltInHeld(prefix, "against its empty runs just before", after, builtInHeld);
        }
      }
    }
    report(prefix, results);
  }

  /**
   * One configuration's two stretches as one, judged on all their runs, with a line showing each:
   * the machine's speed drifts within minutes, and two stretches on either side of what they are
   * compared with keep one slow spell from deciding a target alone.
   */
  private static Measured bothStretches(String label, String around, Measured before, Measured after) {
    System.out.printf("   %-11s creates/s before %s %s, after them %s; p99 ms before %s, after %s;"
            + " the table takes all %d runs%n", label, around, before.spread(r -> r.report().createsPerSecond()),
        after.spread(r -> r.report().createsPerSecond()), before.spread(r -> r.report().percentileMillis(99)),
        after.spread(r -> r.report().percentileMillis(99)), before.runs().size() + after.runs().size());
    return before.with(after);
  }

  /**
   * subrange as deployed (R replicas and the reconciler), empty; then with the held Services, and
   * empty again once they are deleted; afterwards the webhooks are unregistered, so that the
   * built-in can run again.
   */
  private void replicas(Config config, ControlPlane plane, Path workDir, int prefix,
      ReplicatedCluster.Settings settings, boolean held, Map<String, Measured> results) {
    try (ReplicatedCluster cluster = ReplicatedCluster.start(repo, plane, workDir.resolve("replicas"),
        settings.withWebhooks(options.replicas()))) {
      // Each replica serves about a third of the creates, unevenly: see WarmUp.forSubrange.
      Measured empty = run(config, workDir, REPLICAS, options.warmUp().forSubrange(options.replicas()),
          CpuUse.processes(cluster), cluster, cluster.probes());
      results.put(REPLICAS, empty);
      checkNothingRepaired(cluster, prefix, REPLICAS);
      if (held) {
        hold(config, "subrange");
        // The JVMs have just admitted every held Service, but ClusterIP ones only: the measured
        // run's NodePorts then take code paths the compiler had stopped expecting, and it
        // compiles them again (0.58 ms per create in the twentieth round's held run after three
        // rounds, against 0.21 empty; docs/performance.md). The held run is compared with the
        // empty one, so it warms up by the same rule: rounds of the measured mix until the JIT
        // settles, at most as many as the empty run could take.
        results.put(HELD, run(config, workDir, HELD, options.warmUp().forSubrange(options.replicas()),
            CpuUse.processes(cluster), cluster, cluster.probes()));
        checkNothingRepaired(cluster, prefix, HELD);
        // The held run is compared with the empty one, measured about forty minutes earlier: in the
        // thirty-seventh round the load client's own CPU per create (the same work in every run)
        // rose by 30% across the three held runs, so part of what they measured was the machine.
        // subrange runs empty again once the held Services are deleted, and the empty side of the
        // held targets is the median of both stretches, as the built-in's is for the ratio. Its
        // warm-up is the usual minimum, whatever the JIT does: by then the JVMs have run twice the
        // rounds the empty run had before its measured runs, and the JIT is as settled as it gets
        // (none of the thirty-seventh round's 144 rounds had three quiet ones in a row).
        deleteHeld(config);
        Duration limit = heldFreedLimit();
        long waitStart = System.nanoTime();
        boolean freed = awaitDeletesFreed(cluster, limit);
        ok &= LoadHarness.check(String.format("/%d: the store empty again %.0f s after the %,d held Services' deletes"
                + " (at most %d s)", prefix, (System.nanoTime() - waitStart) / 1e9, options.held(), limit.toSeconds()),
            freed);
        Measured emptyAgain = run(config, workDir, REPLICAS_AFTER,
            new WarmUp(options.warmUpRounds(), options.warmUpRounds()), CpuUse.processes(cluster), cluster,
            cluster.probes());
        checkNothingRepaired(cluster, prefix, REPLICAS_AFTER);
        results.put(REPLICAS, bothStretches(REPLICAS, "the held Services", empty, emptyAgain));
      }
      LoadHarness.printStoreMetrics(cluster);
      System.out.println("   connections per replica: " + cluster.balancer().connectionsByBackend());
      // With failurePolicy Fail a registration left behind would refuse every create once they stop.
      cluster.unregisterWebhooks();
    }
  }

  /**
   * Deletes the held Services (which subrange's reconciler frees), so that subrange's second empty
   * stretch and the built-in's runs after it find an API server and a store as the first ones did.
   */
  private void deleteHeld(Config config) {
    try (KubernetesClient load = ServiceLoad.concurrentClient(config, options.clients())) {
      ServiceLoad.deleteAll(load, HELD_NAMESPACE, "held", options.clients());
    }
  }

  /** The no-op webhook registered as subrange would be, measured, then removed. */
  private Measured noOp(Config config, KubernetesClient admin, Path workDir) {
    try (NoOpWebhookProcess noOp = NoOpWebhookProcess.start(repo, workDir, options.noOpPatches());
         KubeletProbes probes = new KubeletProbes()) {
      probes.watch(noOp.pod(KubeletProbes.declared(repo, "deployment.yaml")));
      System.out.println("   " + noOp.describe());
      WebhookRegistration.register(admin, repo, noOp.baseUrl(), noOp.caBundle(), noOp::serviceCreates);
      Map<String, List<ProcessHandle>> processes = new LinkedHashMap<>();
      processes.put(CpuUse.NO_OP, List.of(noOp.processHandle()));
      Measured measured = run(config, workDir, NO_OP, options.warmUp(), processes, null, probes);
      System.out.println("   " + noOp.describe());
      // With failurePolicy Fail a configuration left behind would refuse every create once it stops.
      WebhookRegistration.unregister(admin, noOp::serviceCreates);
      return measured;
    }
  }

  /**
   * Warm-up rounds, then at once the measured runs ({@code --measured-runs}, each as
   * {@link #measureOnce}), in namespace {@code label-clients}; each run's Services are deleted
   * after it.
   *
   * <p>The JVMs compile for thousands of creates after they start. With one round of warm-up and
   * C1 only, three replicas compiled about 2,000 methods during the measured run of 1,500
   * creates, and perf showed up to a third of their samples in the interpreter and their compiler
   * threads at 0.34 ms per create (docs/performance.md, "Eighth round"); with C2, as deployed now,
   * its compiles go on for longer. A pod that has run for a while has none of that, so each round
   * creates {@code services} Services and deletes them, and rounds go on until the measured JVMs'
   * compiler threads have settled ({@link WarmUp}). Whatever they still compile in the measured
   * run counts in it.
   *
   * <p>After each round's deletes the run waits only until the reconciler has freed what the
   * Services held, not for the values the replicas reserved ahead and did not hand out (their
   * pools keep them for the next creates; the reconciler frees them after its grace, a minute).
   * Waiting for those as well, as before, left the API server's webhook connections idle for
   * longer than its client keeps them (90 s): the measured run then began with TLS handshakes,
   * on connections the balancer could hand to a replica that had served none of the warm-up.
   *
   * @param workDir where this range's logs go, and the API server's profile of the run
   *     ({@code --api-server-profile}, {@link ApiServerProfile})
   * @param warmUp rounds of {@code services} creates and deletes before the measured runs
   * @param processes the webhook side's processes by part, sampled for CPU with the API server's
   * @param subrange the subrange deployment being measured; null for the built-in and the no-op
   * @param probes the kubelet's probes of the webhook side, running all along (their CPU counts
   *     in the run, as in a cluster); null for the built-in
   */
  private Measured run(Config config, Path workDir, String label, WarmUp warmUp,
      Map<String, List<ProcessHandle>> processes, ReplicatedCluster subrange, KubeletProbes probes) {
    int clients = options.clients();
    String namespace = label + "-" + clients;
    try (KubernetesClient load = ServiceLoad.concurrentClient(config, clients)) {
      ControlPlane.ensureNamespace(load, namespace);
      warmUp(load, namespace, warmUp, jvms(processes), subrange);
      List<Run> runs = new ArrayList<>();
      for (int n = 1; n <= options.measuredRuns(); n++) {
        runs.add(measureOnce(load, workDir, label, namespace, n, processes, subrange, probes));
      }
      Measured measured = new Measured(runs);
      if (runs.size() > 1) {
        // Each run's figures in order, then their median; the webhook side's JVMs where there are any.
        System.out.printf("   %-11s %d measured runs: creates/s %s; p99 ms %s; ms CPU per create:"
                + " kube-apiserver %s, webhook JVMs %s, reconciler %s, total %s%n", label, runs.size(),
            measured.spread(run -> run.report().createsPerSecond()),
            measured.spread(run -> run.report().percentileMillis(99)),
            measured.spread(run -> run.cpu(CpuUse.KUBE_APISERVER)), measured.spread(Run::webhookJvms),
            measured.spread(run -> run.cpu(CpuUse.RECONCILER)), measured.spread(Run::total));
      }
      return measured;
    }
  }

  /**
   * The {@code n}th measured run of a configuration: {@code services} creates, its figures printed,
   * then their deletes. Between runs it waits until the reconciler has freed what the deleted
   * Services held (as between warm-up rounds); after the last, until the store is back to empty,
   * except in the held run, whose held Services stay. Only the first is profiled
   * ({@code --api-server-profile}).
   */
  private Run measureOnce(KubernetesClient load, Path workDir, String label, String namespace, int n,
      Map<String, List<ProcessHandle>> processes, ReplicatedCluster subrange, KubeletProbes probes) {
    int services = options.services();
    int clients = options.clients();
    boolean last = n == options.measuredRuns();
    // Names of their own, as the warm-up's rounds have: to subrange, a create of a name whose
    // values are still held is a retry, and it asks the API server whether that name exists.
    String names = "svc" + n;
    List<ProcessHandle> webhooks = subrange == null ? List.of() : processes.get(CpuUse.WEBHOOKS);
    List<ProcessHandle> reconciler = subrange == null ? List.of() : processes.get(CpuUse.RECONCILER);
    // The harness's read of the JVMs' metrics is one more scrape of each (KubeletProbes scrapes
    // every 30 s, as Prometheus would), one, not one per number: the exposition code it runs is
    // compiled from scrapes. Whatever the JIT still compiles after it is the harness's cost, not
    // the creates': the CPU is counted without it.
    // (A pass in the wait counts among the run's passes, its CPU not in the run's.)
    Passes passesBefore = Passes.read(subrange);
    BatchWaits waitsBefore = BatchWaits.read(subrange);
    awaitJitIdle(jvms(processes));
    ThreadCpu webhookThreads = ThreadCpu.sample(webhooks);
    ThreadCpu reconcilerThreads = ThreadCpu.sample(reconciler);
    ThreadCpu clientThreads = ThreadCpu.sample(HARNESS);
    // Markers for test/scripts/profile-cost, which records these processes in between.
    System.out.printf("   %-11s measuring: %s%n", label, pids(processes));
    Map<String, Long> probesBefore = probes == null ? Map.of() : probes.counts();
    ApiServerTraffic trafficBefore = ApiServerTraffic.read(load);
    ApiServerProfile profile = options.apiServerProfileSeconds() == 0 || n > 1 ? null : ApiServerProfile.start(load,
        options.apiServerProfileSeconds(), workDir.resolve("apiserver-" + label + ".pprof"));
    String startedAt = clockTime();
    CpuUse before = CpuUse.sample(processes);
    ServiceLoad.Report report = ServiceLoad.create(load, namespace, names, services, clients, options.pacing(),
        done -> { });
    CpuUse after = CpuUse.sample(processes);
    String endedAt = clockTime();
    ApiServerTraffic trafficAfter = ApiServerTraffic.read(load);
    ThreadCpu webhookThreadsAfter = ThreadCpu.sample(webhooks);
    ThreadCpu reconcilerThreadsAfter = ThreadCpu.sample(reconciler);
    ThreadCpu clientThreadsAfter = ThreadCpu.sample(HARNESS);
    System.out.printf("   %-11s measured%n", label);
    Passes passesAfter = Passes.read(subrange);
    BatchWaits waitsAfter = BatchWaits.read(subrange);
    Map<String, Double> cpu = after.millisPerCreate(before, report.created());
    System.out.printf("   %-11s %s%n", label, report.summary());
    System.out.printf("   %-11s run %d from %s to %s%n", "", n, startedAt, endedAt);
    System.out.printf("   %-11s CPU: %s%n", "", CpuUse.describe(cpu));
    System.out.printf("   %-11s API server requests per create: %s%n", "",
        trafficAfter.describeSince(trafficBefore, report.created()));
    if (profile != null) {
      System.out.printf("   %-11s %s%n", "", profile.finish());
    }
    if (subrange != null) {
      System.out.printf("   %-11s by thread, ms CPU per create: webhooks: %s; reconciler: %s%n", "",
          webhookThreadsAfter.describeSince(webhookThreads, report.created()),
          reconcilerThreadsAfter.describeSince(reconcilerThreads, report.created()));
      if (webhooks.size() > 1) {
        System.out.printf("   %-11s each webhook replica, ms CPU per create: %s%n", "",
            webhookThreadsAfter.describeEachProcessSince(webhookThreads, report.created()));
      }
      System.out.printf("   %-11s by thread, wake-ups per create: webhooks: %s; reconciler: %s%n", "",
          webhookThreadsAfter.describeWakeUpsSince(webhookThreads, report.created()),
          reconcilerThreadsAfter.describeWakeUpsSince(reconcilerThreads, report.created()));
      // The load client's column holds the balancer in front of the replicas, which in a cluster
      // would be kube-proxy's rules in the kernel, charged to no process.
      System.out.printf("   %-11s load client by thread, ms CPU per create: %s%n", "",
          clientThreadsAfter.describeSince(clientThreads, report.created()));
      System.out.printf("   %-11s reconciler passes in it: %s%n", "", passesAfter.since(passesBefore));
      System.out.printf("   %-11s creates that waited for a batch reserved ahead: %s%n", "",
          waitsAfter.since(waitsBefore));
    }
    if (probes != null) {
      // A failed readiness probe would take a pod out of the Service's endpoints in a cluster.
      System.out.printf("   %-11s kubelet probes and Prometheus scrapes in it: %s%n", "",
          probes.describeSince(probesBefore));
    }
    CpuUse beforeDeletes = CpuUse.sample(processes);
    ApiServerTraffic trafficBeforeDeletes = ApiServerTraffic.read(load);
    ServiceLoad.deleteAll(load, namespace, names, clients);
    String waited = "";
    if (subrange != null && !last) {
      awaitReleased(subrange, namespace + "/" + names + "-");
      waited = " until released";
    } else if (subrange != null && !label.equals(HELD)) {
      // Back to an empty store for what runs next (not after the held run: the held stay).
      awaitDeletesFreed(subrange);
      waited = " until freed";
    }
    System.out.printf("   %-11s deletes%s, CPU: %s%n", "", waited,
        CpuUse.describe(CpuUse.sample(processes).millisPerCreate(beforeDeletes, report.created()), "delete"));
    // The reconciler's releases show here, as PUT configmaps.
    System.out.printf("   %-11s API server requests per delete: %s%n", "",
        ApiServerTraffic.read(load).describeSince(trafficBeforeDeletes, report.created()));
    return new Run(report, cpu);
  }

  /**
   * Waits, at most {@link #JIT_IDLE_LIMIT}, until the JVMs' compiler threads have used no CPU for
   * half a second (their accounting counts in ticks of 10 ms), so that compiles started before
   * the measured run do not land in it. A deployed JVM is scraped by Prometheus at a steady interval
   * and has its metrics code compiled once; when the harness read the reconciler's metrics only
   * around each run (before {@link KubeletProbes}), without the wait that code was compiled inside
   * the run: about 150 of the reconciler's 260 compiles in one measured run
   * (-Xlog:jit+compilation, "Eleventh round").
   */
  private static void awaitJitIdle(List<ProcessHandle> jvms) {
    long deadline = System.nanoTime() + JIT_IDLE_LIMIT.toNanos();
    ThreadCpu last = ThreadCpu.sample(jvms);
    while (System.nanoTime() < deadline) {
      try {
        Thread.sleep(500);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      ThreadCpu now = ThreadCpu.sample(jvms);
      if (now.millisPerCreateSince(last, 1).getOrDefault(ThreadCpu.JIT, 0.0) == 0) {
        return;
      }
      last = now;
    }
    System.out.printf("   %-11s the JIT was still compiling after %d s; the measured run starts anyway%n", "",
        JIT_IDLE_LIMIT.toSeconds());
  }

  /**
   * Rounds of creates and deletes until {@code warmUp} says stop, then one line on what the JIT
   * did in each.
   */
  private void warmUp(KubernetesClient load, String namespace, WarmUp warmUp, List<ProcessHandle> jvms,
      ReplicatedCluster subrange) {
    List<Double> compiling = new ArrayList<>();
    String startedAt = clockTime();
    boolean settled = false;
    boolean measurable = false;
    int rounds = 0;
    while (rounds < warmUp.limit() && !(settled && rounds >= warmUp.min())) {
      rounds++;
      String prefix = "warm" + rounds;
      ThreadCpu before = ThreadCpu.sample(jvms);
      ServiceLoad.create(load, namespace, prefix, options.services(), options.clients(), options.pacing(),
          done -> { });
      ServiceLoad.deleteAll(load, namespace, prefix, options.clients());
      if (subrange != null) {
        // The reconciler frees them from the deletes' events, with writes every replica loads:
        // let that be over before the next round, and before the measured run.
        awaitReleased(subrange, namespace + "/" + prefix + "-");
      }
      // Compiler threads the JVM stopped during the round land in "threads that ended" (with
      // any other thread that ended: an upper bound, never below nothing).
      Map<String, Double> byKind = ThreadCpu.sample(jvms).millisPerCreateSince(before, options.services());
      measurable = !byKind.isEmpty();
      double jit = byKind.getOrDefault(ThreadCpu.JIT, 0.0) + Math.max(0, byKind.getOrDefault(ThreadCpu.ENDED, 0.0));
      compiling.add(jit);
      // Nothing to settle (the built-in alone) or nothing to read it from: the minimum rounds, as
      // before the rule counted quiet rounds in a row.
      settled = !measurable || WarmUp.settled(compiling);
    }
    if (rounds > 0) {
      String state = jvms.isEmpty() ? "no JVM to settle"
          : !measurable ? "JIT not measurable here (no /proc)"
          : settled ? "JIT settled" : "JIT NOT settled (still compiling)";
      System.out.printf("   %-11s warm-up from %s to %s: %d rounds of %d creates and deletes, %s; JIT ms per"
          + " create and delete by round: %s%n", "", startedAt, clockTime(), rounds, options.services(), state,
          compiling.stream().map(jit -> String.format("%.3f", jit)).collect(Collectors.joining(" ")));
    }
  }

  /**
   * The reconciler's passes so far, full comparisons and passes over what changed: how many, and
   * their wall time in seconds.
   */
  private record Passes(double full, double fullSeconds, double changes, double changesSeconds) {

    static final String METRIC = "subrange_reconciler_pass_duration_seconds";

    static Passes read(ReplicatedCluster subrange) {
      if (subrange == null) {
        return new Passes(0, 0, 0, 0);
      }
      List<Sample> samples = subrange.reconciler().samples();
      Map<String, String> full = Map.of("pass", "full");
      Map<String, String> changes = Map.of("pass", "changes");
      return new Passes(sum(samples, METRIC + "_count", full), sum(samples, METRIC + "_sum", full),
          sum(samples, METRIC + "_count", changes), sum(samples, METRIC + "_sum", changes));
    }

    String since(Passes before) {
      return describe("full", full - before.full, fullSeconds - before.fullSeconds) + ", "
          + describe("over changes", changes - before.changes, changesSeconds - before.changesSeconds);
    }

    private static String describe(String kind, double passes, double seconds) {
      return String.format("%.0f %s%s", passes, kind,
          passes > 0 ? String.format(" (%.0f ms each)", seconds * 1000 / passes) : "");
    }
  }

  /**
   * Creates the webhooks answered only after waiting for a batch reserved ahead (their pool ran
   * dry), by whether that batch served them, and the time they waited.
   */
  private record BatchWaits(double served, double usualPath, double seconds) {

    static final String METRIC = "subrange_store_reserved_ahead_waits_seconds";

    static BatchWaits read(ReplicatedCluster subrange) {
      if (subrange == null) {
        return new BatchWaits(0, 0, 0);
      }
      List<Sample> samples = subrange.webhookSamples();
      Map<String, String> served = Map.of("result", "served");
      Map<String, String> usualPath = Map.of("result", "usual_path");
      return new BatchWaits(sum(samples, METRIC + "_count", served), sum(samples, METRIC + "_count", usualPath),
          sum(samples, METRIC + "_sum", served) + sum(samples, METRIC + "_sum", usualPath));
    }

    String since(BatchWaits before) {
      double waits = served - before.served + usualPath - before.usualPath;
      return String.format("%.0f served from it, %.0f sent the usual path after it%s", served - before.served,
          usualPath - before.usualPath,
          waits > 0 ? String.format(" (%.0f ms each on average)", (seconds - before.seconds) * 1000 / waits) : "");
    }
  }

  /**
   * The time of day as test/scripts/machine-speed prints it (local, to the second), so that a run's
   * figures can be set beside the canary's samples of the same minutes.
   */
  private static String clockTime() {
    return LocalTime.now().format(CLOCK);
  }

  /** The JVMs among the measured processes: subrange's, or the no-op webhook. */
  private static List<ProcessHandle> jvms(Map<String, List<ProcessHandle>> processes) {
    return processes.entrySet().stream()
        .filter(e -> Set.of(CpuUse.WEBHOOKS, CpuUse.RECONCILER, CpuUse.NO_OP).contains(e.getKey()))
        .flatMap(e -> e.getValue().stream()).toList();
  }

  /** The measured processes' pids by part, as "part=pid,pid; part=pid". */
  private static String pids(Map<String, List<ProcessHandle>> processes) {
    return processes.entrySet().stream()
        .map(e -> e.getKey() + "=" + e.getValue().stream().map(h -> String.valueOf(h.pid()))
            .collect(Collectors.joining(",")))
        .collect(Collectors.joining("; "));
  }

  /** Creates the held ClusterIP Services (through subrange, or the built-in: {@code by}) and keeps them. */
  private void hold(Config config, String by) {
    try (KubernetesClient load = ServiceLoad.concurrentClient(config, options.clients())) {
      ControlPlane.ensureNamespace(load, HELD_NAMESPACE);
      ServiceLoad.Report report = ServiceLoad.createClusterIpOnly(load, HELD_NAMESPACE, "held", options.held(),
          options.clients());
      System.out.printf("   held: %,d ClusterIP Services created by %s in %.0f s (%.1f creates/s), failures %s%n",
          report.created(), by, report.wall().toMillis() / 1000.0, report.createsPerSecond(),
          report.failuresByMessage());
      ok &= LoadHarness.check(String.format("all %,d held Services created by %s (%,d)", options.held(), by,
          report.created()), report.failures().isEmpty());
    }
  }

  /**
   * Every Service here was admitted by subrange, so the reconciler has nothing to repair: a repair
   * (a value the store did not hold, a holder it did not name, a duplicate) is a race in subrange.
   */
  private void checkNothingRepaired(ReplicatedCluster cluster, int prefix, String label) {
    List<Sample> samples = cluster.reconciler().samples();
    Map<String, Double> repairs = new LinkedHashMap<>();
    for (String type : List.of("not_allocated", "holder", "duplicate")) {
      repairs.put(type, sum(samples, "subrange_reconciler_repairs_total", Map.of("type", type)));
    }
    ok &= LoadHarness.check(String.format("/%d, after %s: no repairs by the reconciler since it started %s", prefix,
        label, repairs),
        repairs.values().stream().allMatch(count -> count == 0));
  }

  /** Waits until the store names no holder whose name starts so (values reserved ahead aside). */
  private static void awaitReleased(ReplicatedCluster cluster, String holderPrefix) {
    awaitStored(cluster, Duration.ofSeconds(60), "named holders " + holderPrefix + "* after their deletes",
        stored -> stored.clusterIps().values().stream().noneMatch(h -> h.startsWith(holderPrefix))
            && stored.nodePorts().values().stream().noneMatch(h -> h.startsWith(holderPrefix)));
  }

  /**
   * Waits until the store holds nothing but the API server's own Service, as at the start: the
   * reconciler frees what deleted Services carried, shortly after.
   */
  private static void awaitDeletesFreed(ReplicatedCluster cluster) {
    awaitDeletesFreed(cluster, Duration.ofSeconds(120));
  }

  /** As {@link #awaitDeletesFreed(ReplicatedCluster)}, at most {@code limit}; whether the store got there. */
  private static boolean awaitDeletesFreed(ReplicatedCluster cluster, Duration limit) {
    return awaitStored(cluster, limit, "held values of deleted Services",
        stored -> stored.nodePorts().isEmpty() && stored.clusterIps().keySet().equals(Set.of(API_SERVER_SERVICE_IP)));
  }

  /**
   * How long the reconciler may take to free the held Services once their deletes are done: the
   * usual wait (which covers the grace of values reserved ahead, a minute), and a second more for
   * each 200 held, as it frees them from the deletes' events while they are still going on.
   */
  private Duration heldFreedLimit() {
    return Duration.ofSeconds(120 + options.held() / 200);
  }

  /** Polls the stored state until {@code done}; says so when {@code limit} passes first. Whether it got there. */
  private static boolean awaitStored(ReplicatedCluster cluster, Duration limit, String stillWhat,
      Predicate<StoredAllocations> done) {
    if (!Processes.pollUntil(limit, 250, () -> done.test(cluster.stored()))) {
      System.out.printf("   (the store still %s %d s later)%n", stillWhat, limit.toSeconds());
      return false;
    }
    return true;
  }

  // ---- report -----------------------------------------------------------------------------------

  private static String header() {
    return "   | range | configuration | creates/s | p50 ms | p99 ms | ratio to built-in | kube-apiserver | etcd"
        + " | webhook JVMs | reconciler | client | total ms CPU/create |\n"
        + "   |---|---|---|---|---|---|---|---|---|---|---|---|";
  }

  /** The table's rows for one range, the cost split, and the checks. */
  private void report(int prefix, Map<String, Measured> results) {
    Measured builtIn = results.get(BUILT_IN);
    System.out.printf("== /%d results (CPU in ms per create)%n", prefix);
    System.out.println(header());
    results.forEach((configuration, measured) -> {
      String row = row(prefix, configuration, measured, builtIn);
      rows.add(row);
      System.out.println(row);
    });
    Measured noOp = results.get(NO_OP);
    Measured one = results.get(ONE);
    Measured replicas = results.get(REPLICAS);
    if (builtIn != null && noOp != null) {
      double api = noOp.cpu(CpuUse.KUBE_APISERVER) - builtIn.cpu(CpuUse.KUBE_APISERVER);
      double etcd = noOp.cpu(CpuUse.ETCD) - builtIn.cpu(CpuUse.ETCD);
      System.out.printf("   /%d, ms CPU per create: cost of being a webhook (" + name(NO_OP) + " - built-in) %+.2f"
              + " (kube-apiserver %+.2f, etcd %+.2f, no-op JVM %.2f)%n", prefix,
          api + etcd + noOp.cpu(CpuUse.NO_OP), api, etcd, noOp.cpu(CpuUse.NO_OP));
    }
    if (noOp != null && replicas != null && one != null) {
      System.out.printf("   /%d, ms CPU per create: subrange's own (subrange - " + name(NO_OP) + "): %d replicas"
          + " + reconciler %s,"
          + " one replica + reconciler %s%n", prefix, options.replicas(), own(replicas, noOp), own(one, noOp));
    }

    if (replicas != null) {
      double summed = replicas.subrange();
      ok &= LoadHarness.check(String.format("/%d, %d replicas + reconciler: subrange's CPU per create %.2f ms <= 1.5"
              + " (webhooks %.2f + reconciler %.2f)", prefix, options.replicas(), summed,
          replicas.cpu(CpuUse.WEBHOOKS), replicas.cpu(CpuUse.RECONCILER)), summed <= 1.5);
    }
    if (one != null) {
      double single = one.cpu(CpuUse.WEBHOOKS);
      ok &= LoadHarness.check(String.format("/%d, one replica: its webhook's CPU per create %.2f ms <= 0.7", prefix,
          single), single <= 0.7);
    }

    if (replicas != null && builtIn != null) {
      double ratio = replicas.createsPerSecond() / builtIn.createsPerSecond();
      double minimum = prefix == 12 ? 0.9 : prefix == 16 ? 0.5 : Double.NaN;
      if (Double.isNaN(minimum)) {
        System.out.printf("   [----] /%d: creates/s with subrange / built-in %.2f (no target at /%d)%n", prefix,
            ratio, prefix);
      } else {
        ok &= LoadHarness.check(String.format("/%d: creates/s with subrange (%d replicas) / built-in %.2f >= %.1f",
            prefix, options.replicas(), ratio, minimum), ratio >= minimum);
      }
      double p99 = replicas.percentileMillis(99) - builtIn.percentileMillis(99);
      ok &= LoadHarness.check(String.format("/%d: p99 overhead of subrange (%d replicas) %.1f ms <= 50", prefix,
          options.replicas(), p99), p99 <= 50);
    }

    Measured held = results.get(HELD);
    if (held != null && replicas != null) {
      double slower = replicas.createsPerSecond() / held.createsPerSecond();
      double dearer = held.subrange() / replicas.subrange();
      ok &= LoadHarness.check(String.format("/%d, %,d held: creates/s empty / held %.2f <= 1.2", prefix,
          options.held(), slower), slower <= 1.2);
      ok &= LoadHarness.check(String.format("/%d, %,d held: subrange's CPU per create held / empty %.2f <= 1.2"
          + " (%.2f / %.2f ms)", prefix, options.held(), dearer, held.subrange(), replicas.subrange()), dearer <= 1.2);
    }
    Measured builtInHeld = results.get(BUILT_IN_HELD);
    if (builtInHeld != null && builtIn != null) {
      printBuiltInHeld(prefix, "against all its empty runs", builtIn, builtInHeld);
    }
  }

  /**
   * No target: what the held Services cost the API server and etcd without subrange, the built-in
   * alone held against {@code empty}.
   */
  private void printBuiltInHeld(int prefix, String against, Measured empty, Measured held) {
    System.out.printf("   [----] /%d, %,d held, the built-in alone, %s: creates/s empty / held %.2f; ms CPU per"
            + " create held / empty: kube-apiserver %.2f / %.2f, etcd %.2f / %.2f%n", prefix, options.held(), against,
        empty.createsPerSecond() / held.createsPerSecond(), held.cpu(CpuUse.KUBE_APISERVER),
        empty.cpu(CpuUse.KUBE_APISERVER), held.cpu(CpuUse.ETCD), empty.cpu(CpuUse.ETCD));
  }

  /** subrange's cost beyond the no-op's: in the API server, etcd and the webhook JVMs. */
  private static String own(Measured subrange, Measured noOp) {
    double api = subrange.cpu(CpuUse.KUBE_APISERVER) - noOp.cpu(CpuUse.KUBE_APISERVER);
    double etcd = subrange.cpu(CpuUse.ETCD) - noOp.cpu(CpuUse.ETCD);
    double jvms = subrange.subrange() - noOp.cpu(CpuUse.NO_OP);
    return String.format("%+.2f (kube-apiserver %+.2f, etcd %+.2f, JVMs %+.2f)", api + etcd + jvms, api, etcd, jvms);
  }

  private String row(int prefix, String configuration, Measured m, Measured builtIn) {
    boolean webhook = !configuration.equals(BUILT_IN) && !configuration.equals(BUILT_IN_HELD);
    boolean subrange = webhook && !configuration.equals(NO_OP);
    String ratio = builtIn == null ? "—"
        : String.format("%.2f", m.createsPerSecond() / builtIn.createsPerSecond());
    return String.format("   | /%d | %s | %.1f | %.1f | %.1f | %s | %.2f | %.2f | %s | %s | %.2f | %.2f |", prefix,
        name(configuration), m.createsPerSecond(), m.percentileMillis(50), m.percentileMillis(99),
        ratio, m.cpu(CpuUse.KUBE_APISERVER),
        m.cpu(CpuUse.ETCD), webhook ? String.format("%.2f", m.webhookJvms()) : "—",
        subrange ? String.format("%.2f", m.cpu(CpuUse.RECONCILER)) : "—", m.cpu(CpuUse.CLIENT), m.total());
  }

  private String name(String configuration) {
    return switch (configuration) {
      case BUILT_IN -> "built-in allocation alone";
      case NO_OP -> options.noOpPatches() ? "no-op webhook, patching" : "no-op webhook";
      case ONE -> "subrange, 1 replica + reconciler";
      case REPLICAS -> "subrange, " + options.replicas() + " replicas + reconciler";
      case HELD -> String.format("subrange, %d replicas + reconciler, %,d held", options.replicas(), options.held());
      case BUILT_IN_HELD -> String.format("built-in allocation alone, %,d held", options.held());
      default -> configuration;
    };
  }
}
