package io.subrange.webhook.admission;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** What the reader hands on of a well-formed review (malformed ones: HostileInputTest, AdmissionEndpointTest). */
class AdmissionReviewReaderTest {

  private final AdmissionReviewReader reader = new AdmissionReviewReader(AdmissionReviews.JSON);

  @Test
  void objectsComeWithoutManagedFieldsAndOtherwiseWhole() {
    ObjectNode before = AdmissionReviews.service("ns", "web", "NodePort", "10.0.0.7");
    ObjectNode after = before.deepCopy();
    ((ObjectNode) after.path("metadata")).putObject("labels").put("tier", "front");
    ObjectNode review = AdmissionReviews.update(withManagedFields(before.deepCopy()), withManagedFields(after.deepCopy()),
        false);

    AdmissionCall call = reader.read(review.toString().getBytes(StandardCharsets.UTF_8));

    assertThat(call.object()).isEqualTo(after);
    assertThat(call.oldObject()).isEqualTo(before);
    assertThat(call.operation()).isEqualTo(Operation.UPDATE);
  }

  private static ObjectNode withManagedFields(ObjectNode object) {
    ((ObjectNode) object.path("metadata")).putArray("managedFields").addObject()
        .put("manager", "kubectl-create").put("operation", "Update").put("fieldsType", "FieldsV1")
        .putObject("fieldsV1").putObject("f:spec").putObject("f:type");
    return object;
  }
}
