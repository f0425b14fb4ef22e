package io.subrange.webhook.ranges.view;

import io.subrange.allocator.podcidr.ClusterCidrUsage;
import io.subrange.allocator.band.RangeUsage;
import io.subrange.allocator.store.RangeView;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * The text/plain form of {@code GET /ranges}, after KEP-3070's band diagrams: per range a header
 * line, one line per band with its first-last, a fill bar and how much is used, then who holds
 * the static band; the NodePort range the same way; then the ClusterCIDRs. For example:
 *
 * <pre>
 * Service ranges
 * 10.96.0.0/12  kubernetes  IPv4  1048574 addresses  101 used  1048473 free
 *   static   10.96.0.1-10.96.1.0       [#.........]  1 of 256 used
 *   dynamic  10.96.1.1-10.111.255.254  [#.........]  100 of 1048318 used
 *   static band holders
 *     10.96.0.10  Service kube-system/kube-dns
 * </pre>
 *
 * Lines stay under 100 characters: one that would not continues on the next, indented. Counts
 * are exact (unsigned), as in the JSON form.
 */
final class RangesText {

  static final int MAX_LINE = 99;

  private static final String SEPARATOR = "  ";
  private static final String BAND_INDENT = "  ";
  private static final int LABEL_WIDTH = "dynamic".length();
  /** Continuation lines of a band start under its first-last. */
  private static final String BAND_CONTINUATION = " ".repeat(BAND_INDENT.length() + LABEL_WIDTH + SEPARATOR.length());
  private static final String HOLDER_INDENT = "    ";
  private static final String HEADER_CONTINUATION = "    ";

  private RangesText() {
  }

  static String render(List<RangeView> views, List<ClusterCidrUsage> podCidrs) {
    List<String> lines = new ArrayList<>();
    section(lines, "Service ranges", ofKind(views, RangeView.Kind.SERVICE_IPS), v -> range(v, "addresses"));
    section(lines, "NodePorts", ofKind(views, RangeView.Kind.NODE_PORTS), v -> range(v, "ports"));
    section(lines, "ClusterCIDRs", podCidrs, RangesText::clusterCidr);
    return String.join("\n", lines) + "\n";
  }

  private static List<RangeView> ofKind(List<RangeView> views, RangeView.Kind kind) {
    return views.stream().filter(v -> v.kind() == kind).toList();
  }

  private static <T> void section(List<String> lines, String title, List<T> items, Function<T, List<String>> block) {
    if (!lines.isEmpty()) {
      lines.add("");
    }
    if (items.isEmpty()) {
      lines.add(title + ": none");
      return;
    }
    lines.add(title);
    for (int i = 0; i < items.size(); i++) {
      if (i > 0) {
        lines.add("");
      }
      lines.addAll(block.apply(items.get(i)));
    }
  }

  private static List<String> range(RangeView view, String unit) {
    RangeUsage usage = view.usage();
    List<String> lines = new ArrayList<>(wrapped(HEADER_CONTINUATION, view.range(), view.name(), view.family(),
        Counts.text(usage.size()) + " " + unit, Counts.text(usage.used()) + " used",
        Counts.text(usage.free()) + " free", view.terminating() ? "terminating" : ""));
    BandUsage staticBand = BandUsage.staticBand(view);
    BandUsage dynamicBand = BandUsage.dynamicBand(view);
    int rangeWidth = Math.max(staticBand.range().length(), dynamicBand.range().length());
    lines.addAll(band("static", staticBand, rangeWidth));
    lines.addAll(band("dynamic", dynamicBand, rangeWidth));
    if (!view.staticHolders().isEmpty()) {
      lines.add(BAND_INDENT + "static band holders");
      int valueWidth = view.staticHolders().stream().mapToInt(h -> h.value().length()).max().orElse(0);
      for (RangeView.HeldValue held : view.staticHolders()) {
        lines.addAll(wrapped(HOLDER_INDENT + HOLDER_INDENT, HOLDER_INDENT + pad(held.value(), valueWidth),
            held.holder()));
      }
    }
    return lines;
  }

  private static List<String> band(String label, BandUsage band, int rangeWidth) {
    String head = BAND_INDENT + pad(label, LABEL_WIDTH) + SEPARATOR;
    if (band.isEmpty()) {
      return List.of(head + band.range());
    }
    return wrapped(BAND_CONTINUATION, head + pad(band.range(), rangeWidth), FillBar.of(band.used(), band.size()),
        Counts.text(band.used()) + " of " + Counts.text(band.size()) + " used");
  }

  private static List<String> clusterCidr(ClusterCidrUsage usage) {
    List<String> lines = new ArrayList<>(wrapped(HEADER_CONTINUATION, usage.name(),
        usage.nodes() + (usage.nodes() == 1 ? " node" : " nodes"), usage.terminating() ? "terminating" : ""));
    List<ClusterCidrUsage.FamilyUsage> families = Stream.of(usage.ipv4(), usage.ipv6()).filter(Objects::nonNull)
        .toList();
    int cidrWidth = families.stream().mapToInt(f -> f.range().toString().length()).max().orElse(0);
    int blockWidth = families.stream().mapToInt(f -> perNode(f).length()).max().orElse(0);
    for (ClusterCidrUsage.FamilyUsage family : families) {
      lines.addAll(wrapped(BAND_CONTINUATION,
          BAND_INDENT + family.range().family().kubernetesName() + SEPARATOR
              + pad(family.range().toString(), cidrWidth),
          pad(perNode(family), blockWidth), FillBar.of(family.allocated(), family.total()),
          Counts.text(family.allocated()) + " of " + Counts.text(family.total()) + " blocks used"));
    }
    return lines;
  }

  private static String perNode(ClusterCidrUsage.FamilyUsage family) {
    return "/" + family.nodePrefixLength() + " per node";
  }

  /**
   * Joins the non-empty parts with two spaces; a part that would take the line past
   * {@link #MAX_LINE} starts a new one after {@code continuation}. The first part carries its own
   * indent.
   */
  static List<String> wrapped(String continuation, String... parts) {
    List<String> lines = new ArrayList<>();
    StringBuilder line = new StringBuilder();
    for (String part : parts) {
      if (part.isEmpty()) {
        continue;
      }
      if (line.isEmpty()) {
        line.append(part);
      } else if (line.length() + SEPARATOR.length() + part.length() <= MAX_LINE) {
        line.append(SEPARATOR).append(part);
      } else if (line.toString().stripTrailing().length() + SEPARATOR.length() + part.length() <= MAX_LINE) {
        // fits without the padding that aligns it with its neighbours
        String unpadded = line.toString().stripTrailing();
        line.setLength(0);
        line.append(unpadded).append(SEPARATOR).append(part);
      } else {
        lines.add(line.toString().stripTrailing());
        line.setLength(0);
        line.append(continuation).append(part);
      }
    }
    lines.add(line.toString().stripTrailing());
    return lines;
  }

  private static String pad(String text, int width) {
    return text.length() >= width ? text : text + " ".repeat(width - text.length());
  }
}
