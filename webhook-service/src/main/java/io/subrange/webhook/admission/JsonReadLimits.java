package io.subrange.webhook.admission;

import com.fasterxml.jackson.core.StreamReadConstraints;
import org.springframework.boot.autoconfigure.jackson.Jackson2ObjectMapperBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Bounds on what parsing one AdmissionReview may build, well above any object the API server
 * stores (annotations total at most 256 KiB; managedFields nest about a dozen levels) and well
 * below what would hurt: a hostile body is refused while it is read, with a 400 naming the limit,
 * before a tree of it is built.
 */
@Configuration(proxyBeanMethods = false)
class JsonReadLimits {

  static final int MAX_NESTING_DEPTH = 64;
  static final int MAX_STRING_LENGTH = 1024 * 1024;
  static final int MAX_NUMBER_LENGTH = 64;

  @Bean
  Jackson2ObjectMapperBuilderCustomizer admissionReadLimits() {
    StreamReadConstraints limits = StreamReadConstraints.builder()
        .maxNestingDepth(MAX_NESTING_DEPTH)
        .maxStringLength(MAX_STRING_LENGTH)
        .maxNumberLength(MAX_NUMBER_LENGTH)
        .build();
    return builder -> builder.postConfigurer(mapper -> mapper.getFactory().setStreamReadConstraints(limits));
  }
}
