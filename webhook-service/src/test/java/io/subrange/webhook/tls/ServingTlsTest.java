package io.subrange.webhook.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.subrange.webhook.SubrangeApplication;
import java.io.InputStream;
import java.math.BigInteger;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
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
      Instant deadline = Instant.now().plus(Duration.ofSeconds(30));
      BigInteger served = first;
      while (!served.equals(rotated) && Instant.now().isBefore(deadline)) {
        Thread.sleep(200);
        served = servedSerial(trustingOurCa, port);
      }
      assertThat(served).as("served certificate after rotation").isEqualTo(rotated);
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
    Process process = new ProcessBuilder("bash", MAKE_CERTS.toString(), certs.toString()).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes());
    assertThat(process.waitFor()).as(output).isZero();
  }

  private BigInteger fileSerial() throws Exception {
    try (InputStream in = Files.newInputStream(certs.resolve("tls.crt"))) {
      return ((X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in)).getSerialNumber();
    }
  }

  private static BigInteger servedSerial(SSLContext context, int port) throws Exception {
    try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port)) {
      socket.startHandshake();
      return ((X509Certificate) socket.getSession().getPeerCertificates()[0]).getSerialNumber();
    }
  }

  private static SSLContext trusting(Path caFile) throws Exception {
    KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
    trust.load(null, null);
    try (InputStream in = Files.newInputStream(caFile)) {
      trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    factory.init(trust);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, factory.getTrustManagers(), null);
    return context;
  }
}
