package io.subrange.allocator.store;

import java.util.List;

/**
 * One range's allocation state as it is persisted: the allocator's bytes (RangeAllocation data for
 * bitmaps, the sparse or CidrSet encoding otherwise) and who holds each taken value since when.
 *
 * @param range the range as text ("10.96.0.0/12", "30000-32767", a ClusterCIDR's CIDRs)
 * @param encoding how {@code allocation} is encoded: {@value #RANGE_ALLOCATION},
 *     {@value #SPARSE} or {@value #NODE_LEDGER}
 * @param staticBandSize the static band the allocation was made with
 * @param allocation the allocator's bytes (empty for {@value #NODE_LEDGER}: its entries are the state)
 * @param entries every taken value with its holder; holder null when unknown (taken, but not
 *     through subrange, e.g. before a rebuild)
 */
public record RangeState(RangeKey key, String range, String encoding, long staticBandSize, byte[] allocation,
    List<Entry> entries) {

  /** Kubernetes' RangeAllocation data: bit i is offset i, as big-endian bytes. */
  public static final String RANGE_ALLOCATION = "rangeallocation-v1";
  /** Taken offsets as delta varints (IPv6 ranges too large for a bitmap). */
  public static final String SPARSE = "sparse-v1";
  /** Pod CIDRs: the entries (node to its blocks) are the whole state. */
  public static final String NODE_LEDGER = "node-ledger-v1";

  public RangeState {
    entries = List.copyOf(entries);
  }

  /**
   * A taken value: an address, a port, or for pod CIDRs the node's blocks
   * ("10.244.1.0/24,fd00::100/120").
   *
   * @param sinceEpochSeconds when it was taken or last re-armed (for the reconciler's grace period)
   * @param firstEpochSeconds when its holder first took it (re-arming stops a while after)
   */
  public record Entry(String value, Holder holder, long sinceEpochSeconds, long firstEpochSeconds) {

    /** An entry whose holder took it at {@code sinceEpochSeconds} and never re-armed it. */
    public Entry(String value, Holder holder, long sinceEpochSeconds) {
      this(value, holder, sinceEpochSeconds, sinceEpochSeconds);
    }
  }
}
