package io.subrange.webhook.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.subrange.webhook.SubrangeApplication;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.mock.env.MockEnvironment;

/** TLS from the PEM files certs/make-certs.sh writes, and their reload when the files change. */
class ServingTlsTest {

  private static final Path MAKE_CERTS = Path.of("..", "certs", "make-certs.sh").toAbsolutePath().normalize();

  @TempDir
  Path certs;

  @Test
  void servesTheCertificateFromTheFolderAndPicksUpARotatedOne() throws Exception {
    makeCerts();
    try (ConfigurableApplicationContext app = new SpringApplicationBuilder(SubrangeApplication.class)
        .web(WebApplicationType.REACTIVE)
        .run("--server.port=0", "--management.server.port=0", "--subrange.tls.cert-dir=" + certs,
            "--spring.ssl.bundle.watch.file.quiet-period=200ms")) {
      int port = ((WebServerApplicationContext) app).getWebServer().getPort();
      SSLContext trustingOurCa = trusting(certs.resolve("ca.crt"));
      BigInteger first = servedSerial(trustingOurCa, port);
      assertThat(first).isEqualTo(fileSerial());

      HttpResponse<String> live = HttpClient.newBuilder().sslContext(trustingOurCa).build().send(
          HttpRequest.newBuilder(URI.create("https://localhost:" + port + "/livez")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(live.statusCode()).isEqualTo(200);

      makeCerts();  // same CA, new serving pair, as a rotation does
      BigInteger rotated = fileSerial();
      assertThat(rotated).isNotEqualTo(first);
      assertThat(awaitServed(trustingOurCa, port, rotated)).as("served certificate after rotation").isEqualTo(rotated);
    }
  }

  /**
   * A kubernetes.io/tls Secret volume as the kubelet writes it: tls.crt and tls.key are symlinks
   * into {@code ..data}, itself a symlink to a timestamped folder, and a rotation writes a new
   * folder and swaps {@code ..data} in one rename. The files' own paths never change.
   */
  @Test
  void picksUpARotationDoneAsTheKubeletDoesItBySwappingTheDataSymlink() throws Exception {
    Path generated = certs.resolve("generated");
    Path mount = Files.createDirectories(certs.resolve("mount"));
    makeCerts(generated);
    publish(generated, mount, "..2026_11_24_12_00_00.1");
    Files.createSymbolicLink(mount.resolve("tls.crt"), Path.of("..data/tls.crt"));
    Files.createSymbolicLink(mount.resolve("tls.key"), Path.of("..data/tls.key"));
    try (ConfigurableApplicationContext app = new SpringApplicationBuilder(SubrangeApplication.class)
        .web(WebApplicationType.REACTIVE)
        .run("--server.port=0", "--management.server.port=0", "--subrange.tls.cert-dir=" + mount,
            "--spring.ssl.bundle.watch.file.quiet-period=200ms")) {
      int port = ((WebServerApplicationContext) app).getWebServer().getPort();
      SSLContext trustingOurCa = trusting(generated.resolve("ca.crt"));
      BigInteger first = servedSerial(trustingOurCa, port);
      assertThat(first).isEqualTo(serialOf(mount.resolve("tls.crt")));

      makeCerts(generated);  // same CA, a new serving pair
      publish(generated, mount, "..2026_11_24_13_00_00.2");
      BigInteger rotated = serialOf(mount.resolve("tls.crt"));
      assertThat(rotated).isNotEqualTo(first);
      assertThat(awaitServed(trustingOurCa, port, rotated)).as("served certificate after the ..data swap")
          .isEqualTo(rotated);
    }
  }

  /** With subrange.tls.client-ca-file, only a caller with a certificate from that CA is served. */
  @Test
  void withAClientCaOnlyCallersWithItsCertificateAreServed() throws Exception {
    makeCerts(certs);
    Path client = makeClientCertificate();
    try (ConfigurableApplicationContext app = new SpringApplicationBuilder(SubrangeApplication.class)
        .web(WebApplicationType.REACTIVE)
        .run("--server.port=0", "--management.server.port=0", "--subrange.tls.cert-dir=" + certs,
            "--subrange.tls.client-ca-file=" + certs.resolve("ca.crt"))) {
      int port = ((WebServerApplicationContext) app).getWebServer().getPort();
      SSLContext anonymous = trusting(certs.resolve("ca.crt"));
      assertThatThrownBy(() -> get(anonymous, port)).as("no client certificate").isInstanceOf(IOException.class);

      KeyStore keys = KeyStore.getInstance("PKCS12");
      try (InputStream in = Files.newInputStream(client)) {
        keys.load(in, "changeit".toCharArray());
      }
      KeyManagerFactory keyManagers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      keyManagers.init(keys, "changeit".toCharArray());
      SSLContext withCertificate = SSLContext.getInstance("TLS");
      TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      trust.init(trustStore(certs.resolve("ca.crt")));
      withCertificate.init(keyManagers.getKeyManagers(), trust.getTrustManagers(), null);
      assertThat(get(withCertificate, port)).isEqualTo(200);
    }
  }

  private static int get(SSLContext context, int port) throws IOException, InterruptedException {
    return HttpClient.newBuilder().sslContext(context).build().send(
        HttpRequest.newBuilder(URI.create("https://localhost:" + port + "/livez")).build(),
        HttpResponse.BodyHandlers.ofString()).statusCode();
  }

  /** A client certificate from the test CA (clientAuth), as a PKCS#12 file with password "changeit". */
  private Path makeClientCertificate() throws Exception {
    String script = String.join(" && ",
        "cd '" + certs + "'",
        "openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj /CN=kube-apiserver 2>/dev/null",
        "printf 'extendedKeyUsage=clientAuth\\n' > client.ext",
        "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 -extfile client.ext"
            + " -out client.crt 2>/dev/null",
        "openssl pkcs12 -export -in client.crt -inkey client.key -out client.p12 -passout pass:changeit");
    Process process = new ProcessBuilder("bash", "-c", script).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes());
    assertThat(process.waitFor()).as(output).isZero();
    return certs.resolve("client.p12");
  }

  /** Writes {@code from}'s pair into a new folder of {@code mount} and points ..data at it in one rename. */
  private static void publish(Path from, Path mount, String version) throws IOException {
    Path folder = Files.createDirectories(mount.resolve(version));
    Files.copy(from.resolve("tls.crt"), folder.resolve("tls.crt"));
    Files.copy(from.resolve("tls.key"), folder.resolve("tls.key"));
    Path next = mount.resolve("..data_tmp");
    Files.createSymbolicLink(next, Path.of(version));
    Path previous = Files.isSymbolicLink(mount.resolve("..data")) ? mount.resolve(Files.readSymbolicLink(
        mount.resolve("..data"))) : null;
    Files.move(next, mount.resolve("..data"), StandardCopyOption.ATOMIC_MOVE);
    if (previous != null) {
      try (var old = Files.list(previous)) {
        for (Path file : old.toList()) {
          Files.delete(file);
        }
      }
      Files.delete(previous);
    }
  }

  @Test
  void refusesToStartWithoutCertificateFilesAndSaysWhatToDo() {
    MockEnvironment environment = new MockEnvironment().withProperty("subrange.tls.cert-dir", certs.toString());
    assertThatThrownBy(() -> new ServingTlsEnvironment().postProcessEnvironment(environment, null))
        .isInstanceOfSatisfying(ServingTlsMissingException.class, e -> {
          var analysis = new ServingTlsFailureAnalyzer().analyze(e);
          assertThat(analysis.getDescription()).contains(certs.resolve("tls.crt") + " is missing or unreadable");
          assertThat(analysis.getAction()).contains("SERVER_SSL_ENABLED=false").contains("certs/make-certs.sh");
        });
  }

  @Test
  void needsNoFilesWhenTlsIsOff() {
    MockEnvironment environment = new MockEnvironment().withProperty("server.ssl.enabled", "false")
        .withProperty("subrange.tls.cert-dir", certs.toString());
    new ServingTlsEnvironment().postProcessEnvironment(environment, null);
    assertThat(environment.containsProperty("server.ssl.bundle")).isFalse();
  }

  @Test
  void rejectsFilesThatAreNotPem() throws Exception {
    Files.writeString(certs.resolve("tls.crt"), "not a certificate");
    Files.writeString(certs.resolve("tls.key"), "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----\n");
    MockEnvironment environment = new MockEnvironment().withProperty("subrange.tls.cert-dir", certs.toString());
    assertThatThrownBy(() -> new ServingTlsEnvironment().postProcessEnvironment(environment, null))
        .hasMessageContaining("tls.crt is not a PEM certificate")
        .hasMessageNotContaining("tls.key");
  }

  private void makeCerts() throws Exception {
    makeCerts(certs);
  }

  private static void makeCerts(Path into) throws Exception {
    Process process = new ProcessBuilder("bash", MAKE_CERTS.toString(), into.toString()).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes());
    assertThat(process.waitFor()).as(output).isZero();
  }

