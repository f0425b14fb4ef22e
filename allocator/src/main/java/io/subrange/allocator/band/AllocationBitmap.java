package io.subrange.allocator.band;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.function.LongConsumer;

/**
 * A {@link BandedAllocator} holding one bit per offset, for ranges up to {@link #MAX_SIZE}.
 *
 * <p>Beside the bits it keeps a summary with one bit per 64-bit word, set while that word
 * still has a free offset. A scan for a free offset looks at one word, then jumps through the
 * summary to the next word with room, so allocation stays fast when the range is nearly full
 * instead of walking millions of taken bits.
 */
public final class AllocationBitmap implements BandedAllocator {

  /** Largest range held as a bitmap: 2^24 offsets is 2 MiB of bits. */
  public static final long MAX_SIZE = 1L << 24;

  private final int size;
  private final int staticBandSize;
  private final StartStrategy starts;
  /** Bit i of the range is bit (i & 63) of words[i >>> 6]; bits past {@code size} stay set. */
  private final long[] words;
  /** Bit w is set while words[w] has a clear bit. */
  private final long[] wordsWithRoom;
  private int used;
  private int usedInStaticBand;

  public AllocationBitmap(long size, long staticBandSize, StartStrategy starts) {
    if (size <= 0 || size > MAX_SIZE) {
      throw new IllegalArgumentException("bitmap size must be 1.." + MAX_SIZE + ", not " + size);
    }
    if (staticBandSize < 0 || staticBandSize > size) {
      throw new IllegalArgumentException("static band " + staticBandSize + " does not fit size " + size);
    }
    this.size = (int) size;
    this.staticBandSize = (int) staticBandSize;
    this.starts = starts;
    this.words = new long[(this.size + 63) >>> 6];
    this.wordsWithRoom = new long[(words.length + 63) >>> 6];
    clear();
  }

  @Override
  public void clear() {
    Arrays.fill(words, 0L);
    int tail = size & 63;
    if (tail != 0) {
      words[words.length - 1] = -1L << tail;  // offsets past the end are never free
    }
    Arrays.fill(wordsWithRoom, 0L);
    for (int w = 0; w < words.length; w++) {
      wordsWithRoom[w >>> 6] |= 1L << w;
    }
    used = 0;
    usedInStaticBand = 0;
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
    int bit = checkIndex(offset);
    int w = bit >>> 6;
    long mask = 1L << bit;
    if ((words[w] & mask) != 0) {
      return false;
    }
    words[w] |= mask;
    if (words[w] == -1L) {
      wordsWithRoom[w >>> 6] &= ~(1L << w);
    }
    used++;
    if (bit < staticBandSize) {
      usedInStaticBand++;
    }
    return true;
  }

  @Override
  public long allocateNext() {
    long offset = peekNext();
    if (offset >= 0) {
      allocate(offset);
    }
    return offset;
  }

  @Override
  public long peekNext() {
    long found = scanBand(staticBandSize, size);
    return found >= 0 ? found : scanBand(0, staticBandSize);
  }

  /** A free offset in [from, to): from the strategy's start, forward, wrapping inside the band. */
  private long scanBand(int from, int to) {
    if (from >= to) {
      return -1;
    }
    int start = from + starts.startIn(to - from);
    int found = nextFree(start, to);
    if (found < 0 && start > from) {
      found = nextFree(from, start);
    }
    return found;
  }

  /** The first free offset in [from, to), or -1. */
  private int nextFree(int from, int to) {
    int w = from >>> 6;
    long room = ~words[w] & (-1L << from);  // shift uses the low 6 bits of from
    if (room == 0) {
      w = nextWordWithRoom(w + 1, (to - 1) >>> 6);
      if (w < 0) {
        return -1;
      }
      room = ~words[w];
    }
    int bit = (w << 6) + Long.numberOfTrailingZeros(room);
    return bit < to ? bit : -1;
  }

  /** The first word index in [fromWord, lastWord] with a free bit, or -1. */
  private int nextWordWithRoom(int fromWord, int lastWord) {
    if (fromWord > lastWord) {
      return -1;
    }
    int s = fromWord >>> 6;
    long candidates = wordsWithRoom[s] & (-1L << fromWord);
    while (candidates == 0) {
      s++;
      if ((s << 6) > lastWord) {
        return -1;
      }
      candidates = wordsWithRoom[s];
    }
    int w = (s << 6) + Long.numberOfTrailingZeros(candidates);
    return w <= lastWord ? w : -1;
  }

