package io.subrange.webhook.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpFamily;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.context.ConfigurationPropertiesAutoConfiguration;
import org.springframework.boot.autoconfigure.validation.ValidationAutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.io.support.SpringFactoriesLoader;

class SubrangePropertiesTest {

  @Configuration(proxyBeanMethods = false)
  @EnableConfigurationProperties(SubrangeProperties.class)
  @Import(ValueConverters.class)
  static class PropertiesOnly {
  }

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(ConfigurationPropertiesAutoConfiguration.class,
          ValidationAutoConfiguration.class))
      .withUserConfiguration(PropertiesOnly.class);

  @Test
  void defaultsMatchKubeApiserver() {
    runner.run(context -> {
      SubrangeProperties properties = context.getBean(SubrangeProperties.class);
      assertThat(properties.service().cidrs()).containsExactly(Cidr.parse("10.96.0.0/12"));
      assertThat(properties.service().nodePortRange()).hasToString("30000-32767");
      assertThat(properties.store()).isEqualTo(SubrangeProperties.StoreKind.MEMORY);
    });
  }

  @Test
  void environmentVariablesBindThroughRelaxedBinding() {
    runner.withInitializer(context -> context.getEnvironment().getPropertySources().addFirst(
            new SystemEnvironmentPropertySource("systemEnvironment", Map.of(
                "SUBRANGE_SERVICE_CIDRS", "fd00::/108, 10.0.0.0/16",
                "SUBRANGE_SERVICE_NODEPORTRANGE", "20000-20999",
                "SUBRANGE_STORE", "memory"))))
        .run(context -> {
          SubrangeProperties properties = context.getBean(SubrangeProperties.class);
          assertThat(properties.service().cidrs())
              .containsExactly(Cidr.parse("fd00::/108"), Cidr.parse("10.0.0.0/16"));
          assertThat(properties.service().primaryFamily()).isEqualTo(IpFamily.IPV6);
          assertThat(properties.service().nodePortRange().size()).isEqualTo(1000);
        });
  }

  @Test
  void aBadCidrStopsStartupNamingPropertyValueAndReason() {
    assertStartupFailure(Map.of("subrange.service.cidrs", "10.96.0.1/12"),
        "subrange.service.cidrs", "10.96.0.1/12", "host bits are set (the network is 10.96.0.0/12)");
    assertStartupFailure(Map.of("subrange.service.cidrs", "10.96.0.0/12,10.0.0.0/24"),
        "subrange.service.cidrs", "10.0.0.0/24", "are both IPv4");
    assertStartupFailure(Map.of("subrange.service.cidrs", "10.0.0.0/31"),
        "subrange.service.cidrs", "10.0.0.0/31", "too small");
    assertStartupFailure(Map.of("subrange.service.cidrs", "fd00::/63"),
        "subrange.service.cidrs", "fd00::/63", "too large");
    assertStartupFailure(Map.of("subrange.service.cidrs", "10.0.0.0/7"),
        "subrange.service.cidrs", "10.0.0.0/7", "at most a /8");
    assertStartupFailure(Map.of("subrange.service.cidrs", ""), "subrange.service.cidrs", "", "must not be empty");
  }

  @Test
  void podCidrConfigurationIsCheckedAsTheDefaultClusterCidrWillUseIt() {
    assertStartupFailure(Map.of("subrange.pod.cluster-cidrs", "10.244.0.0/16,10.245.0.0/16"),
        "subrange.pod.clusterCidrs", "", "are both IPv4");
    assertStartupFailure(Map.of("subrange.pod.cluster-cidrs", "10.244.0.0/16", "subrange.pod.node-mask-size-ipv4", "12"),
        "subrange.pod.nodeMaskSizeIpv4", "", "/12 node blocks do not fit 10.244.0.0/16");
    // Dual-stack: one perNodeHostBits (8, from the /24 IPv4 blocks) makes /120 IPv6 blocks: too many in a /48.
    assertStartupFailure(Map.of("subrange.pod.cluster-cidrs", "10.244.0.0/16,fd00:244::/48"),
        "subrange.pod.clusterCidrs", "", "one perNodeHostBits for both families");
    runner.withPropertyValues("subrange.pod.cluster-cidrs=10.244.0.0/16,fd00:244::/104")
        .run(context -> assertThat(context).hasNotFailed());
  }

  @Test
  void badNodePortRangeOrStoreStopsStartup() {
    assertStartupFailure(Map.of("subrange.service.node-port-range", "32767-30000"),
        "subrange.service.node-port-range", "32767-30000", "the first must not exceed the last");
    assertStartupFailure(Map.of("subrange.store", "etcd"), "subrange.store", "etcd", "");
  }

  private void assertStartupFailure(Map<String, String> properties, String property, String value, String reason) {
    runner.withPropertyValues(properties.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
            .toArray(String[]::new))
        .run(context -> {
          assertThat(context).hasFailed();
          FailureAnalysis analysis = analyze(context.getStartupFailure());
          assertThat(analysis).as("Spring explains the failure").isNotNull();
          assertThat(analysis.getDescription()).contains(property).contains(value).contains(reason);
        });
  }

  private static FailureAnalysis analyze(Throwable failure) {
    // Spring Boot's own analyzers take the bean factory and environment as constructor arguments.
    SpringFactoriesLoader.ArgumentResolver arguments = SpringFactoriesLoader.ArgumentResolver
        .of(BeanFactory.class, new DefaultListableBeanFactory())
        .and(Environment.class, new StandardEnvironment());
    for (FailureAnalyzer analyzer : SpringFactoriesLoader.forDefaultResourceLocation()
        .load(FailureAnalyzer.class, arguments, SpringFactoriesLoader.FailureHandler.handleMessage((message, e) -> {
          // analyzers for libraries not on this classpath (Liquibase, ...) cannot load; skip them
        }))) {
      FailureAnalysis analysis = analyzer.analyze(failure);
      if (analysis != null) {
        return analysis;
      }
    }
    return null;
  }
}
