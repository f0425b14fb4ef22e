package io.subrange.webhook.admission;

import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;

/** TestCreateInitIPFields, group "dualstack:v6v4": Service ranges 2000::/108,10.0.0.0/16. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "server.ssl.enabled=false",
    "management.server.port=0",
    "subrange.service.cidrs=2000::/108,10.0.0.0/16"})
@DirtiesContext
@DisplayName("TestCreateInitIPFields/dualstack:v6v4")
class UpstreamIpFieldsDualV6V4Test extends UpstreamIpFieldsTable {

  @Override
  List<String> clusterFamilies() {
    return List.of("v6", "v4");
  }
}
