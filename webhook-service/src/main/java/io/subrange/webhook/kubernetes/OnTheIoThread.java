package io.subrange.webhook.kubernetes;

import io.fabric8.kubernetes.client.KubernetesClientBuilder.ExecutorSupplier;
import java.util.concurrent.Executor;

/**
 * The task executor of a client whose informers' handlers never block: each task runs on the
 * thread that hands it over, for a watch event the Vert.x I/O thread that read it.
 *
 * <p>fabric8 takes a watch's messages one at a time: the I/O thread hands a message to the
 * client's executor and reads the next only once that task has decoded it and run its handlers.
 * With {@link EventThread} that is two wake-ups per event, the event thread's for the message
 * and the I/O thread's for the next (1.2 and 1.2 per Service create in the reconciler, in the
 * load harness; docs/performance.md, "Twenty-sixth round"), each tens of microseconds on a busy
 * machine, the decoding done on cold caches. Here the I/O thread that has just decrypted an event
 * decodes it and runs the handlers itself, and reads the next without waking anyone.
 *
 * <p>The price is the rule it asks of every handler of such a client: never block, on the API or
 * on anything else. The client's HTTP answers come on these same I/O threads, so a handler that
 * waits for one waits forever; a slow handler holds up every watch of the client. Use it only for
 * informers whose handlers merely record and hand work on (the reconciler's Service events:
 * {@code ClusterObjects}).
 */
final class OnTheIoThread implements ExecutorSupplier {

  @Override
  public Executor get() {
    return Runnable::run;
  }
}
