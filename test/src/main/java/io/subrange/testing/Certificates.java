package io.subrange.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.Base64;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/** A CA and serving pair made by the repository's own certs/make-certs.sh, as a user makes them. */
public final class Certificates {

  private final Path dir;

  private Certificates(Path dir) {
    this.dir = dir;
  }

  public static Certificates make(RepoLayout repo, Path dir) {
    Processes.run(List.of("bash", repo.makeCertsScript().toString(), dir.toString()), repo.root(), 60);
    return new Certificates(dir);
  }

  /** The folder to give subrange as subrange.tls.cert-dir. */
  public Path dir() {
    return dir;
  }

  public Path caCertificate() {
    return dir.resolve("ca.crt");
  }

  /** The CA as a webhook configuration's caBundle wants it: base64 of the PEM. */
  public String caBundle() {
    try {
      return Base64.getEncoder().encodeToString(Files.readAllBytes(caCertificate()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A TLS context that trusts only this CA. */
  public SSLContext trustingContext() {
    try (InputStream in = Files.newInputStream(caCertificate())) {
      KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
      trust.load(null, null);
      trust.setCertificateEntry("subrange-ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
      TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      factory.init(trust);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, factory.getTrustManagers(), null);
      return context;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }
}
