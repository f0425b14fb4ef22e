package io.subrange.webhook.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Service;
import io.subrange.webhook.ranges.model.ServiceCIDR;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What the reader hands on of a well-formed review (malformed ones: HostileInputTest,
 * AdmissionEndpointTest): objects decoded as they are read when request.kind came first (as the
 * API server writes it, and AdmissionReviews), else from where they lie.
 */
class AdmissionReviewReaderTest {

  private final AdmissionReviewReader reader = new AdmissionReviewReader(AdmissionReviews.JSON,
      List.of(AdmissionTarget.of(ObjectKind.SERVICE, Service.class, Operation.CREATE, Operation.UPDATE)));

  @Test
  void objectsComeWithoutManagedFieldsAndOtherwiseWhole() {
    ObjectNode before = AdmissionReviews.service("ns", "web", "NodePort", "10.0.0.7");
    ObjectNode after = before.deepCopy();
    ((ObjectNode) after.path("metadata")).putObject("labels").put("tier", "front");
    ObjectNode review = AdmissionReviews.update(withManagedFields(before.deepCopy()), withManagedFields(after.deepCopy()),
        false);

    AdmissionCall call = reader.read(review.toString().getBytes(StandardCharsets.UTF_8));

    assertThat(call.object().decodedAsRead()).as("request.kind came first: decoded as it was read").isTrue();
    assertThat(call.oldObject().decodedAsRead()).isTrue();
    Service object = call.object().decode(Service.class, "request.object", call.kind());
    Service old = call.oldObject().decode(Service.class, "request.oldObject", call.kind());
    Service again = call.object().decode(Service.class, "request.object", call.kind());
    assertThat(again).as("each decode is the caller's own to change").isNotSameAs(object).isEqualTo(object);
    assertThat(object.getMetadata().getManagedFields()).isNullOrEmpty();
    assertThat(old.getMetadata().getManagedFields()).isNullOrEmpty();
    assertThat(modelled(object)).isEqualTo(modelled(AdmissionReviews.JSON.convertValue(after, Service.class)));
    assertThat(object.getMetadata().getLabels()).containsEntry("tier", "front");
    assertThat(modelled(old)).isEqualTo(modelled(AdmissionReviews.JSON.convertValue(before, Service.class)));
    assertThat(call.operation()).isEqualTo(Operation.UPDATE);
  }

  /** The API server's field order is not relied on, and what admission does not read is skipped unbuilt. */
  @Test
  void fieldsAreReadInAnyOrderAndTheRestIsSkipped() {
    String body = "{\"request\":{\"object\":{\"spec\":{\"type\":\"ClusterIP\",\"ports\":[{\"port\":80}]},"
        + "\"metadata\":{\"name\":\"web\",\"namespace\":\"ns\"},\"kind\":\"Service\",\"apiVersion\":\"v1\"},"
        + "\"userInfo\":{\"username\":\"admin\",\"groups\":[\"system:masters\"],\"extra\":{\"a\":[\"b\"]}},"
        + "\"dryRun\":true,\"operation\":\"CREATE\",\"oldObject\":null,\"name\":\"web\",\"namespace\":\"ns\","
        + "\"kind\":{\"kind\":\"Service\",\"version\":\"v1\",\"group\":\"\"},\"uid\":\"u-1\"},"
        + "\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\"}  ";

    AdmissionCall call = reader.read(body.getBytes(StandardCharsets.UTF_8));

    assertThat(call.uid()).isEqualTo("u-1");
    assertThat(call.kind()).isEqualTo(new ObjectKind("", "v1", "Service"));
    assertThat(call.operation()).isEqualTo(Operation.CREATE);
    assertThat(call.namespace()).isEqualTo("ns");
    assertThat(call.name()).isEqualTo("web");
    assertThat(call.dryRun()).isTrue();
    assertThat(call.oldObject()).isNull();
    assertThat(call.object().decodedAsRead()).as("the object came before request.kind").isFalse();
    Service service = call.object().decode(Service.class, "request.object", call.kind());
    assertThat(service.getMetadata().getName()).isEqualTo("web");
    assertThat(service.getSpec().getPorts()).singleElement()
        .satisfies(port -> assertThat(port.getPort()).isEqualTo(80));
  }

