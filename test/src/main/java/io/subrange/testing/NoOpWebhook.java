package io.subrange.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.AbstractVerticle;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.file.FileSystemOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.net.JdkSSLEngineOptions;
import io.vertx.core.net.OpenSSLEngineOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.SSLEngineOptions;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLSession;

/**
 * The cheapest webhook there is, the cost scenario's baseline: it allows every AdmissionReview
 * it is sent, after reading it as any webhook must to learn the request's uid. What the API
 * server, etcd and this JVM spend with it registered, beyond the built-in allocation alone, is
 * the cost of being a webhook at all; what subrange spends beyond that is its own.
 *
 * <p>Netty underneath (through Vert.x, which fabric8's HTTP client brings), as under subrange's
 * Reactor Netty: HTTPS on loopback with the serving pair subrange would get, HTTP/1.1 with
 * keep-alive, two event loops. Run as its own JVM by {@link NoOpWebhookProcess}:
 * {@code NoOpWebhook PORT CERT_DIR [patch]}. {@code GET /count} answers how many Service CREATEs it
 * has allowed (mutating and validating calls both), to tell when the API server calls it;
 * {@code GET /livez} and {@code /readyz} answer 200, for the kubelet's probes ({@link KubeletProbes}).
 *
 * <p>With {@code patch}, its mutating answers to Service creates carry a one-operation JSON Patch
 * (an annotation, {@value #PATCHED_ANNOTATION}). kube-apiserver's work on a patched answer
 * (encoding the object, applying the patch, decoding it again, comparing, a second admission pass)
 * is about the whole object, not the operations, and every webhook that assigns values pays it:
 * this no-op is then the baseline for an assigning webhook (docs/performance.md, "Twentieth round").
 */
public final class NoOpWebhook extends AbstractVerticle {

  static final int EVENT_LOOPS = 2;
  /** Each line this server prints starts so; {@link NoOpWebhookProcess} shows them. */
  static final String PREFIX = "no-op webhook: ";
  private static final String API_VERSION = "admission.k8s.io/v1";
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final AtomicLong SERVICE_CREATES = new AtomicLong();
  private static final AtomicBoolean FIRST_REVIEW = new AtomicBoolean(true);
  static final String PATCHED_ANNOTATION = "subrange.io/no-op";
  /** Where the annotation goes when the object has annotations: its "/" written "~1" (RFC 6901). */
  private static final String PATCHED_ANNOTATION_PATH = "/metadata/annotations/subrange.io~1no-op";

  private final HttpServerOptions options;
  private final boolean patches;

  private NoOpWebhook(HttpServerOptions options, boolean patches) {
    this.options = options;
    this.patches = patches;
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 2 || args.length > 3 || args.length == 3 && !args[2].equals("patch")) {
      System.err.println("usage: NoOpWebhook PORT CERT_DIR (holding tls.crt and tls.key) [patch]");
      System.exit(2);
    }
    boolean patches = args.length == 3;
    int port = Integer.parseInt(args[0]);
    Path certDir = Path.of(args[1]);
    PemKeyCertOptions pair = new PemKeyCertOptions();
    pair.setCertPath(certDir.resolve("tls.crt").toString());
    pair.setKeyPath(certDir.resolve("tls.key").toString());
    // Netty's own default, which subrange's server gets: OpenSSL when netty-tcnative is on the
    // classpath, the JDK's TLS otherwise (Vert.x alone would always take the JDK's).
    boolean openSsl = OpenSSLEngineOptions.isAvailable();
    SSLEngineOptions engine = openSsl ? new OpenSSLEngineOptions() : new JdkSSLEngineOptions();
    HttpServerOptions options = new HttpServerOptions();
    options.setHost("127.0.0.1");
    options.setPort(port);
    options.setSsl(true);
    options.setKeyCertOptions(pair);
    options.setSslEngineOptions(engine);
    // HTTP/1.1 keep-alive is the server's default: the API server reuses its connections.

    VertxOptions vertxOptions = new VertxOptions();
    vertxOptions.setEventLoopPoolSize(EVENT_LOOPS);
    // epoll when netty's native transport is on the classpath, as Reactor Netty uses it.
    vertxOptions.setPreferNativeTransport(true);
    FileSystemOptions files = new FileSystemOptions();
    files.setClassPathResolvingEnabled(false);
    files.setFileCachingEnabled(false);
    vertxOptions.setFileSystemOptions(files);
    Vertx vertx = Vertx.vertx(vertxOptions);

