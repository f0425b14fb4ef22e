package io.subrange.allocator.podcidr;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpFamily;
import java.util.Optional;

/**
 * The per-node blocks of one cluster CIDR: {@code 10.0.0.0/16} split into {@code /24} blocks
 * is 256 blocks, numbered from the low end.
 *
 * <p>Allocation works like Kubernetes' {@code nodeipam/ipam/cidrset}: the next candidate is the
 * block after the one handed out last, and the search wraps around to the first block.
 * {@link #occupy(Cidr)} and {@link #release(Cidr)} take a CIDR of any size that overlaps the
 * cluster CIDR: a node's block, a larger CIDR (every block inside it), or a smaller one such as
 * a Service range (the block holding it, so that block is never handed out).
 *
 * <p>Occupied blocks are kept as intervals of block indexes, not as one bit per block, so IPv6
 * splits far deeper than upstream's 16 bits work ({@code /32} into {@code /64} blocks is 2^32
 * blocks) while memory follows the number of gaps between occupied runs. The split is capped
 * at {@link #MAX_SPLIT_BITS} so every count and index is a non-negative {@code long}.
 *
 * <p>Thread-safe.
 */
public final class CidrSet {

  /** Most bits between the cluster prefix and the node prefix: 2^62 blocks. */
  public static final int MAX_SPLIT_BITS = 62;

  private final Cidr clusterCidr;
  private final int nodePrefixLength;
  private final long blockCount;
  private final LongIntervalSet occupied = new LongIntervalSet();
  private long nextCandidate;

  /**
   * The blocks of {@code clusterCidr} with prefix length {@code nodePrefixLength}.
   *
   * @throws IllegalArgumentException when the node prefix does not fit inside the cluster
   *     CIDR, or splits it into more than 2^{@value #MAX_SPLIT_BITS} blocks
   */
  public CidrSet(Cidr clusterCidr, int nodePrefixLength) {
    checkSplit(clusterCidr, nodePrefixLength);
    this.clusterCidr = clusterCidr;
    this.nodePrefixLength = nodePrefixLength;
    this.blockCount = 1L << (nodePrefixLength - clusterCidr.prefixLength());
  }

  static void checkSplit(Cidr clusterCidr, int nodePrefixLength) {
    int bits = clusterCidr.family().bits();
    if (nodePrefixLength < clusterCidr.prefixLength() || nodePrefixLength > bits) {
      throw new IllegalArgumentException("node prefix /" + nodePrefixLength + " does not fit " + clusterCidr
          + ": use a prefix from /" + clusterCidr.prefixLength() + " to /" + bits);
    }
    int split = nodePrefixLength - clusterCidr.prefixLength();
    if (split > MAX_SPLIT_BITS) {
      throw new IllegalArgumentException(clusterCidr + " split into /" + nodePrefixLength + " blocks is 2^"
          + split + " blocks; at most 2^" + MAX_SPLIT_BITS + " are supported (at most " + MAX_SPLIT_BITS
          + " bits between cluster and node prefix: use /" + (clusterCidr.prefixLength() + MAX_SPLIT_BITS)
          + " or shorter node blocks, or a smaller cluster CIDR)");
    }
  }

  public Cidr clusterCidr() {
    return clusterCidr;
  }

  public int nodePrefixLength() {
    return nodePrefixLength;
  }

  public IpFamily family() {
    return clusterCidr.family();
  }

  /** Number of node blocks: 2^(node prefix - cluster prefix). */
  public long blockCount() {
    return blockCount;
  }

  /** Blocks occupied, whether handed out or marked by {@link #occupy}. */
  public synchronized long allocated() {
    return occupied.size();
  }

  public synchronized long free() {
    return blockCount - occupied.size();
  }

  /** Takes the next free block after the last one handed out, wrapping; empty when full. */
  public synchronized Optional<Cidr> allocateNext() {
    long index = nextFreeIndexWrapping();
    if (index < 0) {
      return Optional.empty();
    }
    take(index);
    return Optional.of(blockAt(index));
  }

  /** The block {@link #allocateNext()} would take now, without taking it. */
  public synchronized Optional<Cidr> peekNext() {
    long index = nextFreeIndexWrapping();
    return index < 0 ? Optional.empty() : Optional.of(blockAt(index));
  }

