package io.subrange.e2e;

import io.subrange.testing.ControlPlane;
import io.subrange.testing.RepoLayout;
import io.subrange.testing.ReplicatedCluster;
import java.nio.file.Path;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A control plane of its own with subrange replicated on it ({@link ReplicatedCluster}): three
 * webhook replicas on the ConfigMap store, one reconciler, quick grace and intervals (5 s grace,
 * 1 s passes, 6 s Lease) so reclaims and failover show within a test, and connections closed
 * every {@value #CALLS_PER_CONNECTION} admission calls so the API server's calls spread over the
 * replicas within a test's few hundred creates. Shared by the classes that use it; stopped when
 * the run ends.
 */
public final class ReplicatedE2e implements ParameterResolver {

  static final String APISERVER_SERVICE_CIDRS = "10.96.0.0/16";
  /** subrange.admission.calls-per-connection of the replicas (1000 by default). */
  static final int CALLS_PER_CONNECTION = 20;

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == ReplicatedCluster.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL)
        .getOrComputeIfAbsent(Running.class, key -> Running.start(), Running.class).cluster;
  }

  private record Running(ControlPlane plane, ReplicatedCluster cluster)
      implements ExtensionContext.Store.CloseableResource {

    static Running start() {
      RepoLayout repo = RepoLayout.locate();
      Path workDir = repo.root().resolve("test/target/e2e-replicated");
      ControlPlane plane = ControlPlane.start(repo, APISERVER_SERVICE_CIDRS, ControlPlane.FEATURE_GATES, workDir);
      try {
        return new Running(plane, ReplicatedCluster.start(repo, plane, workDir,
            ReplicatedCluster.Settings.defaults().quick().withCallsPerConnection(CALLS_PER_CONNECTION)));
      } catch (RuntimeException e) {
        plane.close();
        throw e;
      }
    }

    @Override
    public void close() {
      cluster.close();
      plane.close();
    }
  }
}
