package io.subrange.webhook.admission;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.zjsonpatch.CompatibilityFlags;
import io.fabric8.zjsonpatch.JsonPatch;
import java.io.IOException;
import java.util.EnumSet;
import java.util.Random;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * {@link JsonPatchDiff} against an independent JSON Patch implementation (zjsonpatch's apply):
 * the patch from one random tree to another turns the first into the second. The trees share a
 * small vocabulary (names that need escaping among them), so they overlap and differ in places,
 * as an object before and after admission does.
 */
class JsonPatchDiffProperties {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String[] NAMES = {"spec", "ports", "clusterIP", "app.kubernetes.io/name", "a~b", ""};
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  @Property(tries = 2000)
  void thePatchTurnsOneTreeIntoTheOther(@ForAll long seed) throws IOException {
    Random random = new Random(seed);
    JsonNode before = tree(random, 0);
    JsonNode after = random.nextInt(4) == 0 ? edited(before, random) : tree(random, 0);

    JsonNode patch = diff(before, after);

    // Strict as kube-apiserver's applier: removing or replacing what is not there fails.
    assertThat(JsonPatch.apply(patch, before, EnumSet.of(CompatibilityFlags.FORBID_REMOVE_MISSING_OBJECT)))
        .isEqualTo(after);
    assertThat(patch).allSatisfy(op -> assertThat(op.get("op").asText()).isIn("add", "remove", "replace"));
  }

  @Property(tries = 500)
  void aTreeAgainstItselfGivesNoOperations(@ForAll long seed) throws IOException {
    JsonNode tree = tree(new Random(seed), 0);

    assertThat(JsonPatchDiff.patch(JSON, "", tree, tree.deepCopy())).isNull();
  }

  @Example
  void namesAreEscapedAsJsonPointerTokens() throws IOException {
    ObjectNode before = NODES.objectNode();
    before.putObject("labels").put("app.kubernetes.io/name", "web").put("a~b", "1");
    ObjectNode after = before.deepCopy();
    ((ObjectNode) after.get("labels")).put("app.kubernetes.io/name", "api").remove("a~b");

    JsonNode patch = diff(before, after);

    assertThat(patch).extracting(op -> op.get("op").asText() + " " + op.get("path").asText())
        .containsExactlyInAnyOrder("remove /labels/a~0b", "replace /labels/app.kubernetes.io~1name");
  }

  @Example
  void anArrayOfAnotherLengthIsReplacedWhole() throws IOException {
    ObjectNode before = NODES.objectNode();
    before.putArray("clusterIPs");
    ObjectNode after = NODES.objectNode();
    after.putArray("clusterIPs").add("10.96.0.10");

    assertThat(diff(before, after).toString())
        .isEqualTo("[{\"op\":\"replace\",\"path\":\"/clusterIPs\",\"value\":[\"10.96.0.10\"]}]");
  }

  /** The patch's operations; an empty array when there is no patch. */
  private static JsonNode diff(JsonNode before, JsonNode after) throws IOException {
    byte[] patch = JsonPatchDiff.patch(JSON, "", before, after);
    return patch == null ? NODES.arrayNode() : JSON.readTree(patch);
  }

  /** A random tree: mostly objects and arrays near the root, scalars deeper down. */
  private static JsonNode tree(Random random, int depth) {
    int choice = random.nextInt(depth >= 3 ? 5 : 8);
    return switch (choice) {
      case 0 -> NODES.nullNode();
      case 1 -> NODES.numberNode(random.nextInt(3));
      case 2 -> NODES.textNode(random.nextBoolean() ? "p" : "q");
      case 3 -> NODES.booleanNode(random.nextBoolean());
      case 4 -> NODES.textNode(NAMES[random.nextInt(NAMES.length)]);
      case 5 -> {
        ArrayNode array = NODES.arrayNode();
        for (int i = random.nextInt(4); i > 0; i--) {
          array.add(tree(random, depth + 1));
        }
        yield array;
      }
      default -> {
        ObjectNode object = NODES.objectNode();
        for (int i = random.nextInt(5); i > 0; i--) {
          object.set(NAMES[random.nextInt(NAMES.length)], tree(random, depth + 1));
        }
        yield object;
      }
    };
  }

  /** The tree with one to three of its values, anywhere in it, replaced by random ones. */
  private static JsonNode edited(JsonNode tree, Random random) {
    JsonNode copy = tree.deepCopy();
    for (int edits = 1 + random.nextInt(3); edits > 0; edits--) {
      JsonNode container = copy;
      while (container.size() > 0 && random.nextInt(3) > 0) {
        JsonNode child = container.isObject()
            ? container.get(NAMES[random.nextInt(NAMES.length)]) : container.get(random.nextInt(container.size()));
        if (child == null || !child.isContainerNode()) {
          break;
        }
        container = child;
      }
      if (container instanceof ObjectNode object) {
        object.set(NAMES[random.nextInt(NAMES.length)], tree(random, 2));
      } else if (container instanceof ArrayNode array && array.size() > 0) {
        array.set(random.nextInt(array.size()), tree(random, 2));
      }
    }
    return copy;
  }
}
