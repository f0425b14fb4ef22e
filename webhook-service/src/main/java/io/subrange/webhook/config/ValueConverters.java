package io.subrange.webhook.config;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.port.PortRange;
import org.springframework.boot.context.properties.ConfigurationPropertiesBinding;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.convert.converter.Converter;

/**
 * Parses configuration text with the allocator's own strict parsers, so a bad value fails
 * startup with the parser's reason (for example "host bits are set").
 */
@Configuration(proxyBeanMethods = false)
class ValueConverters {

  @Bean
  @ConfigurationPropertiesBinding
  static Converter<String, Cidr> cidrConverter() {
    return new Converter<>() {
      @Override
      public Cidr convert(String text) {
        return Cidr.parse(text.trim());
      }
    };
  }

  @Bean
  @ConfigurationPropertiesBinding
  static Converter<String, PortRange> portRangeConverter() {
    return new Converter<>() {
      @Override
      public PortRange convert(String text) {
        return PortRange.parse(text.trim());
      }
    };
  }
}
