package io.subrange.webhook.ranges.view;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.subrange.allocator.podcidr.ClusterCidrUsage;
import io.subrange.allocator.store.RangeView;
import java.math.BigInteger;
import java.util.List;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;

/**
 * The JSON form of {@code GET /ranges}: every Service range, the NodePort range (a list, like
 * the others, though Kubernetes has one) and every ClusterCIDR, with bands, counts and who holds
 * the static band.
 *
 * <p>Every count is a JSON number written exactly. A /64 holds 18446744073709551615 addresses,
 * more than a signed long and more than a double carries exactly, so counts are
 * {@link BigInteger}s here; clients that read JSON numbers as doubles (JavaScript, jq before
 * 1.7) see huge counts rounded.
 */
public record RangesDocument(List<ServiceRange> serviceRanges, List<NodePortRange> nodePorts,
    List<PodCidr> podCidrs) implements OperationResponseBody {

  static RangesDocument of(List<RangeView> views, List<ClusterCidrUsage> podCidrs) {
    return new RangesDocument(
        views.stream().filter(v -> v.kind() == RangeView.Kind.SERVICE_IPS).map(ServiceRange::of).toList(),
        views.stream().filter(v -> v.kind() == RangeView.Kind.NODE_PORTS).map(NodePortRange::of).toList(),
        podCidrs.stream().map(PodCidr::of).toList());
  }

  /** One Service range (a ServiceCIDR). */
  public record ServiceRange(String name, String cidr, String family, boolean terminating, BigInteger size,
      BigInteger used, BigInteger free, Band staticBand, Band dynamicBand, List<HeldAddress> staticBandHolders) {

    static ServiceRange of(RangeView view) {
      return new ServiceRange(view.name(), view.range(), view.family(), view.terminating(),
          Counts.exact(view.usage().size()), Counts.exact(view.usage().used()), Counts.exact(view.usage().free()),
          Band.of(BandUsage.staticBand(view)), Band.of(BandUsage.dynamicBand(view)),
          view.staticHolders().stream().map(h -> new HeldAddress(h.value(), h.holder())).toList());
    }
  }

  /** The NodePort range; {@code ports} is its first-last, as kube-apiserver's flag takes it. */
  public record NodePortRange(String name, String ports, boolean terminating, BigInteger size, BigInteger used,
      BigInteger free, Band staticBand, Band dynamicBand, List<HeldPort> staticBandHolders) {

    static NodePortRange of(RangeView view) {
      return new NodePortRange(view.name(), view.range(), view.terminating(),
          Counts.exact(view.usage().size()), Counts.exact(view.usage().used()), Counts.exact(view.usage().free()),
          Band.of(BandUsage.staticBand(view)), Band.of(BandUsage.dynamicBand(view)),
          view.staticHolders().stream().map(h -> new HeldPort(Integer.parseInt(h.value()), h.holder())).toList());
    }
  }

  /** A band: first-last ("none" with zero counts when a range has no static band). */
  public record Band(String range, BigInteger size, BigInteger used, BigInteger free) {

    static Band of(BandUsage band) {
      return new Band(band.range(), Counts.exact(band.size()), Counts.exact(band.used()), Counts.exact(band.free()));
    }
  }

  /** An address of the static band and who holds it ("Service kube-system/kube-dns", or "unknown"). */
  public record HeldAddress(String address, String holder) {
  }

  /** A port of the static band and who holds it. */
  public record HeldPort(int port, String holder) {
  }

  /** One ClusterCIDR; {@code ipv4} or {@code ipv6} is left out when it has no range of that family. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record PodCidr(String name, boolean terminating, int nodes, PodCidrFamily ipv4, PodCidrFamily ipv6) {

    static PodCidr of(ClusterCidrUsage usage) {
      return new PodCidr(usage.name(), usage.terminating(), usage.nodes(), PodCidrFamily.of(usage.ipv4()),
          PodCidrFamily.of(usage.ipv6()));
    }
  }

  /** One family of a ClusterCIDR: its range, the prefix length of a node's block, and block counts. */
  public record PodCidrFamily(String cidr, int nodePrefixLength, Blocks blocks) {

    static PodCidrFamily of(ClusterCidrUsage.FamilyUsage usage) {
      return usage == null ? null
          : new PodCidrFamily(usage.range().toString(), usage.nodePrefixLength(), new Blocks(
              Counts.exact(usage.total()), Counts.exact(usage.allocated()), Counts.exact(usage.free())));
    }
  }

  /** Node blocks of one family: all of them, those allocated (or reserved), those free. */
  public record Blocks(BigInteger total, BigInteger allocated, BigInteger free) {
  }
}
