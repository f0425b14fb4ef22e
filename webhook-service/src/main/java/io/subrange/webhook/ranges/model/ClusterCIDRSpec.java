package io.subrange.webhook.ranges.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.fabric8.kubernetes.api.model.NodeSelector;

/**
 * A ClusterCIDR's spec, field for field as node-ipam-controller defines it. Every field is
 * immutable. {@code ipv4} and {@code ipv6} are CIDR text; empty or absent means the family is
 * not served. A null {@code nodeSelector} makes the ClusterCIDR the fallback for Nodes no
 * other one selects.
 *
 * @param perNodeHostBits host bits of each Node's block: 8 is a /24 (IPv4) and a /120 (IPv6)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonPropertyOrder({"nodeSelector", "perNodeHostBits", "ipv4", "ipv6"})
public record ClusterCIDRSpec(NodeSelector nodeSelector, Integer perNodeHostBits, String ipv4, String ipv6) {
}
