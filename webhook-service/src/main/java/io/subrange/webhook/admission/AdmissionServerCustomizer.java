package io.subrange.webhook.admission;

import io.netty.channel.ChannelPipeline;
import org.springframework.boot.web.embedded.netty.NettyServerCustomizer;
import org.springframework.stereotype.Component;
import reactor.netty.NettyPipeline;
import reactor.netty.http.server.HttpServer;

/**
 * Puts an {@link AdmissionConnection} on every connection of the main server (the admission
 * port), right after the HTTP codec, so admission calls are answered before Reactor Netty's HTTP
 * handling and WebFlux see them. The plain-HTTP management server gets none: it must not allocate.
 */
@Component
class AdmissionServerCustomizer implements NettyServerCustomizer {

  /** The handler's name in the pipeline. */
  static final String HANDLER = "subrange.admission";

  private final AdmissionEndpoint endpoint;

  AdmissionServerCustomizer(AdmissionEndpoint endpoint) {
    this.endpoint = endpoint;
  }

  @Override
  public HttpServer apply(HttpServer server) {
    return server.doOnChannelInit((observer, channel, remoteAddress) -> {
      ChannelPipeline pipeline = channel.pipeline();
      if (pipeline.get(NettyPipeline.HttpCodec) != null && pipeline.get(HANDLER) == null) {
        pipeline.addAfter(NettyPipeline.HttpCodec, HANDLER, new AdmissionConnection(endpoint));
      }
    });
  }
}
