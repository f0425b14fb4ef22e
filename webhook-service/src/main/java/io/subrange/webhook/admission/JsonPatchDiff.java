package io.subrange.webhook.admission;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Iterator;
import java.util.Map;

/**
 * The JSON Patch (RFC 6902) that turns one tree into another, written out operation by operation
 * as the trees are compared: objects field by field, arrays of the same length element by element,
 * anything else that differs replaced whole. Only {@code add}, {@code remove} and {@code replace}:
 * an array whose length changed is replaced rather than edited element by element, which is as
 * valid and, for what admission changes, as short.
 *
 * <p>subrange's own because the general differ it replaced (zjsonpatch, with longest common
 * subsequences over arrays) built a tree of operations that was then written out again, on every
 * create: see docs/performance.md, "Nineteenth round".
 */
final class JsonPatchDiff {

  private JsonPatchDiff() {
  }

  /**
   * The JSON Patch from {@code before} to {@code after}, its paths under {@code path} (a JSON
   * Pointer, "" for the root), as JSON; null when the two are equal.
   */
  static byte[] patch(ObjectMapper mapper, String path, JsonNode before, JsonNode after) {
    ByteArrayOutputStream json = new ByteArrayOutputStream(256);
    try (JsonGenerator out = mapper.createGenerator(json)) {
      out.writeStartArray();
      int operations = write(out, path, before, after);
      out.writeEndArray();
      out.flush();
      return operations == 0 ? null : json.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException("a JSON Patch could not be written", e);
    }
  }

  /** Writes the operations from {@code before} to {@code after} under {@code path}; returns how many. */
  private static int write(JsonGenerator out, String path, JsonNode before, JsonNode after) throws IOException {
    // Containers are walked rather than compared whole first: an equality check at every level
    // would compare the same subtrees again at each level below.
    if (before.isObject() && after.isObject()) {
      return objects(out, path, before, after);
    }
    if (before.isArray() && after.isArray() && before.size() == after.size()) {
      int written = 0;
      for (int i = 0; i < before.size(); i++) {
        written += write(out, path + "/" + i, before.get(i), after.get(i));
      }
      return written;
    }
    if (before.equals(after)) {
      return 0;
    }
    operation(out, "replace", path, after);
    return 1;
  }

  private static int objects(JsonGenerator out, String path, JsonNode before, JsonNode after) throws IOException {
    int written = 0;
    for (Iterator<String> names = before.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!after.has(name)) {
        operation(out, "remove", path + "/" + escape(name), null);
        written++;
      }
    }
    for (Iterator<Map.Entry<String, JsonNode>> fields = after.fields(); fields.hasNext(); ) {
      Map.Entry<String, JsonNode> field = fields.next();
      String at = path + "/" + escape(field.getKey());
      JsonNode was = before.get(field.getKey());
      if (was == null) {
        operation(out, "add", at, field.getValue());
        written++;
      } else {
        written += write(out, at, was, field.getValue());
      }
    }
    return written;
  }

  private static void operation(JsonGenerator out, String op, String path, JsonNode value) throws IOException {
    out.writeStartObject();
    out.writeStringField("op", op);
    out.writeStringField("path", path);
    if (value != null) {
      out.writeFieldName("value");
      out.writeTree(value);
    }
    out.writeEndObject();
  }

  /** A field name as a JSON Pointer token: "~" and "/" escaped, as in "app.kubernetes.io~1name". */
  private static String escape(String name) {
    if (name.indexOf('~') < 0 && name.indexOf('/') < 0) {
      return name;
    }
    return name.replace("~", "~0").replace("/", "~1");
  }
}