    // One server per event loop on the same port: Vert.x shares the socket and hands connections
    // to the instances in turn.
    DeploymentOptions deployment = new DeploymentOptions();
    deployment.setInstances(EVENT_LOOPS);
    vertx.deployVerticle(() -> new NoOpWebhook(options, patches), deployment)
        .toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    System.out.printf("%shttps://127.0.0.1:%d, %s, %d event loops (%s transport), TLS engine %s%n", PREFIX, port,
        patches ? "patching Service creates" : "answers without a patch",
        EVENT_LOOPS, vertx.isNativeTransportEnabled() ? "native" : "NIO",
        openSsl ? "OpenSSL (netty-tcnative)" : "JDK (Java " + Runtime.version() + ", " + System.getProperty(
            "java.vendor") + ")");
    System.out.flush();
  }

  @Override
  public void start(Promise<Void> started) {
    vertx.createHttpServer(options).requestHandler(this::handle).listen()
        .onSuccess(server -> started.complete())
        .onFailure(started::fail);
  }

  private void handle(HttpServerRequest request) {
    if (HttpMethod.GET.equals(request.method()) && "/count".equals(request.path())) {
      request.response().putHeader("content-type", "text/plain").end(Long.toString(SERVICE_CREATES.get()));
      return;
    }
    if (HttpMethod.GET.equals(request.method()) && ("/livez".equals(request.path())
        || "/readyz".equals(request.path()))) {
      request.response().putHeader("content-type", "text/plain").end("ok");
      return;
    }
    if (!HttpMethod.POST.equals(request.method())) {
      request.response().setStatusCode(405).end();
      return;
    }
    request.body()
        .onSuccess(body -> review(request, body))
        .onFailure(e -> request.response().setStatusCode(400).end());
  }

  /**
   * Allows the AdmissionReview in {@code body}, any kind, any operation (a mutating Service create
   * patched when {@link #patches}); 400 for anything else.
   */
  private void review(HttpServerRequest request, Buffer body) {
    try {
      JsonNode review = MAPPER.readTree(body.getBytes());
      JsonNode admission = review == null ? null : review.path("request");
      if (admission == null || !API_VERSION.equals(review.path("apiVersion").asText())
          || !"AdmissionReview".equals(review.path("kind").asText()) || !admission.path("uid").isTextual()) {
        request.response().setStatusCode(400).end("not an " + API_VERSION + " AdmissionReview request");
        return;
      }
      boolean serviceCreate = "Service".equals(admission.path("kind").path("kind").asText())
          && "CREATE".equals(admission.path("operation").asText());
      if (serviceCreate) {
        SERVICE_CREATES.incrementAndGet();
      }
      if (FIRST_REVIEW.compareAndSet(true, false)) {
        SSLSession tls = request.connection().sslSession();
        System.out.printf("%sfirst review over %s%n", PREFIX,
            tls == null ? "plain HTTP" : tls.getProtocol() + " " + tls.getCipherSuite());
        System.out.flush();
      }
      ObjectNode answer = MAPPER.createObjectNode();
      answer.put("apiVersion", API_VERSION);
      answer.put("kind", "AdmissionReview");
      ObjectNode response = answer.putObject("response");
      response.set("uid", admission.get("uid"));
      response.put("allowed", true);
      if (patches && serviceCreate && request.path().startsWith("/mutate")) {
        response.put("patchType", "JSONPatch");
        // Bytes: Jackson writes them as base64, which the API server expects.
        response.put("patch", MAPPER.writeValueAsBytes(annotate(admission.path("object"))));
      }
      request.response().putHeader("content-type", "application/json")
          .end(Buffer.buffer(MAPPER.writeValueAsBytes(answer)));
    } catch (IOException e) {
      request.response().setStatusCode(400).end("unreadable: " + e.getMessage());
    }
  }

  /** A JSON Patch adding {@value #PATCHED_ANNOTATION} to {@code object}'s annotations. */
  static ArrayNode annotate(JsonNode object) {
    ArrayNode patch = MAPPER.createArrayNode();
    ObjectNode add = patch.addObject().put("op", "add");
    if (object.path("metadata").path("annotations").isObject()) {
      add.put("path", PATCHED_ANNOTATION_PATH);
      add.put("value", "patched");
    } else {
      add.put("path", "/metadata/annotations");
      add.putObject("value").put(PATCHED_ANNOTATION, "patched");
    }
    return patch;
  }
}
