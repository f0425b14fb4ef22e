package io.subrange.webhook.config;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.podcidr.CidrSet;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import java.util.EnumMap;
import java.util.Map;

/** Checks {@link PodCidrs} and reports on the property that is wrong. */
public class PodCidrsValidator implements ConstraintValidator<PodCidrs, SubrangeProperties.Pod> {

  @Override
  public boolean isValid(SubrangeProperties.Pod pod, ConstraintValidatorContext context) {
    if (pod == null || pod.clusterCidrs() == null) {
      return true;
    }
    Map<IpFamily, Cidr> byFamily = new EnumMap<>(IpFamily.class);
    for (Cidr cidr : pod.clusterCidrs()) {
      Cidr other = byFamily.putIfAbsent(cidr.family(), cidr);
      if (other != null) {
        return reject(context, "clusterCidrs", other + " and " + cidr + " are both " + cidr.family()
            + ": give at most one cluster CIDR per IP family");
      }
    }
    if (byFamily.size() == 1) {
      // Single-stack: the mask is used as given, so a bad one is reported on its own property.
      Cidr cidr = byFamily.values().iterator().next();
      int mask = pod.nodeMaskSize(cidr.family());
      try {
        new CidrSet(cidr, mask);
      } catch (IllegalArgumentException e) {
        String property = cidr.family() == IpFamily.IPV4 ? "nodeMaskSizeIpv4" : "nodeMaskSizeIpv6";
        return reject(context, property, "/" + mask + " node blocks do not fit " + cidr + ": " + e.getMessage());
      }
    }
    try {
      DefaultClusterCidr.from(pod);
    } catch (IllegalArgumentException e) {
      return reject(context, "clusterCidrs", e.getMessage());
    }
    return true;
  }

  private static boolean reject(ConstraintValidatorContext context, String property, String message) {
    context.disableDefaultConstraintViolation();
    String literal = message.replace("\\", "\\\\").replace("{", "\\{").replace("}", "\\}").replace("$", "\\$");
    context.buildConstraintViolationWithTemplate(literal).addPropertyNode(property).addConstraintViolation();
    return false;
  }
}
