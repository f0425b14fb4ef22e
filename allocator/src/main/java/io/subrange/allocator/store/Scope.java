package io.subrange.allocator.store;

import java.util.Locale;

/** How a value was asked for: named by the object (static) or picked by subrange (dynamic). */
public enum Scope {
  STATIC,
  DYNAMIC;

  /** "static" / "dynamic", the metric label value kube-apiserver uses. */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }
}
