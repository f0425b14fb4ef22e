package io.subrange.webhook.admission;

import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;

/** TestCreateInitIPFields, group "singlestack:v6": Service ranges 2000::/108. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "server.ssl.enabled=false",
    "management.server.port=0",
    "subrange.service.cidrs=2000::/108"})
@DirtiesContext
@DisplayName("TestCreateInitIPFields/singlestack:v6")
class UpstreamIpFieldsSingleV6Test extends UpstreamIpFieldsTable {

  @Override
  List<String> clusterFamilies() {
    return List.of("v6");
  }
}
