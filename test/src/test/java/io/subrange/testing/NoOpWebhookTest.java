package io.subrange.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/** The patching no-op's patch: one operation the API server can apply to any Service. */
class NoOpWebhookTest {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private static JsonNode json(String text) throws Exception {
    return MAPPER.readTree(text);
  }

  @Test
  void addsTheAnnotationsObjectWhenTheServiceHasNone() throws Exception {
    JsonNode patch = NoOpWebhook.annotate(json("{\"metadata\":{\"name\":\"svc-1\"}}"));

    // Adding to a map that is not there would fail in the API server; the whole map is added.
    assertThat(patch).isEqualTo(json(
        "[{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{\"subrange.io/no-op\":\"patched\"}}]"));
  }

  @Test
  void addsOneKeyWithItsSlashEscapedWhenTheServiceHasAnnotations() throws Exception {
    JsonNode patch = NoOpWebhook.annotate(json("{\"metadata\":{\"annotations\":{\"kept\":\"yes\"}}}"));

    // Replacing the map would drop "kept": the key alone is added, "/" written as "~1" (RFC 6901).
    assertThat(patch).isEqualTo(json(
        "[{\"op\":\"add\",\"path\":\"/metadata/annotations/subrange.io~1no-op\",\"value\":\"patched\"}]"));
  }
}