  /**
   * Marks every block that {@code cidr} touches as occupied; occupying a block twice is fine.
   * Returns how many blocks were free before.
   *
   * @throws IllegalArgumentException when {@code cidr} is of another family or does not
   *     overlap the cluster CIDR
   */
  public synchronized long occupy(Cidr cidr) {
    long[] range = indexRange(cidr);
    return occupied.add(range[0], range[1]);
  }

  /**
   * Frees every block that {@code cidr} touches; releasing a free block is fine. Returns how
   * many blocks were occupied before.
   *
   * @throws IllegalArgumentException when {@code cidr} is of another family or does not
   *     overlap the cluster CIDR
   */
  public synchronized long release(Cidr cidr) {
    long[] range = indexRange(cidr);
    return occupied.remove(range[0], range[1]);
  }

  /** True when every block that {@code cidr} touches is occupied. */
  public synchronized boolean isOccupied(Cidr cidr) {
    long[] range = indexRange(cidr);
    return occupied.nextAbsent(range[0]) > range[1];
  }

  /** Block number {@code index}, counting from 0 at the cluster CIDR's network address. */
  public Cidr blockAt(long index) {
    if (index < 0 || index >= blockCount) {
      throw new IndexOutOfBoundsException("block " + index + " is outside " + this + " (0.." + (blockCount - 1) + ")");
    }
    return Cidr.containing(Blocks.blockAddress(clusterCidr, nodePrefixLength, index), nodePrefixLength);
  }

  /**
   * The state as bytes: which blocks are occupied and where the next search starts. The size
   * grows with the number of occupied runs, not with the number of blocks. The cluster CIDR and
   * node prefix are part of it, so it restores only into an equal set.
   */
  public synchronized byte[] snapshot() {
    return CidrSetCodec.encode(clusterCidr, nodePrefixLength, nextCandidate, occupied);
  }

  /**
   * Replaces the state with a {@link #snapshot()}. Nothing changes when the bytes are refused.
   *
   * @throws IllegalArgumentException when the bytes are malformed, were taken from another
   *     set, or name blocks outside this one
   */
  public synchronized void restore(byte[] data) {
    CidrSetCodec.Decoded decoded = CidrSetCodec.decode(data, clusterCidr, nodePrefixLength, blockCount);
    occupied.clear();
    decoded.intervals().forEach(occupied::add);
    nextCandidate = decoded.nextCandidate();
  }

  /** [first, last] block indexes that {@code cidr} touches; validates family and overlap. */
  long[] indexRange(Cidr cidr) {
    if (cidr.family() != family()) {
      throw new IllegalArgumentException(cidr + " is " + cidr.family() + " but the cluster CIDR " + clusterCidr
          + " is " + family());
    }
    if (!clusterCidr.overlaps(cidr)) {
      throw new IllegalArgumentException(cidr + " does not overlap the cluster CIDR " + clusterCidr);
    }
    if (cidr.prefixLength() <= clusterCidr.prefixLength()) {
      return new long[] {0, blockCount - 1};
    }
    long first = Blocks.blockIndex(clusterCidr, nodePrefixLength, cidr.network());
    if (cidr.prefixLength() >= nodePrefixLength) {
      return new long[] {first, first};
    }
    return new long[] {first, first + (1L << (nodePrefixLength - cidr.prefixLength())) - 1};
  }

  synchronized long nextCandidate() {
    return nextCandidate;
  }

  /** The first free index at or after {@code from}, or -1 when there is none before the end. */
  synchronized long nextFreeIndex(long from) {
    long index = occupied.nextAbsent(from);
    return index < blockCount ? index : -1;
  }

  /** Occupies one block and moves the next candidate past it, as a handed-out block does. */
  synchronized void take(long index) {
    occupied.add(index, index);
    nextCandidate = index + 1 == blockCount ? 0 : index + 1;
  }

  synchronized int intervalCount() {
    return occupied.intervalCount();
  }

  private long nextFreeIndexWrapping() {
    long index = nextFreeIndex(nextCandidate);
    return index >= 0 || nextCandidate == 0 ? index : nextFreeIndex(0);
  }

  /** "10.0.0.0/16 split into /24 blocks". */
  @Override
  public String toString() {
    return clusterCidr + " split into /" + nodePrefixLength + " blocks";
  }
}
