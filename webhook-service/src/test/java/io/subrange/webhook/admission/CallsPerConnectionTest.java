package io.subrange.webhook.admission;

import static io.subrange.webhook.admission.AdmissionReviews.review;
import static io.subrange.webhook.admission.AdmissionReviews.service;
import static io.subrange.webhook.admission.AdmissionReviews.uid;
import static io.subrange.webhook.admission.RawHttp.get;
import static io.subrange.webhook.admission.RawHttp.post;
import static io.subrange.webhook.admission.RawHttp.send;
import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.subrange.webhook.admission.RawHttp.Response;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketException;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * {@code subrange.admission.calls-per-connection}: a connection serves that many admission calls
 * and the last one's answer closes it, so the API server opens another, which the Service in
 * front of the replicas balances afresh. Requests passed on to WebFlux (probes) do not count, and
 * nothing a client already sent on the connection is dropped.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "server.ssl.enabled=false",
    "management.server.port=0",
    "subrange.service.cidrs=10.0.0.0/24",
    "subrange.admission.calls-per-connection=3"})
class CallsPerConnectionTest {

  @LocalServerPort
  int port;

  @Autowired
  MeterRegistry meters;

  @Test
  void theThirdAdmissionCallClosesTheConnectionAndProbesDoNotCount() throws Exception {
    double rotatedBefore = rotated();
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      InputStream in = socket.getInputStream();
      for (int i = 1; i <= 3; i++) {
        send(socket, get("/readyz"));
        assertThat(Response.read(in).status()).isEqualTo(200);
        String body = review("CREATE", service("ns", "kept-" + i, "ClusterIP", null), false).toString();
        send(socket, post("/mutate", body));
        Response answer = Response.read(in);

        assertThat(answer.status()).isEqualTo(200);
        assertThat(AdmissionReviews.JSON.readTree(answer.body()).path("response").path("uid").asText())
            .isEqualTo(uid(AdmissionReviews.JSON.readTree(body)));
        if (i < 3) {
          assertThat(answer.headers().get("connection")).as("call %d of 3 keeps the connection", i).isNull();
        } else {
          assertThat(answer.headers().get("connection")).isEqualTo("close");
        }
      }
      assertThat(in.read()).as("the server closed the connection after its third call").isEqualTo(-1);
    }
    assertThat(rotated()).isEqualTo(rotatedBefore + 1);
  }

  /**
   * A client that pipelines (the API server does not) may have sent more on the connection than
   * the last call: what was read before the closing answer is answered first; what came after it
   * is not worked on, as HTTP/1.1 asks of a server that sent {@code Connection: close}. Either
   * way every admission worked on is answered: nothing is allocated for an unanswered request.
   */
  @Test
  void nothingSentAfterTheClosingCallIsWorkedOnUnanswered() throws Exception {
    StringBuilder pipelined = new StringBuilder();
    for (int i = 1; i <= 5; i++) {
      pipelined.append(post("/mutate", review("CREATE", service("ns", "piped-" + i, "ClusterIP", null), false)
          .toString()));
    }
    double workedOnBefore = mutateCalls();
    int answered = 0;
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      send(socket, pipelined.toString());
      InputStream in = socket.getInputStream();
      Response answer;
      do {
        answer = Response.read(in);
        answered++;
        assertThat(answer.status()).as("call %d", answered).isEqualTo(200);
      } while (!"close".equals(answer.headers().get("connection")));
      assertThat(endOf(in)).as("nothing follows the closing answer").isTrue();
    }
    assertThat(answered).as("at least the three a connection serves").isBetween(3, 5);
    assertThat(mutateCalls() - workedOnBefore).as("admissions worked on").isEqualTo(answered);
  }

  /**
   * Whether the connection ends here: the end of the stream, or a reset, which is what closing a
   * socket with requests still unread in it sends (the answers before it were read already).
   */
  private static boolean endOf(InputStream in) throws IOException {
    try {
      return in.read() == -1;
    } catch (SocketException reset) {
      return true;
    }
  }

  private double mutateCalls() {
    return meters.find("subrange.admission.requests").tag("webhook", "mutate").counters().stream()
        .mapToDouble(c -> c.count()).sum();
  }

  private double rotated() {
    return meters.get("subrange.admission.connections.rotated").counter().count();
  }
}
