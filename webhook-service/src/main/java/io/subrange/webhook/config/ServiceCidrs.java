package io.subrange.webhook.config;

import jakarta.validation.Constraint;
import jakarta.validation.Payload;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** Service CIDRs: at most one per family, each a usable Service range. */
@Target({ElementType.FIELD, ElementType.PARAMETER, ElementType.RECORD_COMPONENT})
@Retention(RetentionPolicy.RUNTIME)
@Constraint(validatedBy = ServiceCidrsValidator.class)
public @interface ServiceCidrs {

  String message() default "must hold at most one usable Service CIDR per IP family";

  Class<?>[] groups() default {};

  Class<? extends Payload>[] payload() default {};
}
