package io.subrange.testing;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Where the harness finds the repository's scripts, manifests and the packaged webhook jar. */
public final class RepoLayout {

  private final Path root;

  private RepoLayout(Path root) {
    this.root = root;
  }

  /** From the {@code subrange.repo.root} system property, or the nearest folder holding certs/. */
  public static RepoLayout locate() {
    String configured = System.getProperty("subrange.repo.root");
    if (configured != null && !configured.isBlank()) {
      return new RepoLayout(Path.of(configured).toAbsolutePath().normalize());
    }
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.isRegularFile(dir.resolve("certs/make-certs.sh")) && Files.isDirectory(dir.resolve("manifests"))) {
        return new RepoLayout(dir);
      }
    }
    throw new IllegalStateException("cannot find the subrange repository from " + Path.of("").toAbsolutePath()
        + "; set -Dsubrange.repo.root");
  }

  public Path root() {
    return root;
  }

  public Path webhookJar() {
    Path jar = root.resolve("webhook-service/target/subrange-webhook.jar");
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(jar + " is missing: build it first with `mvn -DskipTests package`");
    }
    return jar;
  }

  public Path makeCertsScript() {
    return root.resolve("certs/make-certs.sh");
  }

  public Path provideControlPlaneScript() {
    return root.resolve("test/scripts/provide-control-plane.sh");
  }

  public Path manifests() {
    return root.resolve("manifests");
  }

  /** The object in {@code manifests/<file>} (one document), as {@code type}. */
  public <T> T manifest(String file, Class<T> type) {
    try (InputStream in = Files.newInputStream(manifests().resolve(file))) {
      return new KubernetesSerialization().unmarshal(in, type);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The value the first container of the Deployment in {@code manifests/<file>} gives the
   * environment variable {@code name}; a clear error when it sets none.
   */
  public String deployedEnv(String file, String name) {
    return deployedContainer(file).getEnv().stream().filter(env -> name.equals(env.getName()))
        .map(EnvVar::getValue).filter(value -> value != null && !value.isBlank()).findFirst()
        .orElseThrow(() -> new IllegalStateException("manifests/" + file + " sets no " + name));
  }

  /** The (first) container of the pod the Deployment in {@code manifests/<file>} runs. */
  public Container deployedContainer(String file) {
    return manifest(file, Deployment.class).getSpec().getTemplate().getSpec().getContainers().get(0);
  }
}
