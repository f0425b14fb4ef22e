package io.subrange.webhook.ranges.view;

import java.nio.charset.StandardCharsets;
import org.springframework.boot.actuate.endpoint.Producible;
import org.springframework.util.MimeType;
import org.springframework.util.MimeTypeUtils;

/**
 * The two forms of {@code GET /ranges}, chosen by actuator from the Accept header: JSON whenever
 * the header allows it (absent, <code>&#42;/&#42;</code>, {@code application/json}, what browsers
 * send), the text layout when it allows {@code text/plain} but not JSON. A header that allows
 * neither gets 406.
 *
 * <p>Actuator ignores q-values and order: of the constants any accepted type matches, it takes
 * the one declared last. TEXT comes first so that <code>text/plain, &#42;/&#42;</code> and
 * {@code application/json, text/plain} still get JSON.
 */
public enum RangesFormat implements Producible<RangesFormat> {

  TEXT(new MimeType("text", "plain", StandardCharsets.UTF_8)),

  JSON(MimeTypeUtils.APPLICATION_JSON) {
    @Override
    public boolean isDefault() {
      return true;
    }
  };

  private final MimeType mimeType;

  RangesFormat(MimeType mimeType) {
    this.mimeType = mimeType;
  }

  @Override
  public MimeType getProducedMimeType() {
    return mimeType;
  }
}