  private BigInteger fileSerial() throws Exception {
    return serialOf(certs.resolve("tls.crt"));
  }

  private static BigInteger serialOf(Path certificate) throws Exception {
    try (InputStream in = Files.newInputStream(certificate)) {
      return ((X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in)).getSerialNumber();
    }
  }

  /** The serial served once it is {@code expected}, or the last one served after 30 s. */
  private static BigInteger awaitServed(SSLContext context, int port, BigInteger expected) throws Exception {
    Instant deadline = Instant.now().plus(Duration.ofSeconds(30));
    BigInteger served = servedSerial(context, port);
    while (!served.equals(expected) && Instant.now().isBefore(deadline)) {
      Thread.sleep(200);
      served = servedSerial(context, port);
    }
    return served;
  }

  private static BigInteger servedSerial(SSLContext context, int port) throws Exception {
    try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port)) {
      socket.startHandshake();
      return ((X509Certificate) socket.getSession().getPeerCertificates()[0]).getSerialNumber();
    }
  }

  private static KeyStore trustStore(Path caFile) throws Exception {
    KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
    trust.load(null, null);
    try (InputStream in = Files.newInputStream(caFile)) {
      trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    return trust;
  }

  private static SSLContext trusting(Path caFile) throws Exception {
    TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    factory.init(trustStore(caFile));
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, factory.getTrustManagers(), null);
    return context;
  }
}
