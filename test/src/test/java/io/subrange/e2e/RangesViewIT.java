package io.subrange.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** GET /ranges on the running subrange's management port, JSON and text. */
@ExtendWith(E2eCluster.class)
class RangesViewIT {

  @Test
  void showsEveryRangeAsJsonAndAsText(E2eCluster cluster) throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    URI uri = URI.create("http://127.0.0.1:" + cluster.subrange().managementPort() + "/ranges");
    HttpResponse<String> json = http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(json.statusCode()).isEqualTo(200);
    assertThat(json.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).contains("json"));
    assertThat(json.body()).contains("\"cidr\":\"" + E2eCluster.SERVICE_CIDR + "\"")
        .contains("\"cidr\":\"" + E2eCluster.SERVICE_CIDR_V6 + "\"")
        .contains("\"ports\":\"30000-32767\"")
        .contains("\"name\":\"default-cluster-cidr\"");
    HttpResponse<String> text = http.send(HttpRequest.newBuilder(uri).header("Accept", "text/plain").build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(text.statusCode()).isEqualTo(200);
    assertThat(text.body()).contains("Service ranges").contains(E2eCluster.SERVICE_CIDR + "  kubernetes  IPv4")
        .contains("static   10.96.0.1-10.96.1.0").contains("NodePorts").contains("ClusterCIDRs");
  }
}
