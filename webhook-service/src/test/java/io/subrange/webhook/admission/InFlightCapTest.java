package io.subrange.webhook.admission;

import static io.subrange.webhook.admission.AdmissionReviews.review;
import static io.subrange.webhook.admission.AdmissionReviews.service;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;

/**
 * A replica works on at most {@code subrange.admission.max-in-flight} admissions at once and
 * turns the next away (429) before reading it; a body that trickles in is cut off (408). In a
 * context of its own: other tests' large bodies must not delay the slow ones here.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "server.ssl.enabled=false",
    "management.server.port=0",
    "subrange.service.cidrs=10.0.0.0/24",
    "subrange.admission.max-in-flight=2",
    "subrange.admission.body-read-timeout=5s"})
@DirtiesContext
class InFlightCapTest {

  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @LocalServerPort
  int port;

  @Autowired
  MeterRegistry meters;

  @Test
  void requestsPastTheInFlightCapAre429AndSlowBodiesAreCutOff() throws Exception {
    List<Socket> slow = new ArrayList<>();
    try {
      for (int i = 0; i < 2; i++) {
        Socket socket = new Socket("127.0.0.1", port);
        OutputStream out = socket.getOutputStream();
        out.write(("POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            + "Content-Length: 1000\r\n\r\n{\"apiVersion\":").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        slow.add(socket);
      }
      // Once both are being read (the server has their headers), a third request is turned away.
      // Waiting for that matters: a third sent earlier can overtake a slow one on another event
      // loop, take its place, and leave the slow one to be turned away instead.
      awaitInFlight(2);
      String request = review("CREATE", service("ns", "third", "ClusterIP", null), false).toString();
      HttpResponse<String> third = raw(request);
      assertThat(third.statusCode()).isEqualTo(429);
      assertThat(third.headers().firstValue("Retry-After")).contains("1");
      assertThat(third.body()).contains("subrange.admission.max-in-flight");

      // The slow senders are answered 408 after the body-read timeout, and free their places.
      for (Socket socket : slow) {
        socket.setSoTimeout(10_000);
        InputStream in = socket.getInputStream();
        String status = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
        assertThat(status).isEqualTo("HTTP/1.1 408");
      }
    } finally {
      for (Socket socket : slow) {
        socket.close();
      }
    }
    // Their places come back as their exchanges finish (just after the 408 is written).
    awaitInFlight(0);
    String fourth = review("CREATE", service("ns", "fourth", "ClusterIP", null), false).toString();
    HttpResponse<String> after = raw(fourth);
    assertThat(after.statusCode()).as(after.body()).isEqualTo(200);
    assertThat(AdmissionReviews.JSON.readTree(after.body()).path("response").path("allowed").asBoolean()).isTrue();
  }

  private void awaitInFlight(int expected) throws InterruptedException {
    Gauge inFlight = meters.get("subrange.admission.in.flight").gauge();
    assertThat(meters.get("subrange.admission.max.in.flight").gauge().value()).isEqualTo(2.0);
    for (int attempt = 0; inFlight.value() != expected && attempt < 200; attempt++) {
      Thread.sleep(25);
    }
    assertThat(inFlight.value()).as("admissions in flight").isEqualTo(expected);
  }

  private HttpResponse<String> raw(String body) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/mutate"))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
