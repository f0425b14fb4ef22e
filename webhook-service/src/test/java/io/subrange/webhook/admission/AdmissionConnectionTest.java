package io.subrange.webhook.admission;

import static io.subrange.webhook.admission.AdmissionReviews.review;
import static io.subrange.webhook.admission.AdmissionReviews.service;
import static io.subrange.webhook.admission.AdmissionReviews.uid;
import static io.subrange.webhook.admission.RawHttp.get;
import static io.subrange.webhook.admission.RawHttp.post;
import static io.subrange.webhook.admission.RawHttp.send;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.subrange.webhook.admission.RawHttp.Response;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * HTTP/1.1 as a client other than the API server may speak it to the admission handler, over a
 * raw connection: answers come back in the order requests were sent, admission calls and
 * requests passed on to WebFlux mixed, however they arrive; {@code Expect: 100-continue} gets
 * its interim answer; a request that does not keep its connection alive has it closed.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "server.ssl.enabled=false",
    "management.server.port=0",
    "subrange.service.cidrs=10.0.0.0/24"})
class AdmissionConnectionTest {

  @LocalServerPort
  int port;

  @Test
  void pipelinedRequestsAreAnsweredInTheOrderTheyCame() throws Exception {
    String first = review("CREATE", service("ns", "first", "ClusterIP", null), false).toString();
    String second = review("CREATE", service("ns", "second", "ClusterIP", null), false).toString();
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      // All five in one write: probes passed on to WebFlux around two admission calls.
      send(socket, get("/readyz") + post("/mutate", first) + get("/livez") + post("/mutate", second)
          + get("/readyz"));
      InputStream in = socket.getInputStream();

      Response readyz = Response.read(in);
      Response firstAnswer = Response.read(in);
      Response livez = Response.read(in);
      Response secondAnswer = Response.read(in);
      Response readyzAgain = Response.read(in);

      assertThat(readyz.status()).isEqualTo(200);
      assertThat(readyz.body()).contains("UP");
      assertThat(firstAnswer.status()).isEqualTo(200);
      assertThat(answerUid(firstAnswer)).isEqualTo(uid(AdmissionReviews.JSON.readTree(first)));
      assertThat(livez.status()).isEqualTo(200);
      assertThat(secondAnswer.status()).isEqualTo(200);
      assertThat(answerUid(secondAnswer)).isEqualTo(uid(AdmissionReviews.JSON.readTree(second)));
      assertThat(readyzAgain.status()).isEqualTo(200);
    }
  }

  @Test
  void aRequestThatExpectsContinueGetsItThenItsAnswer() throws Exception {
    String body = review("CREATE", service("ns", "expecting", "ClusterIP", null), false).toString();
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      send(socket, "POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
          + "Expect: 100-continue\r\nContent-Length: " + bytes.length + "\r\n\r\n");
      InputStream in = socket.getInputStream();
      Response interim = Response.read(in);
      assertThat(interim.status()).isEqualTo(100);
      socket.getOutputStream().write(bytes);
      Response answer = Response.read(in);
      assertThat(answer.status()).isEqualTo(200);
      assertThat(answerUid(answer)).isEqualTo(uid(AdmissionReviews.JSON.readTree(body)));
    }
  }

  @Test
  void aRequestThatDoesNotKeepItsConnectionAliveHasItClosed() throws Exception {
    String body = review("CREATE", service("ns", "closing", "ClusterIP", null), false).toString();
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      send(socket, post("/mutate", body).replace("Host: localhost\r\n", "Host: localhost\r\nConnection: close\r\n"));
      InputStream in = socket.getInputStream();
      Response answer = Response.read(in);
      assertThat(answer.status()).isEqualTo(200);
      assertThat(answer.headers().get("connection")).isEqualTo("close");
      assertThat(in.read()).as("the server closed the connection").isEqualTo(-1);
    }
  }

  private static String answerUid(Response answer) throws IOException {
    JsonNode review = AdmissionReviews.JSON.readTree(answer.body());
    return review.path("response").path("uid").asText();
  }
}
