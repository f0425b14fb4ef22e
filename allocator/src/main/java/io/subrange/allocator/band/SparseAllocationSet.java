package io.subrange.allocator.band;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.function.LongConsumer;

/**
 * A {@link BandedAllocator} for ranges too large for one bit per offset: IPv6 Service ranges up
 * to a /64 (2^64-1 assignable addresses). It remembers only the taken offsets, in an
 * open-addressing hash set, so memory and snapshots grow with what is allocated, not with the
 * range.
 *
 * <p>Sizes and offsets are unsigned 64-bit values: a /64 has size 2^64-1, which reads as -1
 * as a signed long. Dynamic allocation asks its {@link StartStrategy} for a start inside the
 * dynamic band and takes the first free offset at or after it, wrapping inside the band, exactly
 * like the bitmap; at realistic fill the start itself is free, so it is O(1) expected.
 *
 * <p>Snapshot format (not RangeAllocation's bit array, which would be 2^64 bits): the count,
 * then the taken offsets in ascending unsigned order as deltas, all as unsigned LEB128 varints.
 */
public final class SparseAllocationSet implements BandedAllocator {

  /** Marks an empty slot. It is never an offset: the largest range's last offset is 2^64-2. */
  private static final long EMPTY = -1L;
  private static final int MIN_CAPACITY = 16;

  private final long size;
  private final long staticBandSize;
  private final StartStrategy starts;
  private long[] slots;
  private int used;
  private int usedInStaticBand;

  /**
   * @param size number of offsets, unsigned: up to 2^64-1 (pass -1 for a /64)
   * @param staticBandSize at most {@code size}
   */
  public SparseAllocationSet(long size, long staticBandSize, StartStrategy starts) {
    if (size == 0) {
      throw new IllegalArgumentException("size must be at least 1");
    }
    if (staticBandSize < 0 || Long.compareUnsigned(staticBandSize, size) > 0) {
      throw new IllegalArgumentException("static band " + staticBandSize + " does not fit size "
          + Long.toUnsignedString(size));
    }
    this.size = size;
    this.staticBandSize = staticBandSize;
    this.starts = starts;
    this.slots = emptySlots(MIN_CAPACITY);
  }

  @Override
  public long size() {
    return size;
  }

  @Override
  public long staticBandSize() {
    return staticBandSize;
  }

  @Override
  public boolean allocate(long offset) {
    checkOffset(offset);
    if (!insert(offset)) {
      return false;
    }
    if (Long.compareUnsigned(offset, staticBandSize) < 0) {
      usedInStaticBand++;
    }
    return true;
  }

  @Override
  public long allocateNext() {
    long offset = peekNext();
    if (offset != EMPTY) {
      allocate(offset);
    }
    return offset;
  }

  @Override
  public long peekNext() {
    long dynamicSize = size - staticBandSize;
    if (Long.compareUnsigned(used - usedInStaticBand, dynamicSize) < 0) {
      return scanBand(staticBandSize, dynamicSize);
    }
    if (usedInStaticBand < staticBandSize) {
      return scanBand(0, staticBandSize);
    }
    return EMPTY;
  }

  /** A free offset in [from, from + length) from the strategy's start, forward, wrapping; the band has room. */
  private long scanBand(long from, long length) {
    long start = starts.startInUnsigned(length);
    for (long i = 0; ; i++) {
      long at = from + Long.remainderUnsigned(start + i, length);
      if (!contains(at)) {
        return at;
      }
    }
  }

  @Override
  public boolean release(long offset) {
    checkOffset(offset);
    if (!remove(offset)) {
      return false;
    }
    if (Long.compareUnsigned(offset, staticBandSize) < 0) {
      usedInStaticBand--;
    }
    return true;
  }

  @Override
  public boolean isAllocated(long offset) {
    checkOffset(offset);
    return contains(offset);
  }

  @Override
  public long used() {
    return used;
  }

  @Override
  public long usedInStaticBand() {
    return usedInStaticBand;
  }

  @Override
  public void forEachAllocated(LongConsumer action) {
    for (long slot : slots.clone()) {  // a copy, so the action may change this set
      if (slot != EMPTY) {
        action.accept(slot);
      }
    }
  }

  @Override
  public byte[] snapshot() {
    long[] sorted = new long[used];
    int n = 0;
    for (long slot : slots) {
      if (slot != EMPTY) {
        sorted[n++] = slot ^ Long.MIN_VALUE;  // flip the sign bit: signed order = unsigned order
      }
    }
    Arrays.sort(sorted);
    for (int i = 0; i < sorted.length; i++) {
      sorted[i] ^= Long.MIN_VALUE;
    }
    return encodeSnapshot(sorted);
  }

  /** The offsets of a {@link #snapshot()}, ascending unsigned, without checking them against a size. */
  public static long[] decodeSnapshot(byte[] data) {
    int[] position = {0};
    long count = readVarint(data, position);
    if (count < 0 || count > data.length) {
      throw new IllegalArgumentException("sparse snapshot claims " + Long.toUnsignedString(count)
          + " offsets in " + data.length + " bytes");
    }
    long[] offsets = new long[(int) count];
    long previous = 0;
    for (int i = 0; i < count; i++) {
      previous += readVarint(data, position);
      offsets[i] = previous;
    }
    return offsets;
  }

