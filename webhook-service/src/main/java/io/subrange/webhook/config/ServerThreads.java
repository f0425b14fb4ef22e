package io.subrange.webhook.config;

import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.web.embedded.netty.NettyReactiveWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;
import reactor.netty.resources.LoopResources;

/**
 * The threads of subrange's HTTP servers (admission, probes and metrics): as many Reactor Netty
 * event loops as {@code subrange.admission.server-threads}, one by default.
 *
 * <p>Reactor Netty's default is at least four loops whatever the CPUs. The API server calls a
 * webhook a little at a time on each of its connections; a benchmark paced that way measured
 * less CPU per call on one loop than on four, with fewer system calls (though not fewer context
 * switches), and against a real API server on two saturated cores no difference showed
 * (docs/performance.md, "Sixteenth round").
 * Admission does not wait for writes on the loop (the store's answers are futures), but it does
 * take the allocation engine's lock, which the committer also holds while it applies a batch:
 * on one loop such a wait holds up every connection, probes and metrics included.
 *
 * <p>Replaces Spring Boot's factory, which uses Reactor Netty's global resources (so
 * {@code spring.reactor.netty.shutdown-quiet-period} no longer applies; Reactor's 2 s default
 * does). The management server's factory, made in a child context, is given no factory by
 * Spring Boot and would start the global loops; {@link ManagementServer} gives it this one. The
 * threads are {@code reactor-http-server-epoll-N} (the load harness counts {@code reactor-http*}
 * as serving).
 */
@Configuration(proxyBeanMethods = false)
class ServerThreads {

  @Bean
  ReactorResourceFactory reactorResourceFactory(SubrangeProperties properties) {
    int loops = properties.admission().serverThreads();
    ReactorResourceFactory factory = new ReactorResourceFactory();
    factory.setUseGlobalResources(false);
    factory.setLoopResourcesSupplier(() -> LoopResources.create("reactor-http-server", loops, true));
    return factory;
  }

  /**
   * Puts the management server (metrics, on its own port) on the same loops. Listed in
   * META-INF/spring/...ManagementContextConfiguration.imports so it runs in the management
   * context; as a member of this class it runs in the main context too, where it sets the main
   * server's factory to the one Spring Boot already gave it.
   */
  @ManagementContextConfiguration(proxyBeanMethods = false)
  static class ManagementServer {

    @Bean
    WebServerFactoryCustomizer<NettyReactiveWebServerFactory> serverThreadsOfTheManagementServer(
        ReactorResourceFactory serverThreads) {
      return factory -> factory.setResourceFactory(serverThreads);
    }
  }
}
