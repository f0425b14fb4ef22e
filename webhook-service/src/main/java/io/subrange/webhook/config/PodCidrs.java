package io.subrange.webhook.config;

import jakarta.validation.Constraint;
import jakarta.validation.Payload;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** subrange.pod: at most one cluster CIDR per family, each splittable into node blocks of its mask size. */
@Target({ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Constraint(validatedBy = PodCidrsValidator.class)
public @interface PodCidrs {

  String message() default "must hold at most one cluster CIDR per IP family, each larger than its node mask";

  Class<?>[] groups() default {};

  Class<? extends Payload>[] payload() default {};
}