  /**
   * fabric8's CustomResource reports its own kind whatever the object states, so custom resources
   * are not decoded as they are read, and a stated kind that is not request.kind's is refused.
   */
  @Test
  void aCustomResourceStatingAnotherKindIsRefusedWhateverTheFieldOrder() {
    AdmissionReviewReader ranges = new AdmissionReviewReader(AdmissionReviews.JSON,
        List.of(AdmissionTarget.of(ServiceCIDR.OBJECT_KIND, ServiceCIDR.class, Operation.CREATE)));
    String kind = "\"kind\":{\"group\":\"subrange.io\",\"version\":\"v1alpha1\",\"kind\":\"ServiceCIDR\"}";
    String object = "\"object\":{\"apiVersion\":\"subrange.io/v1alpha1\",\"kind\":\"Foo\","
        + "\"metadata\":{\"name\":\"x\"}}";
    for (String request : List.of(kind + "," + object, object + "," + kind)) {
      byte[] body = review("\"uid\":\"u\",\"operation\":\"CREATE\"," + request);
      assertThatThrownBy(() -> ranges.read(body))
          .isInstanceOf(MalformedAdmissionReviewException.class)
          .hasMessage("request.object is subrange.io/v1alpha1 Foo, but request.kind says " + ServiceCIDR.OBJECT_KIND);
    }
  }

  /** Broken JSON deep inside the object is the body's fault, as when the object was read from a tree. */
  @Test
  void brokenJsonInsideTheObjectIsSaidToBeTheBodys() {
    byte[] body = review(SERVICE_CREATE + "\"object\":{\"kind\":\"Service\",\"spec\":{\"ports\":[{\"port\":80,]}}");
    assertThatThrownBy(() -> reader.read(body))
        .isInstanceOf(MalformedAdmissionReviewException.class).hasMessageStartingWith("body is not JSON: ")
        .hasMessageContaining("at line 1, column");
  }

  @Test
  void anObjectThatIsNotAnObjectOrABodyNotInUtf8IsRefusedSayingSo() {
    byte[] notAnObject = review(SERVICE_CREATE + "\"object\":[1,2]");
    assertThatThrownBy(() -> reader.read(notAnObject))
        .isInstanceOf(MalformedAdmissionReviewException.class).hasMessage("request.object is not a JSON object");
    String review = AdmissionReviews.update(AdmissionReviews.service("ns", "web", "ClusterIP", null),
        AdmissionReviews.service("ns", "web", "ClusterIP", null), false).toString();
    assertThatThrownBy(() -> reader.read(review.getBytes(StandardCharsets.UTF_16BE)))
        .isInstanceOf(MalformedAdmissionReviewException.class).hasMessage("body is not UTF-8 JSON");
  }

  /** A Service CREATE's request fields but its object. */
  private static final String SERVICE_CREATE =
      "\"uid\":\"u\",\"kind\":{\"version\":\"v1\",\"kind\":\"Service\"},\"operation\":\"CREATE\",";

  /** An AdmissionReview around these request fields, as JSON text. */
  private static byte[] review(String requestFields) {
    return ("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{" + requestFields + "}}")
        .getBytes(StandardCharsets.UTF_8);
  }

  /** The object as the model writes it. */
  private static JsonNode modelled(Service service) {
    return AdmissionReviews.JSON.valueToTree(service);
  }

  private static ObjectNode withManagedFields(ObjectNode object) {
    ((ObjectNode) object.path("metadata")).putArray("managedFields").addObject()
        .put("manager", "kubectl-create").put("operation", "Update").put("fieldsType", "FieldsV1")
        .putObject("fieldsV1").putObject("f:spec").putObject("f:type");
    return object;
  }
}
