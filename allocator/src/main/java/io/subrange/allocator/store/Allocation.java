package io.subrange.allocator.store;

/**
 * A value the store holds, for the reconciler: a ClusterIP, a NodePort, or a node's pod CIDRs
 * (value "10.244.1.0/24,fd00::100/120", holder the Node).
 *
 * @param holder who holds it; null when the store does not know (loaded without a holder)
 * @param sinceEpochSeconds when it was taken
 */
public record Allocation(RangeKey.Kind kind, String value, Holder holder, long sinceEpochSeconds) {
}
