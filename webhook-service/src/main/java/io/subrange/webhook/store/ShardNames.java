package io.subrange.webhook.store;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.store.RangeKey;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * What a range's shards are called and how they are found: ConfigMap names, the labels that list
 * and watch them, and the way back from a ConfigMap to its range ({@link #keyOf}). Every replica,
 * of any version, must name a range's shards the same way: names and labels are part of the
 * stored format.
 *
 * <p>Stateless; called from any thread: the committer (writing, loading), the informer (sorting
 * watch events by range) and startup (the informer's label selector).
 */
public final class ShardNames {

  public static final String PART_OF = "app.kubernetes.io/part-of";
  public static final String KIND_LABEL = "subrange.io/range-kind";
  public static final String RANGE_LABEL = "subrange.io/range-id";
  public static final String FAMILY_LABEL = "subrange.io/family";
  /** The range's own name, which the range-id label may only abbreviate. */
  static final String NAME_ANNOTATION = "subrange.io/range-name";

  private ShardNames() {
  }

  /** The label value for a kind: service-ips, node-ports, pod-cidrs. */
  public static String kindLabel(RangeKey.Kind kind) {
    return kind.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /** The label selector that finds every shard of a range. */
  public static Map<String, String> selector(RangeKey key) {
    Map<String, String> labels = selector(key.kind(), key.family());
    labels.put(RANGE_LABEL, rangeId(key.name()));
    return labels;
  }

  /** The label selector that finds every shard of every range of one kind (and family). */
  public static Map<String, String> selector(RangeKey.Kind kind, IpFamily family) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(PART_OF, "subrange");
    labels.put(KIND_LABEL, kindLabel(kind));
    if (family != null) {
      labels.put(FAMILY_LABEL, family.kubernetesName().toLowerCase(Locale.ROOT));
    }
    return labels;
  }

  /** The ConfigMap name of a shard: subrange-service-ips-kubernetes-ipv4-0. */
  public static String name(RangeKey key, int shard) {
    String family = key.family() == null ? "" : "-" + key.family().kubernetesName().toLowerCase(Locale.ROOT);
    return "subrange-" + kindLabel(key.kind()) + "-" + rangeId(key.name()) + family + "-" + shard;
  }

  /** A range name as a label value (at most 63 characters): itself, or a prefix and a hash. */
  static String rangeId(String name) {
    if (name.length() <= 40) {
      return name;
    }
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(name.getBytes(StandardCharsets.UTF_8));
      return name.substring(0, 30).replaceAll("[^a-z0-9]$", "x") + "-" + HexFormat.of().formatHex(digest, 0, 5);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The range a shard belongs to, from its labels and annotations; empty when it is not one of ours. */
  public static Optional<RangeKey> keyOf(ConfigMap configMap) {
    Map<String, String> labels = configMap.getMetadata().getLabels();
    Map<String, String> annotations = configMap.getMetadata().getAnnotations();
    if (labels == null || annotations == null || annotations.get(NAME_ANNOTATION) == null) {
      return Optional.empty();
    }
    String name = annotations.get(NAME_ANNOTATION);
    String kind = labels.getOrDefault(KIND_LABEL, "");
    try {
      return Optional.of(switch (kind) {
        case "service-ips" -> RangeKey.serviceIps(name, IpFamily.valueOf(labels.getOrDefault(FAMILY_LABEL, "")
            .toUpperCase(Locale.ROOT)));
        case "node-ports" -> RangeKey.nodePorts();
        case "pod-cidrs" -> RangeKey.podCidrs(name);
        default -> null;
      });
    } catch (IllegalArgumentException | NullPointerException e) {
      return Optional.empty();
    }
  }
}
