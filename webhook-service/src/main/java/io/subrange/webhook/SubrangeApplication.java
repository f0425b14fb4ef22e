package io.subrange.webhook;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/** subrange: banded IP address management for Kubernetes, as a mutating admission webhook. */
@SpringBootApplication
@ConfigurationPropertiesScan
public class SubrangeApplication {

  public static void main(String[] args) {
    SpringApplication.run(SubrangeApplication.class, args);
  }
}
