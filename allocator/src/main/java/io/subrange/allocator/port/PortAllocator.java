package io.subrange.allocator.port;

import io.subrange.allocator.band.AllocationBitmap;
import io.subrange.allocator.band.BandedAllocator;
import io.subrange.allocator.band.RangeUsage;
import io.subrange.allocator.band.StartStrategy;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.function.IntConsumer;

/**
 * NodePorts of one {@link PortRange}, with the KEP-3668 band: dynamic allocation uses the ports
 * above the static band first; a requested port may be any free port in the range. Its snapshot
 * is RangeAllocation data (bit i = port first+i). Thread-safe.
 */
public final class PortAllocator {

  private final PortRange range;
  private final BandedAllocator bits;

  public PortAllocator(PortRange range, StartStrategy starts) {
    this.range = range;
    this.bits = new AllocationBitmap(range.size(), range.staticBandSize(), starts);
  }

  public PortRange range() {
    return range;
  }

  /**
   * Takes {@code port}; false when it is already taken.
   *
   * @throws IllegalArgumentException when the port is outside the range
   */
  public synchronized boolean allocate(int port) {
    return bits.allocate(offsetOf(port));
  }

  /** Takes a free port, dynamic band first; -1 when the range is full. */
  public synchronized int allocateNext() {
    long offset = bits.allocateNext();
    return offset < 0 ? -1 : range.first() + (int) offset;
  }

  /** The port {@link #allocateNext} would take, without taking it; -1 when full. */
  public synchronized int peekNext() {
    long offset = bits.peekNext();
    return offset < 0 ? -1 : range.first() + (int) offset;
  }

  /** Frees {@code port}; false when it was not taken. */
  public synchronized boolean release(int port) {
    return bits.release(offsetOf(port));
  }

  public synchronized boolean isAllocated(int port) {
    return bits.isAllocated(offsetOf(port));
  }

  public synchronized RangeUsage usage() {
    return new RangeUsage(range.toString(), range.size(), range.staticBandSize(), bits.used(), bits.usedInStaticBand());
  }

  /** Calls {@code action} with every taken port. */
  public synchronized void forEachTaken(IntConsumer action) {
    bits.forEachAllocated(offset -> action.accept(range.first() + (int) offset));
  }

  /** The taken ports of the static band, in order (at most 128). */
  public synchronized List<Integer> takenInStaticBand() {
    List<Integer> taken = new ArrayList<>();
    for (int offset = 0; offset < range.staticBandSize(); offset++) {
      if (bits.isAllocated(offset)) {
        taken.add(range.first() + offset);
      }
    }
    return taken;
  }

  /** Calls {@code action} with the taken ports at offsets {@code [from, to)} of the range, in order. */
  public synchronized void forEachTakenIn(long from, long to, IntConsumer action) {
    bits.forEachAllocatedIn(from, to, offset -> action.accept(range.first() + (int) offset));
  }

  /** Makes offsets {@code [from, to)} hold exactly {@code taken} (bit i is offset {@code from + i}). */
  public synchronized void replaceIn(long from, long to, BitSet taken) {
    bits.replaceIn(from, to, taken);
  }

  public synchronized byte[] snapshot() {
    return bits.snapshot();
  }

  public synchronized void restore(byte[] data) {
    bits.restore(data);
  }

  private long offsetOf(int port) {
    if (!range.contains(port)) {
      throw new IllegalArgumentException("port " + port + " is not in the NodePort range " + range);
    }
    return port - range.first();
  }
}
