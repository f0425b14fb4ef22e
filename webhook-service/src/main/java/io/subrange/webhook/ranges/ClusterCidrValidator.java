package io.subrange.webhook.ranges;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.subrange.allocator.podcidr.ClusterCidr;
import io.subrange.allocator.podcidr.NodeSelectorTerm;
import io.subrange.webhook.admission.AdmissionContext;
import io.subrange.webhook.admission.AdmissionTarget;
import io.subrange.webhook.admission.AdmissionDenied;
import io.subrange.webhook.admission.Operation;
import io.subrange.webhook.admission.Validator;
import io.subrange.webhook.ranges.model.ClusterCIDR;
import io.subrange.webhook.ranges.model.ClusterCIDRSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.springframework.stereotype.Component;

/**
 * Admits a ClusterCIDR only when subrange can hand out its blocks: ipv4 and/or ipv6, each
 * canonical and of its family, Node blocks of at least 16 addresses that fit each range, and
 * a node selector the API server would accept. The whole spec is fixed at creation; updates
 * that leave it alone always pass.
 */
@Component
public class ClusterCidrValidator implements Validator<ClusterCIDR> {

  private static final String RECREATE = "every field of a ClusterCIDR is fixed at creation: create a new"
      + " ClusterCIDR and delete this one";

  private final ObjectMapper mapper;

  public ClusterCidrValidator(ObjectMapper mapper) {
    this.mapper = mapper;
  }

  @Override
  public AdmissionTarget<ClusterCIDR> target() {
    return AdmissionTarget.of(ClusterCIDR.OBJECT_KIND, ClusterCIDR.class, Operation.CREATE, Operation.UPDATE);
  }

  @Override
  public CompletableFuture<List<String>> validate(AdmissionContext<ClusterCIDR> context) {
    ClusterCIDR old = context.oldObject();
    if (context.operation() == Operation.UPDATE && old != null) {
      String change = firstChange(old.getSpec(), context.object().getSpec());
      if (change != null) {
        throw AdmissionDenied.invalid(change + "; " + RECREATE);
      }
      return CompletableFuture.completedFuture(List.of());
    }
    // With generateName the name is not known yet; it only appears in messages.
    String name = context.name().isEmpty() ? "(generated name)" : context.name();
    ClusterCidr clusterCidr;
    try {
      clusterCidr = RangeObjects.clusterCidr(name, context.object().getSpec());
    } catch (InvalidRangeObjectException e) {
      throw AdmissionDenied.invalid(e.getMessage());
    }
    return CompletableFuture.completedFuture(warnings(clusterCidr));
  }

  /** Valid but probably not meant: a term without requirements selects no Node at all. */
  private static List<String> warnings(ClusterCidr clusterCidr) {
    List<String> warnings = new ArrayList<>();
    if (clusterCidr.nodeSelector() != null) {
      List<NodeSelectorTerm> terms = clusterCidr.nodeSelector().nodeSelectorTerms();
      for (int i = 0; i < terms.size(); i++) {
        if (terms.get(i).requirementCount() == 0) {
          warnings.add("spec.nodeSelector.nodeSelectorTerms[" + i + "] has no requirements and so matches no Node");
        }
      }
    }
    return warnings;
  }

  /** The first field the update changes, as the start of a denial, or null when the spec is unchanged. */
  private String firstChange(ClusterCIDRSpec before, ClusterCIDRSpec after) {
    ClusterCIDRSpec a = before == null ? new ClusterCIDRSpec(null, null, null, null) : before;
    ClusterCIDRSpec b = after == null ? new ClusterCIDRSpec(null, null, null, null) : after;
    if (!Objects.equals(range(a.ipv4()), range(b.ipv4()))) {
      return immutable("spec.ipv4", show(a.ipv4()), show(b.ipv4()));
    }
    if (!Objects.equals(range(a.ipv6()), range(b.ipv6()))) {
      return immutable("spec.ipv6", show(a.ipv6()), show(b.ipv6()));
    }
    if (!Objects.equals(a.perNodeHostBits(), b.perNodeHostBits())) {
      return immutable("spec.perNodeHostBits", String.valueOf(a.perNodeHostBits()),
          String.valueOf(b.perNodeHostBits()));
    }
    // Compared as JSON so that an absent list and an empty one are the same selector.
    if (!Objects.equals(mapper.valueToTree(a.nodeSelector()), mapper.valueToTree(b.nodeSelector()))) {
      return "spec.nodeSelector: field is immutable, and the update changes it";
    }
    return null;
  }

  private static String immutable(String field, String before, String after) {
    return field + ": field is immutable: it is " + before + " and the update asks for " + after;
  }

  /** "" and absent both mean no range of that family. */
  private static String range(String text) {
    return text == null || text.isEmpty() ? null : text;
  }

  private static String show(String text) {
    return range(text) == null ? "unset" : "\"" + text + "\"";
  }
}
