package io.subrange.webhook.ranges.model;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NodeSelectorBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.subrange.allocator.band.RangeUsage;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The CRD manifests parse, name what the Java model names, and hold every field the model writes. */
class RangeCrdManifestsTest {

  private static final Path CRDS = Path.of("..", "manifests", "crds");
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void serviceCidrCrdMatchesTheModel() throws IOException {
    CustomResourceDefinition crd = load("servicecidrs.subrange.io.yaml");
    assertNamesMatch(crd, ServiceCIDR.class, "ServiceCIDRList", "servicecidr");
    CustomResourceDefinitionVersion version = crd.getSpec().getVersions().get(0);
    assertThat(version.getSubresources().getStatus()).isNotNull();
    JSONSchemaProps cidrs = version.getSchema().getOpenAPIV3Schema().getProperties().get("spec").getProperties()
        .get("cidrs");
    assertThat(cidrs.getMinItems()).isEqualTo(1);
    assertThat(cidrs.getMaxItems()).isEqualTo(2);
    assertThat(version.getAdditionalPrinterColumns()).extracting(CustomResourceColumnDefinition::getName)
        .containsExactly("CIDRs", "Ready", "Used", "Free", "Used-2nd", "Free-2nd", "Age");

    ServiceCIDR object = new ServiceCIDR("kubernetes", ServiceCIDRSpec.of("10.96.0.0/12", "fd00::/64"));
    object.setStatus(new ServiceCIDRStatus(
        List.of(new io.fabric8.kubernetes.api.model.Condition("2024-05-01T10:00:00Z", "serving", 1L, "Serving",
            "True", ServiceCIDRStatus.READY)),
        List.of(ServiceCIDRUsage.of(new RangeUsage("10.96.0.0/12", 1_048_574, 256, 12, 2)))));
    assertEverySerializedFieldIsInTheSchema(object, version.getSchema().getOpenAPIV3Schema());
  }

  @Test
  void clusterCidrCrdMatchesTheModelAndNodeIpamControllersSchema() throws IOException {
    CustomResourceDefinition crd = load("clustercidrs.networking.x-k8s.io.yaml");
    assertNamesMatch(crd, ClusterCIDR.class, "ClusterCIDRList", "clustercidr");
    CustomResourceDefinitionVersion version = crd.getSpec().getVersions().get(0);
    assertThat(version.getSubresources()).isNull();
    // The structure of kubernetes-sigs/node-ipam-controller's networking.x-k8s.io/v1 schema,
    // without its CEL rules (see the CRD's header: the validating webhook enforces them).
    assertThat(structure(version.getSchema().getOpenAPIV3Schema())).containsExactly(
        " object",
        "apiVersion string",
        "kind string",
        "metadata object",
        "spec object required=perNodeHostBits",
        "spec.ipv4 string",
        "spec.ipv6 string",
        "spec.nodeSelector object required=nodeSelectorTerms map=atomic",
        "spec.nodeSelector.nodeSelectorTerms array list=atomic",
        "spec.nodeSelector.nodeSelectorTerms[] object map=atomic",
        "spec.nodeSelector.nodeSelectorTerms[].matchExpressions array list=atomic",
        "spec.nodeSelector.nodeSelectorTerms[].matchExpressions[] object required=key,operator",
        "spec.nodeSelector.nodeSelectorTerms[].matchExpressions[].key string",
        "spec.nodeSelector.nodeSelectorTerms[].matchExpressions[].operator string",
        "spec.nodeSelector.nodeSelectorTerms[].matchExpressions[].values array list=atomic",
        "spec.nodeSelector.nodeSelectorTerms[].matchExpressions[].values[] string",
        "spec.nodeSelector.nodeSelectorTerms[].matchFields array list=atomic",
        "spec.nodeSelector.nodeSelectorTerms[].matchFields[] object required=key,operator",
        "spec.nodeSelector.nodeSelectorTerms[].matchFields[].key string",
        "spec.nodeSelector.nodeSelectorTerms[].matchFields[].operator string",
        "spec.nodeSelector.nodeSelectorTerms[].matchFields[].values array list=atomic",
        "spec.nodeSelector.nodeSelectorTerms[].matchFields[].values[] string",
        "spec.perNodeHostBits integer/int32");

    ClusterCIDR object = new ClusterCIDR("pool", new ClusterCIDRSpec(new NodeSelectorBuilder()
        .addNewNodeSelectorTerm()
        .addNewMatchExpression().withKey("zone").withOperator("In").withValues("a").endMatchExpression()
        .addNewMatchField().withKey("metadata.name").withOperator("In").withValues("n1").endMatchField()
        .endNodeSelectorTerm().build(), 8, "10.244.0.0/16", "fd00:10:244::/104"));
    assertEverySerializedFieldIsInTheSchema(object, version.getSchema().getOpenAPIV3Schema());
  }

