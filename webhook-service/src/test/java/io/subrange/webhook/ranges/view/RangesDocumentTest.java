package io.subrange.webhook.ranges.view;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.podcidr.ClusterCidrUsage;
import io.subrange.allocator.band.RangeUsage;
import io.subrange.allocator.store.RangeView;
import io.subrange.allocator.store.RangeView.HeldValue;
import io.subrange.allocator.store.RangeView.Kind;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The JSON form, on hand-made views, as plain Jackson writes it. */
class RangesDocumentTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void writesNodePortsWithNumericPortsAndClusterCidrsPerFamily() throws Exception {
    RangeView ports = new RangeView(Kind.NODE_PORTS, "nodeports", "30000-32767", "", "30000-30085", "30086-32767",
        new RangeUsage("30000-32767", 2768, 86, 3, 1), false, List.of(new HeldValue("30005", "Service default/np")));
    ClusterCidrUsage dual = new ClusterCidrUsage("pods", false, 2,
        new ClusterCidrUsage.FamilyUsage(Cidr.parse("10.244.0.0/16"), 24, 256, 3),
        new ClusterCidrUsage.FamilyUsage(Cidr.parse("fd00:244::/104"), 120, 65536, 2));
    ClusterCidrUsage v4Only = new ClusterCidrUsage("old", true, 0,
        new ClusterCidrUsage.FamilyUsage(Cidr.parse("10.200.0.0/24"), 28, 16, 0), null);

    JsonNode document = write(RangesDocument.of(List.of(ports), List.of(dual, v4Only)));

    assertThat(document.path("serviceRanges")).isEmpty();
    assertThat(document.path("nodePorts").toString()).isEqualTo("[{\"name\":\"nodeports\",\"ports\":\"30000-32767\","
        + "\"terminating\":false,\"size\":2768,\"used\":3,\"free\":2765,"
        + "\"staticBand\":{\"range\":\"30000-30085\",\"size\":86,\"used\":1,\"free\":85},"
        + "\"dynamicBand\":{\"range\":\"30086-32767\",\"size\":2682,\"used\":2,\"free\":2680},"
        + "\"staticBandHolders\":[{\"port\":30005,\"holder\":\"Service default/np\"}]}]");
    assertThat(document.path("podCidrs").get(0).toString()).isEqualTo("{\"name\":\"pods\",\"terminating\":false,"
        + "\"nodes\":2,"
        + "\"ipv4\":{\"cidr\":\"10.244.0.0/16\",\"nodePrefixLength\":24,"
        + "\"blocks\":{\"total\":256,\"allocated\":3,\"free\":253}},"
        + "\"ipv6\":{\"cidr\":\"fd00:244::/104\",\"nodePrefixLength\":120,"
        + "\"blocks\":{\"total\":65536,\"allocated\":2,\"free\":65534}}}");
    assertThat(document.path("podCidrs").get(1).has("ipv6")).as("no IPv6 range, no ipv6 key").isFalse();
    assertThat(document.path("podCidrs").get(1).path("terminating").asBoolean()).isTrue();
  }

  @Test
  void writesUnsignedCountsExactlyAndANoneStaticBandAsZeros() throws Exception {
    RangeView v6 = new RangeView(Kind.SERVICE_IPS, "kubernetes", "fd00::/64", "IPv6", "fd00::1-fd00::100",
        "fd00::101-fd00::ffff:ffff:ffff:ffff", new RangeUsage("fd00::/64", -1L, 256, -2L, 256), false, List.of());
    RangeView tiny = new RangeView(Kind.SERVICE_IPS, "tiny", "10.0.0.0/28", "IPv4", "none", "10.0.0.1-10.0.0.14",
        new RangeUsage("10.0.0.0/28", 14, 0, 0, 0), false, List.of());

    JsonNode ranges = write(RangesDocument.of(List.of(tiny, v6), List.of())).path("serviceRanges");

    assertThat(ranges.get(0).path("staticBand").toString())
        .isEqualTo("{\"range\":\"none\",\"size\":0,\"used\":0,\"free\":0}");
    JsonNode huge = ranges.get(1);
    assertThat(huge.path("size").toString()).isEqualTo("18446744073709551615");
    assertThat(huge.path("used").toString()).isEqualTo("18446744073709551614");
    assertThat(huge.path("free").toString()).isEqualTo("1");
    assertThat(huge.path("dynamicBand").path("size").toString()).isEqualTo("18446744073709551359");
    assertThat(huge.path("dynamicBand").path("used").toString()).isEqualTo("18446744073709551358");
  }

  private static JsonNode write(RangesDocument document) throws Exception {
    return JSON.readTree(JSON.writeValueAsString(document));
  }
}