  /** A snapshot holding exactly {@code offsets} (ascending unsigned, no repeats). */
  public static byte[] encodeSnapshot(long[] offsets) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(offsets.length * 9 + 5);
    writeVarint(out, offsets.length);
    long previous = 0;
    for (long offset : offsets) {
      writeVarint(out, offset - previous);
      previous = offset;
    }
    return out.toByteArray();
  }

  @Override
  public void clear() {
    slots = emptySlots(MIN_CAPACITY);
    used = 0;
    usedInStaticBand = 0;
  }

  @Override
  public void restore(byte[] data) {
    int[] position = {0};
    long count = readVarint(data, position);
    if (count < 0 || count > data.length) {
      throw new IllegalArgumentException("sparse snapshot claims " + Long.toUnsignedString(count)
          + " offsets in " + data.length + " bytes");
    }
    long[] restored = new long[(int) count];
    long previous = 0;
    for (int i = 0; i < count; i++) {
      long delta = readVarint(data, position);
      if (i > 0 && delta == 0) {
        throw new IllegalArgumentException("sparse snapshot repeats offset " + Long.toUnsignedString(previous));
      }
      long offset = previous + delta;
      if (i > 0 && Long.compareUnsigned(offset, previous) <= 0) {
        throw new IllegalArgumentException("sparse snapshot offsets overflow after " + Long.toUnsignedString(previous));
      }
      if (Long.compareUnsigned(offset, size) >= 0) {
        throw new IllegalArgumentException("sparse snapshot names offset " + Long.toUnsignedString(offset)
            + " beyond the range size " + Long.toUnsignedString(size));
      }
      restored[i] = offset;
      previous = offset;
    }
    if (position[0] != data.length) {
      throw new IllegalArgumentException("sparse snapshot has " + (data.length - position[0]) + " trailing bytes");
    }
    slots = emptySlots(capacityFor(restored.length));
    used = 0;
    usedInStaticBand = 0;
    for (long offset : restored) {
      allocate(offset);
    }
  }

  // --- the hash set: linear probing, no tombstones (removal shifts entries back) ---

  private boolean contains(long offset) {
    int mask = slots.length - 1;
    for (int i = slot(offset, mask); ; i = (i + 1) & mask) {
      long at = slots[i];
      if (at == EMPTY) {
        return false;
      }
      if (at == offset) {
        return true;
      }
    }
  }

  private boolean insert(long offset) {
    if ((used + 1) * 2 > slots.length) {
      rehash(slots.length * 2);
    }
    int mask = slots.length - 1;
    for (int i = slot(offset, mask); ; i = (i + 1) & mask) {
      long at = slots[i];
      if (at == offset) {
        return false;
      }
      if (at == EMPTY) {
        slots[i] = offset;
        used++;
        return true;
      }
    }
  }

  private boolean remove(long offset) {
    int mask = slots.length - 1;
    int i = slot(offset, mask);
    while (slots[i] != offset) {
      if (slots[i] == EMPTY) {
        return false;
      }
      i = (i + 1) & mask;
    }
    // Backward-shift deletion keeps every remaining entry reachable from its home slot.
    int hole = i;
    for (int j = (hole + 1) & mask; slots[j] != EMPTY; j = (j + 1) & mask) {
      int home = slot(slots[j], mask);
      boolean homeOutsideGap = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
      if (homeOutsideGap) {
        slots[hole] = slots[j];
        hole = j;
      }
    }
    slots[hole] = EMPTY;
    used--;
    if (slots.length > MIN_CAPACITY && used * 8 < slots.length) {
      rehash(slots.length / 2);
    }
    return true;
  }

  private void rehash(int capacity) {
    long[] old = slots;
    slots = emptySlots(capacity);
    int mask = capacity - 1;
    for (long offset : old) {
      if (offset != EMPTY) {
        int i = slot(offset, mask);
        while (slots[i] != EMPTY) {
          i = (i + 1) & mask;
        }
        slots[i] = offset;
      }
    }
  }

  /** Home slot: a strong 64-bit mix (murmur3's finalizer), since dynamic offsets cluster. */
  private static int slot(long offset, int mask) {
    long h = offset;
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    h ^= h >>> 33;
    return (int) h & mask;
  }

  private static long[] emptySlots(int capacity) {
    long[] slots = new long[capacity];
    Arrays.fill(slots, EMPTY);
    return slots;
  }

  private static int capacityFor(int count) {
    int capacity = MIN_CAPACITY;
    while (capacity < count * 2) {
      capacity *= 2;
    }
    return capacity;
  }

  private void checkOffset(long offset) {
    if (Long.compareUnsigned(offset, size) >= 0) {
      throw new IndexOutOfBoundsException("offset " + Long.toUnsignedString(offset) + " is outside 0.."
          + Long.toUnsignedString(size - 1));
    }
  }

  private static void writeVarint(ByteArrayOutputStream out, long value) {
    while ((value & ~0x7FL) != 0) {
      out.write((int) ((value & 0x7F) | 0x80));
      value >>>= 7;
    }
    out.write((int) value);
  }

  private static long readVarint(byte[] data, int[] position) {
    long value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (position[0] >= data.length) {
        throw new IllegalArgumentException("sparse snapshot ends inside a number");
      }
      byte b = data[position[0]++];
      value |= (long) (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        return value;
      }
    }
    throw new IllegalArgumentException("sparse snapshot has a number longer than 64 bits");
  }
}
