package io.subrange.allocator.podcidr;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * The byte form of a {@link CidrSet}.
 *
 * <pre>
 *   version           1 byte, 1
 *   family            1 byte, 4 or 6
 *   cluster network   4 or 16 bytes, network order
 *   cluster prefix    1 byte
 *   node prefix       1 byte
 *   next candidate    varint
 *   run count         varint
 *   per run           varint gap, varint (length - 1)
 * </pre>
 *
 * Runs are the occupied intervals in order. The first gap is the first run's start; each later
 * gap is the number of free blocks between two runs minus one, so runs can neither overlap nor
 * touch and every state has exactly one encoding. Varints are unsigned LEB128, minimal.
 */
final class CidrSetCodec {

  private static final int VERSION = 1;

  private CidrSetCodec() {
  }

  record Decoded(long nextCandidate, NavigableMap<Long, Long> intervals) {
  }

  static byte[] encode(Cidr cluster, int nodePrefix, long nextCandidate, LongIntervalSet occupied) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(32 + 4 * occupied.intervalCount());
    out.write(VERSION);
    out.write(cluster.family() == IpFamily.IPV4 ? 4 : 6);
    out.writeBytes(cluster.network().toBytes());
    out.write(cluster.prefixLength());
    out.write(nodePrefix);
    writeVarint(out, nextCandidate);
    writeVarint(out, occupied.intervalCount());
    long previousEnd = -2;  // so the first gap is the first start
    for (Map.Entry<Long, Long> run : occupied.intervals().entrySet()) {
      writeVarint(out, run.getKey() - previousEnd - 2);
      writeVarint(out, run.getValue() - run.getKey());
      previousEnd = run.getValue();
    }
    return out.toByteArray();
  }

  static Decoded decode(byte[] data, Cidr cluster, int nodePrefix, long blockCount) {
    Reader in = new Reader(data);
    int version = in.readByte();
    if (version != VERSION) {
      throw new IllegalArgumentException("snapshot format version " + version + " is not supported (expected "
          + VERSION + ")");
    }
    int familyMark = in.readByte();
    if (familyMark != 4 && familyMark != 6) {
      throw new IllegalArgumentException("snapshot names IP family " + familyMark + "; expected 4 or 6");
    }
    byte[] network = in.readBytes(familyMark == 4 ? 4 : 16);
    int clusterPrefix = in.readByte();
    int savedNodePrefix = in.readByte();
    boolean sameSet = (familyMark == 4) == (cluster.family() == IpFamily.IPV4)
        && Arrays.equals(network, cluster.network().toBytes())
        && clusterPrefix == cluster.prefixLength() && savedNodePrefix == nodePrefix;
    if (!sameSet) {
      throw new IllegalArgumentException("snapshot is of another set (" + describe(familyMark, network, clusterPrefix)
          + " split into /" + savedNodePrefix + " blocks), not of " + cluster + " split into /" + nodePrefix
          + " blocks");
    }
    long nextCandidate = in.readVarint();
    if (nextCandidate >= blockCount) {
      throw new IllegalArgumentException("snapshot names next candidate block " + nextCandidate + " but "
          + cluster + " has only " + blockCount + " /" + nodePrefix + " blocks");
    }
    long runs = in.readVarint();
    if (runs > in.remaining() / 2) {  // each run takes at least two bytes
      throw new IllegalArgumentException("snapshot is truncated: it announces " + runs + " occupied runs");
    }
    TreeMap<Long, Long> intervals = new TreeMap<>();
    long previousEnd = -2;
    for (long i = 0; i < runs; i++) {
      long gap = in.readVarint();
      long lengthMinusOne = in.readVarint();
      long start = previousEnd + 2 + gap;
      if (gap >= blockCount || start >= blockCount || lengthMinusOne >= blockCount - start) {
        throw new IllegalArgumentException("snapshot names blocks beyond the last block (" + (blockCount - 1)
            + ") of " + cluster + " split into /" + nodePrefix + " blocks");
      }
      long end = start + lengthMinusOne;
      intervals.put(start, end);
      previousEnd = end;
    }
    if (in.remaining() != 0) {
      throw new IllegalArgumentException("snapshot has " + in.remaining() + " unexpected bytes after its end");
    }
    return new Decoded(nextCandidate, intervals);
  }

  private static String describe(int familyMark, byte[] network, int prefix) {
    ByteBuffer bytes = ByteBuffer.wrap(network);
    IpAddress address = familyMark == 4 ? IpAddress.ipv4(Integer.toUnsignedLong(bytes.getInt()))
        : IpAddress.ipv6(bytes.getLong(), bytes.getLong());
    return address + "/" + prefix;
  }

  private static void writeVarint(ByteArrayOutputStream out, long value) {
    long v = value;
    while ((v & ~0x7FL) != 0) {
      out.write((int) ((v & 0x7F) | 0x80));
      v >>>= 7;
    }
    out.write((int) v);
  }

  private static final class Reader {
    private final byte[] data;
    private int position;

    Reader(byte[] data) {
      if (data == null || data.length == 0) {
        throw new IllegalArgumentException("snapshot is empty");
      }
      this.data = data;
    }

    int remaining() {
      return data.length - position;
    }

    int readByte() {
      if (position >= data.length) {
        throw new IllegalArgumentException("snapshot is truncated after " + data.length + " bytes");
      }
      return data[position++] & 0xFF;
    }

    byte[] readBytes(int n) {
      if (remaining() < n) {
        throw new IllegalArgumentException("snapshot is truncated after " + data.length + " bytes");
      }
      byte[] bytes = Arrays.copyOfRange(data, position, position + n);
      position += n;
      return bytes;
    }

    /** A minimal unsigned LEB128 value below 2^63. */
    long readVarint() {
      long value = 0;
      for (int shift = 0; shift < 63; shift += 7) {
        int b = readByte();
        value |= (long) (b & 0x7F) << shift;
        if ((b & 0x80) == 0) {
          if (b == 0 && shift > 0) {
            throw new IllegalArgumentException("snapshot holds a number in a non-minimal encoding");
          }
          return value;
        }
      }
      throw new IllegalArgumentException("snapshot holds a number of more than 63 bits");
    }
  }
}
