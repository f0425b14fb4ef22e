package io.subrange.testing;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A CPU profile of kube-apiserver over the first seconds of a measured run, from its own
 * {@code /debug/pprof/profile} (Go's sampling profiler, served unless {@code --profiling=false};
 * the harness's client may read it). The API server's CPU per create is the largest part of every
 * configuration's, and its binary here is stripped, so perf cannot name its frames; pprof can.
 * {@code test/scripts/apiserver-profile} sorts a profile's samples by what the API server was
 * doing (webhook calls, creates, updates, watches, ...).
 *
 * <p>The profile covers a fixed time from the run's first create. The run's deletes wait until it
 * has ended, so they stay out; a time longer than the creates adds idle time, a shorter one leaves
 * the last creates out. So only its shares compare with the run's CPU per create, not its total.
 */
final class ApiServerProfile {

  private final CompletableFuture<HttpResponse<byte[]>> response;
  private final int seconds;
  private final Path file;

  private ApiServerProfile(CompletableFuture<HttpResponse<byte[]>> response, int seconds, Path file) {
    this.response = response;
    this.seconds = seconds;
    this.file = file;
  }

  /** Asks the API server for a profile of the next {@code seconds}, to be written to {@code file}. */
  static ApiServerProfile start(KubernetesClient client, int seconds, Path file) {
    String url = client.getConfiguration().getMasterUrl().replaceAll("/+$", "")
        + "/debug/pprof/profile?seconds=" + seconds;
    var request = client.getHttpClient().newHttpRequestBuilder().uri(url)
        .timeout(seconds + 60L, TimeUnit.SECONDS).build();
    return new ApiServerProfile(client.getHttpClient().sendAsync(request, byte[].class), seconds, file);
  }

  /** Waits for the profile and writes it; returns a line saying where, or why there is none. */
  String finish() {
    try {
      HttpResponse<byte[]> answer = response.get(seconds + 90L, TimeUnit.SECONDS);
      if (answer.code() != 200) {
        return "API server profile: none (HTTP " + answer.code() + ")";
      }
      Files.createDirectories(file.getParent());
      Files.write(file, answer.body());
      return String.format("API server profile: %s (%d s from the first create)", file, seconds);
    } catch (IOException e) {
      // A diagnostic: losing it must not end the run.
      return "API server profile: none (could not write " + file + ": " + e.getMessage() + ")";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "API server profile: none (interrupted)";
    } catch (ExecutionException | TimeoutException e) {
      return "API server profile: none (" + e + ")";
    }
  }
}
