package io.subrange.testing;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.GZIPInputStream;

/**
 * What subrange's ConfigMaps hold, read the way an operator could read them (the documented
 * format, not subrange's code): every shard's {@code binaryData["holders.gz"]} is gzip text, one
 * line per taken value: value, holder kind, namespace, name, uid, since.
 *
 * @param clusterIps address to holder ("namespace/name"), for values objects hold
 * @param nodePorts port to holder, likewise
 * @param reservedAhead values a webhook replica reserved ahead of requests (holder kind
 *     {@code ReservedAhead}: no object holds them yet), "clusterip/ADDRESS" or "nodeport/PORT" to
 *     the reservation's name
 */
public record StoredAllocations(Map<String, String> clusterIps, Map<Integer, String> nodePorts,
    Map<String, String> reservedAhead) {

  public static StoredAllocations read(KubernetesClient client, String namespace) {
    Map<String, String> ips = new TreeMap<>();
    Map<Integer, String> ports = new TreeMap<>();
    Map<String, String> reserved = new TreeMap<>();
    for (ConfigMap shard : client.configMaps().inNamespace(namespace).withLabel("app.kubernetes.io/part-of", "subrange")
        .list().getItems()) {
      String kind = shard.getMetadata().getLabels().getOrDefault("subrange.io/range-kind", "");
      String holders = shard.getBinaryData() == null ? null : shard.getBinaryData().get("holders.gz");
      if (holders == null) {
        continue;
      }
      for (String line : gunzip(Base64.getDecoder().decode(holders)).split("\n")) {
        if (line.isEmpty()) {
          continue;
        }
        String[] f = line.split("\t", -1);
        String holder = f[2].isEmpty() ? f[3] : f[2] + "/" + f[3];
        if (f[1].equals("ReservedAhead")) {
          reserved.put((kind.equals("node-ports") ? "nodeport/" : "clusterip/") + f[0], f[3]);
          continue;
        }
        switch (kind) {
          case "service-ips" -> ips.put(f[0], holder);
          case "node-ports" -> ports.put(Integer.parseInt(f[0]), holder);
          default -> { }
        }
      }
    }
    return new StoredAllocations(ips, ports, reserved);
  }

  private static String gunzip(byte[] data) {
    try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(data))) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
