package io.subrange.webhook.ranges.view;

import static org.assertj.core.api.Assertions.assertThat;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.podcidr.ClusterCidrUsage;
import io.subrange.allocator.band.RangeUsage;
import io.subrange.allocator.store.RangeView;
import io.subrange.allocator.store.RangeView.HeldValue;
import io.subrange.allocator.store.RangeView.Kind;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The text layout, on hand-made range views. */
class RangesTextTest {

  private static final RangeView NODE_PORTS = new RangeView(Kind.NODE_PORTS, "nodeports", "30000-32767", "",
      "30000-30085", "30086-32767", new RangeUsage("30000-32767", 2768, 86, 2, 1), false,
      List.of(new HeldValue("30005", "Service default/np")));

  @Test
  void drawsEachRangeWithItsBandsAndStaticHolders() {
    RangeView services = new RangeView(Kind.SERVICE_IPS, "kubernetes", "10.96.0.0/12", "IPv4",
        "10.96.0.1-10.96.1.0", "10.96.1.1-10.111.255.254", new RangeUsage("10.96.0.0/12", 1048574, 256, 101, 2),
        false, List.of(new HeldValue("10.96.0.1", "Service default/kubernetes"),
            new HeldValue("10.96.0.10", "Service kube-system/kube-dns")));
    ClusterCidrUsage pods = new ClusterCidrUsage("pods", false, 3,
        new ClusterCidrUsage.FamilyUsage(Cidr.parse("10.244.0.0/16"), 24, 256, 3),
        new ClusterCidrUsage.FamilyUsage(Cidr.parse("fd00:244::/104"), 120, 65536, 3));

    assertThat(RangesText.render(List.of(services, NODE_PORTS), List.of(pods))).isEqualTo("""
        Service ranges
        10.96.0.0/12  kubernetes  IPv4  1048574 addresses  101 used  1048473 free
          static   10.96.0.1-10.96.1.0       [#.........]  2 of 256 used
          dynamic  10.96.1.1-10.111.255.254  [#.........]  99 of 1048318 used
          static band holders
            10.96.0.1   Service default/kubernetes
            10.96.0.10  Service kube-system/kube-dns

        NodePorts
        30000-32767  nodeports  2768 ports  2 used  2766 free
          static   30000-30085  [#.........]  1 of 86 used
          dynamic  30086-32767  [#.........]  1 of 2682 used
          static band holders
            30005  Service default/np

        ClusterCIDRs
        pods  3 nodes
          IPv4  10.244.0.0/16   /24 per node   [#.........]  3 of 256 blocks used
          IPv6  fd00:244::/104  /120 per node  [#.........]  3 of 65536 blocks used
        """);
  }

  @Test
  void barsAreEmptyAtZeroFullAtAllAndNeverHideATinyOrMissingRest() {
    assertThat(FillBar.of(0, 1048318)).isEqualTo("[..........]");
    assertThat(FillBar.of(1, 1048318)).as("under 1%: one mark").isEqualTo("[#.........]");
    assertThat(FillBar.of(1, -1L)).as("1 of 2^64-1").isEqualTo("[#.........]");
    assertThat(FillBar.of(128, 256)).isEqualTo("[#####.....]");
    assertThat(FillBar.of(1048317, 1048318)).as("all but one: not drawn full").isEqualTo("[#########.]");
    assertThat(FillBar.of(-3L, -1L)).as("2^64-3 of 2^64-1").isEqualTo("[#########.]");
    assertThat(FillBar.of(256, 256)).isEqualTo("[##########]");
    assertThat(FillBar.of(-1L, -1L)).isEqualTo("[##########]");
    assertThat(FillBar.of(0, 0)).as("an empty band").isEqualTo("[..........]");
  }

  @Test
  void showsAFullStaticBandAndAnEmptyDynamicOne() {
    RangeView full = new RangeView(Kind.SERVICE_IPS, "small", "10.0.0.0/24", "IPv4", "10.0.0.1-10.0.0.16",
        "10.0.0.17-10.0.0.254", new RangeUsage("10.0.0.0/24", 254, 16, 16, 16), true, List.of());
    assertThat(RangesText.render(List.of(full), List.of())).isEqualTo("""
        Service ranges
        10.0.0.0/24  small  IPv4  254 addresses  16 used  238 free  terminating
          static   10.0.0.1-10.0.0.16    [##########]  16 of 16 used
          dynamic  10.0.0.17-10.0.0.254  [..........]  0 of 238 used

        NodePorts: none

        ClusterCIDRs: none
        """);
  }

