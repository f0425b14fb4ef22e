package io.subrange.allocator.store;

/**
 * Who holds a value, since when (epoch seconds; re-arming moves it, and the reconciler's grace
 * counts from it), and since when that holder has held it at all (never moved). What a
 * {@link HolderLedger} keeps per value, and what a stored state's holder line says.
 */
record Held(Holder holder, long since, long first) {

  static Held from(Holder holder, long now) {
    return new Held(holder, now, now);
  }

  Held rearmed(long now) {
    return new Held(holder, now, first);
  }

  Held heldBy(Holder owner) {
    return new Held(owner, since, first);
  }
}
