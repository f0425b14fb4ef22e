package io.subrange.webhook.config;

import io.subrange.allocator.ip.ServiceIpRange;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpFamily;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/** Checks {@link ServiceCidrs} and says which CIDR is wrong and why. */
public class ServiceCidrsValidator implements ConstraintValidator<ServiceCidrs, List<Cidr>> {

  @Override
  public boolean isValid(List<Cidr> cidrs, ConstraintValidatorContext context) {
    if (cidrs == null) {
      return true;
    }
    Map<IpFamily, Cidr> byFamily = new EnumMap<>(IpFamily.class);
    for (Cidr cidr : cidrs) {
      Cidr other = byFamily.putIfAbsent(cidr.family(), cidr);
      if (other != null) {
        return reject(context, other + " and " + cidr + " are both " + cidr.family()
            + ": give at most one CIDR per IP family (dual-stack is one IPv4 and one IPv6)");
      }
      try {
        ServiceIpRange.of(cidr);
      } catch (IllegalArgumentException e) {
        return reject(context, e.getMessage());
      }
    }
    return true;
  }

  private static boolean reject(ConstraintValidatorContext context, String message) {
    context.disableDefaultConstraintViolation();
    // Bean Validation reads {...} and ${...} in templates; CIDR text has neither, but be safe.
    String literal = message.replace("\\", "\\\\").replace("{", "\\{").replace("}", "\\}").replace("$", "\\$");
    context.buildConstraintViolationWithTemplate(literal).addConstraintViolation();
    return false;
  }
}