  @Test
  void saysNoneForARangeWithoutAStaticBand() {
    RangeView tiny = new RangeView(Kind.SERVICE_IPS, "tiny", "10.0.0.0/28", "IPv4", "none",
        "10.0.0.1-10.0.0.14", new RangeUsage("10.0.0.0/28", 14, 0, 1, 0), false, List.of());
    assertThat(RangesText.render(List.of(tiny), List.of())).startsWith("""
        Service ranges
        10.0.0.0/28  tiny  IPv4  14 addresses  1 used  13 free
          static   none
          dynamic  10.0.0.1-10.0.0.14  [#.........]  1 of 14 used
        """);
  }

  @Test
  void printsTheCountsOfAWholeSlash64ExactlyAndWithinTheLineWidth() {
    RangeView v6 = new RangeView(Kind.SERVICE_IPS, "kubernetes", "fd00:10::/64", "IPv6", "fd00:10::1-fd00:10::100",
        "fd00:10::101-fd00:10::ffff:ffff:ffff:ffff", new RangeUsage("fd00:10::/64", -1L, 256, 2, 1), false,
        List.of(new HeldValue("fd00:10::a", "Service kube-system/kube-dns")));
    String text = RangesText.render(List.of(v6), List.of());
    assertThat(text).contains("""
        fd00:10::/64  kubernetes  IPv6  18446744073709551615 addresses  2 used  18446744073709551613 free
          static   fd00:10::1-fd00:10::100                    [#.........]  1 of 256 used
          dynamic  fd00:10::101-fd00:10::ffff:ffff:ffff:ffff  [#.........]  1 of 18446744073709551359 used
        """);
    assertThat(text).doesNotContain("-1 ").doesNotContain("-2");
    assertThat(text.lines()).allSatisfy(line -> assertThat(line).hasSizeLessThan(100));
  }

  @Test
  void wrapsALineThatWouldReachOneHundredCharacters() {
    RangeView v6 = new RangeView(Kind.SERVICE_IPS, "a-service-cidr-with-a-rather-long-name",
        "fd00:1234:5678:9abc::/64", "IPv6", "fd00:1234:5678:9abc::1-fd00:1234:5678:9abc::100",
        "fd00:1234:5678:9abc::101-fd00:1234:5678:9abc:ffff:ffff:ffff:ffff",
        new RangeUsage("fd00:1234:5678:9abc::/64", -1L, 256, 0, 0), false, List.of());
    String text = RangesText.render(List.of(v6), List.of());
    assertThat(text).contains("""
        fd00:1234:5678:9abc::/64  a-service-cidr-with-a-rather-long-name  IPv6
            18446744073709551615 addresses  0 used  18446744073709551615 free
          static   fd00:1234:5678:9abc::1-fd00:1234:5678:9abc::100                   [..........]
                   0 of 256 used
          dynamic  fd00:1234:5678:9abc::101-fd00:1234:5678:9abc:ffff:ffff:ffff:ffff  [..........]
                   0 of 18446744073709551359 used
        """);
    assertThat(text.lines()).allSatisfy(line -> assertThat(line).hasSizeLessThan(100));
  }

  @Test
  void namesTerminatingSingleNodeAndSingleFamilyClusterCidrs() {
    ClusterCidrUsage v4Only = new ClusterCidrUsage("old", true, 1,
        new ClusterCidrUsage.FamilyUsage(Cidr.parse("10.200.0.0/24"), 28, 16, 16), null);
    assertThat(RangesText.render(List.of(), List.of(v4Only))).isEqualTo("""
        Service ranges: none

        NodePorts: none

        ClusterCIDRs
        old  1 node  terminating
          IPv4  10.200.0.0/24  /28 per node  [##########]  16 of 16 blocks used
        """);
  }
}