  @Override
  public boolean release(long offset) {
    int bit = checkIndex(offset);
    int w = bit >>> 6;
    long mask = 1L << bit;
    if ((words[w] & mask) == 0) {
      return false;
    }
    words[w] &= ~mask;
    wordsWithRoom[w >>> 6] |= 1L << w;
    used--;
    if (bit < staticBandSize) {
      usedInStaticBand--;
    }
    return true;
  }

  @Override
  public boolean isAllocated(long offset) {
    int bit = checkIndex(offset);
    return (words[bit >>> 6] & (1L << bit)) != 0;
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
    for (int w = 0; w < words.length; w++) {
      long bits = valueBits(w);
      while (bits != 0) {
        action.accept(((long) w << 6) + Long.numberOfTrailingZeros(bits));
        bits &= bits - 1;
      }
    }
  }

  @Override
  public void forEachAllocatedIn(long from, long to, LongConsumer action) {
    long end = Math.min(to, size);
    if (from < 0 || from >= end) {
      return;
    }
    for (int w = (int) (from >>> 6); w <= (int) ((end - 1) >>> 6); w++) {
      long bits = valueBits(w);
      while (bits != 0) {
        long offset = ((long) w << 6) + Long.numberOfTrailingZeros(bits);
        if (offset >= from && offset < end) {
          action.accept(offset);
        }
        bits &= bits - 1;
      }
    }
  }

  @Override
  public byte[] snapshot() {
    int top = words.length - 1;
    while (top >= 0 && valueBits(top) == 0) {
      top--;
    }
    if (top < 0) {
      return new byte[0];
    }
    long topWord = valueBits(top);
    int topBytes = (64 - Long.numberOfLeadingZeros(topWord) + 7) >>> 3;
    byte[] out = new byte[top * 8 + topBytes];
    for (int i = 0; i < topBytes; i++) {
      out[i] = (byte) (topWord >>> ((topBytes - 1 - i) * 8));
    }
    ByteBuffer buffer = ByteBuffer.wrap(out, topBytes, top * 8);
    for (int w = top - 1; w >= 0; w--) {
      buffer.putLong(words[w]);
    }
    return out;
  }

  @Override
  public void restore(byte[] data) {
    int maxBytes = (size + 7) >>> 3;
    int start = 0;
    while (start < data.length && data[start] == 0) {
      start++;  // tolerate non-minimal encodings
    }
    int length = data.length - start;
    if (length > maxBytes) {
      throw new IllegalArgumentException("snapshot of " + length + " bytes does not fit a range of "
          + size + " offsets");
    }
    long[] restored = new long[words.length];
    int fullWords = length >>> 3;
    ByteBuffer buffer = ByteBuffer.wrap(data);
    for (int w = 0; w < fullWords; w++) {
      restored[w] = buffer.getLong(data.length - 8 * (w + 1));
    }
    int rest = length & 7;
    if (rest != 0) {
      long partial = 0;
      for (int i = start; i < start + rest; i++) {
        partial = (partial << 8) | (data[i] & 0xFF);
      }
      restored[fullWords] = partial;
    }
    int tail = size & 63;
    if (tail != 0 && (restored[words.length - 1] & (-1L << tail)) != 0) {
      throw new IllegalArgumentException("snapshot names offsets beyond the range size " + size);
    }
    clear();
    for (int w = 0; w < words.length; w++) {
      words[w] |= restored[w];
      if (words[w] == -1L) {
        wordsWithRoom[w >>> 6] &= ~(1L << w);
      }
      used += Long.bitCount(restored[w]);
    }
    usedInStaticBand = countBelow(staticBandSize);
  }

  private int countBelow(int limit) {
    int count = 0;
    int fullWords = limit >>> 6;
    for (int w = 0; w < fullWords; w++) {
      count += Long.bitCount(words[w]);
    }
    int rest = limit & 63;
    if (rest != 0) {
      count += Long.bitCount(words[fullWords] & ((1L << rest) - 1));
    }
    return count;
  }

  /** words[w] without the always-set padding past the end of the range. */
  private long valueBits(int w) {
    int tail = size & 63;
    return (w == words.length - 1 && tail != 0) ? words[w] & ((1L << tail) - 1) : words[w];
  }

  private int checkIndex(long offset) {
    if (offset < 0 || offset >= size) {
      throw new IndexOutOfBoundsException("offset " + offset + " is outside 0.." + (size - 1));
    }
    return (int) offset;
  }
}