  private static CustomResourceDefinition load(String file) throws IOException {
    try (InputStream in = Files.newInputStream(CRDS.resolve(file))) {
      return new KubernetesSerialization().unmarshal(in, CustomResourceDefinition.class);
    }
  }

  private static void assertNamesMatch(CustomResourceDefinition crd, Class<? extends CustomResource<?, ?>> type,
      String listKind, String singular) {
    assertThat(crd.getMetadata().getName()).isEqualTo(CustomResource.getCRDName(type));
    assertThat(crd.getSpec().getGroup()).isEqualTo(HasMetadata.getGroup(type));
    assertThat(crd.getSpec().getScope()).isEqualTo("Cluster");
    assertThat(crd.getSpec().getNames().getKind()).isEqualTo(HasMetadata.getKind(type));
    assertThat(crd.getSpec().getNames().getPlural()).isEqualTo(HasMetadata.getPlural(type));
    assertThat(crd.getSpec().getNames().getSingular()).isEqualTo(singular).isEqualTo(HasMetadata.getSingular(type));
    assertThat(crd.getSpec().getNames().getListKind()).isEqualTo(listKind);
    assertThat(crd.getSpec().getVersions()).singleElement().satisfies(v -> {
      assertThat(v.getName()).isEqualTo(HasMetadata.getVersion(type));
      assertThat(v.getServed()).isTrue();
      assertThat(v.getStorage()).isTrue();
    });
  }

  /** One line per schema node: path, type, required fields, list and map types, rule count. */
  private static List<String> structure(JSONSchemaProps root) {
    List<String> lines = new ArrayList<>();
    walk(root, "", lines);
    return lines;
  }

  private static void walk(JSONSchemaProps node, String path, List<String> lines) {
    StringBuilder line = new StringBuilder(path).append(' ').append(node.getType());
    if (node.getFormat() != null) {
      line.append('/').append(node.getFormat());
    }
    if (!node.getRequired().isEmpty()) {
      line.append(" required=").append(String.join(",", node.getRequired()));
    }
    if (node.getXKubernetesListType() != null) {
      line.append(" list=").append(node.getXKubernetesListType());
    }
    if (node.getXKubernetesMapType() != null) {
      line.append(" map=").append(node.getXKubernetesMapType());
    }
    if (!node.getXKubernetesValidations().isEmpty()) {
      line.append(" rules=").append(node.getXKubernetesValidations().size());
    }
    lines.add(line.toString());
    new TreeMap<>(node.getProperties()).forEach((name, child) -> walk(child, path.isEmpty() ? name : path + "." + name,
        lines));
    if (node.getItems() != null && node.getItems().getSchema() != null) {
      walk(node.getItems().getSchema(), path + "[]", lines);
    }
  }

  private static void assertEverySerializedFieldIsInTheSchema(Object object, JSONSchemaProps schema) {
    JsonNode json = JSON.valueToTree(object);
    assertThat(json.path("metadata").path("name").asText()).isNotEmpty();
    assertFieldsIn(json, schema, "");
  }

  private static void assertFieldsIn(JsonNode json, JSONSchemaProps schema, String path) {
    if (json.isArray()) {
      json.forEach(item -> assertFieldsIn(item, schema.getItems().getSchema(), path + "[]"));
      return;
    }
    if (!json.isObject() || "metadata".equals(path)) {
      return;
    }
    Map<String, JSONSchemaProps> properties = schema.getProperties();
    for (Iterator<Map.Entry<String, JsonNode>> fields = json.fields(); fields.hasNext(); ) {
      Map.Entry<String, JsonNode> field = fields.next();
      String at = path.isEmpty() ? field.getKey() : path + "." + field.getKey();
      assertThat(properties).as("the CRD schema has %s", at).containsKey(field.getKey());
      JSONSchemaProps child = properties.get(field.getKey());
      String type = field.getValue().isTextual() ? "string" : field.getValue().isIntegralNumber() ? "integer"
          : field.getValue().isArray() ? "array" : field.getValue().isObject() ? "object" : "?";
      assertThat(child.getType()).as("type of %s", at).isEqualTo(type);
      assertFieldsIn(field.getValue(), child, at);
    }
  }
}
