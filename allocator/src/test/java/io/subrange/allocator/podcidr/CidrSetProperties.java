package io.subrange.allocator.podcidr;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * The block set against a plain sorted set of block numbers, with block numbers and addresses
 * computed independently in {@link BigInteger}, under random operation sequences.
 */
class CidrSetProperties {

  /** A cluster CIDR and node prefix: family, cluster prefix, split bits, random network bits. */
  record Shape(IpFamily family, int clusterPrefix, int splitBits, long high, long low) {
    Cidr cluster() {
      IpAddress any = family == IpFamily.IPV4 ? IpAddress.ipv4(low & 0xFFFF_FFFFL) : IpAddress.ipv6(high, low);
      return Cidr.containing(any, clusterPrefix);
    }

    int nodePrefix() {
      return clusterPrefix + splitBits;
    }
  }

  enum Kind { NEXT, OCCUPY, RELEASE, OUTSIDE, SNAPSHOT_ROUND_TRIP }

  /** {@code prefixDelta} is relative to the node prefix; {@code index}, {@code offset} pick the address. */
  record Op(Kind kind, int prefixDelta, long index, long offset) {
  }

  @Provide
  Arbitrary<Shape> smallShapes() {
    Arbitrary<Shape> v4 = Combinators.combine(Arbitraries.integers().between(0, 8),
            Arbitraries.integers().between(0, 32), Arbitraries.longs())
        .as((split, prefix, bits) -> new Shape(IpFamily.IPV4, Math.min(prefix, 32 - split), split, 0, bits));
    Arbitrary<Shape> v6 = Combinators.combine(Arbitraries.integers().between(0, 8),
            Arbitraries.integers().between(0, 128), Arbitraries.longs(), Arbitraries.longs())
        .as((split, prefix, high, low) -> new Shape(IpFamily.IPV6, Math.min(prefix, 128 - split), split, high, low));
    // Prefixes around 56-72 put the block number across the two 64-bit halves.
    Arbitrary<Shape> straddling = Combinators.combine(Arbitraries.integers().between(1, 8),
            Arbitraries.integers().between(56, 66), Arbitraries.longs(), Arbitraries.longs())
        .as((split, prefix, high, low) -> new Shape(IpFamily.IPV6, prefix, split, high, low));
    return Arbitraries.oneOf(v4, v6, straddling);
  }

  @Provide
  Arbitrary<Shape> hugeShapes() {
    return Combinators.combine(Arbitraries.integers().between(20, 62), Arbitraries.integers().between(0, 64),
            Arbitraries.longs(), Arbitraries.longs())
        .as((split, prefix, high, low) -> new Shape(IpFamily.IPV6, Math.min(prefix, 128 - split), split, high, low));
  }

  @Provide
  Arbitrary<List<Op>> operations() {
    Arbitrary<Kind> kind = Arbitraries.frequency(Tuple.of(8, Kind.NEXT), Tuple.of(3, Kind.OCCUPY),
        Tuple.of(4, Kind.RELEASE), Tuple.of(1, Kind.OUTSIDE), Tuple.of(1, Kind.SNAPSHOT_ROUND_TRIP));
    return Combinators.combine(kind, Arbitraries.integers().between(-5, 8), Arbitraries.longs(), Arbitraries.longs())
        .as(Op::new).list().ofMaxSize(300);
  }

  @Property(tries = 400)
  void smallSetsBehaveLikeTheModel(@ForAll("smallShapes") Shape shape, @ForAll("operations") List<Op> ops) {
    run(shape, ops);
  }

  @Property(tries = 150)
  void deepIpv6SplitsBehaveLikeTheModel(@ForAll("hugeShapes") Shape shape, @ForAll("operations") List<Op> ops) {
    run(shape, ops);
  }

  private static void run(Shape shape, List<Op> ops) {
    Cidr cluster = shape.cluster();
    int nodePrefix = shape.nodePrefix();
    Model model = new Model(cluster, nodePrefix);
    CidrSet set = new CidrSet(cluster, nodePrefix);
    assertThat(set.blockCount()).isEqualTo(model.count);

    for (Op op : ops) {
      switch (op.kind()) {
        case NEXT -> {
          long expected = model.nextFree();
          Optional<Cidr> got = set.allocateNext();
          if (expected < 0) {
            assertThat(got).as("full").isEmpty();
          } else {
            assertThat(got).as("the next candidate, wrapping").hasValue(model.block(expected));
            assertThat(cluster.contains(got.get())).as("never outside the cluster CIDR").isTrue();
            assertThat(model.occupied.add(expected)).as("never handed out twice").isTrue();
            model.cursor = (expected + 1) % model.count;
          }
        }
        case OCCUPY, RELEASE -> {
          Cidr target = model.cidrInside(op);
          long[] range = model.indexRange(target);
          long changed = 0;
          for (long i = range[0]; i <= range[1]; i++) {
            changed += (op.kind() == Kind.OCCUPY ? model.occupied.add(i) : model.occupied.remove(i)) ? 1 : 0;
          }
          long got = op.kind() == Kind.OCCUPY ? set.occupy(target) : set.release(target);
          assertThat(got).as(op.kind() + " " + target).isEqualTo(changed);
          if (op.kind() == Kind.RELEASE) {
            assertThat(set.release(target)).as("release is idempotent").isZero();
          } else {
            assertThat(set.isOccupied(target)).isTrue();
          }
        }
        case OUTSIDE -> {
          Cidr outside = model.cidrOutside(op);
          if (outside != null) {
            long before = set.allocated();
            CidrSet current = set;
            assertThatThrownBy(() -> current.occupy(outside)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("does not overlap");
            assertThat(set.allocated()).isEqualTo(before);
          }
        }
        case SNAPSHOT_ROUND_TRIP -> {
          byte[] snapshot = set.snapshot();
          CidrSet copy = new CidrSet(cluster, nodePrefix);
          copy.restore(snapshot);
          assertThat(copy.snapshot()).isEqualTo(snapshot);
          assertThat(copy.allocated()).isEqualTo(set.allocated());
          assertThat(copy.peekNext()).isEqualTo(set.peekNext());
          set = copy;
        }
      }
      assertThat(set.allocated()).isEqualTo(model.occupied.size());
      assertThat(set.free()).as("free, against the model").isEqualTo(set.blockCount() - model.occupied.size());
    }
    for (long index : model.occupied) {
      assertThat(set.isOccupied(model.block(index))).isTrue();
    }
  }

  @Provide
  Arbitrary<List<Tuple.Tuple2<Integer, Byte>>> mutations() {
    return Combinators.combine(Arbitraries.integers(), Arbitraries.bytes()).as(Tuple::of).list().ofMaxSize(3);
  }

  @Property(tries = 300)
  void restoreTakesExactlyWhatSnapshotWritesOrRefusesAndChangesNothing(@ForAll("smallShapes") Shape shape,
      @ForAll("operations") List<Op> ops, @ForAll("mutations") List<Tuple.Tuple2<Integer, Byte>> mutations) {
    Cidr cluster = shape.cluster();
    Model model = new Model(cluster, shape.nodePrefix());
    CidrSet source = new CidrSet(cluster, shape.nodePrefix());
    for (Op op : ops) {
      if (op.kind() == Kind.NEXT) {
        source.allocateNext();
      } else if (op.kind() == Kind.OCCUPY) {
        source.occupy(model.cidrInside(op));
      }
    }
    byte[] data = source.snapshot();
    for (Tuple.Tuple2<Integer, Byte> m : mutations) {
      int at = Math.floorMod(m.get1(), data.length + 1);
      if (at == data.length) {
        data = Arrays.copyOf(data, data.length + 1);
      }
      data[at] = m.get2();
    }

    CidrSet target = new CidrSet(cluster, shape.nodePrefix());
    target.allocateNext();
    byte[] before = target.snapshot();
    byte[] input = data;
    try {
      target.restore(input);
    } catch (IllegalArgumentException refused) {
      assertThat(target.snapshot()).as("a refused restore changes nothing").isEqualTo(before);
      return;
    }
    assertThat(target.snapshot()).as("one state, one encoding").isEqualTo(input);
    assertThat(target.allocated()).isBetween(0L, target.blockCount());
    target.peekNext().ifPresent(block -> assertThat(cluster.contains(block)).isTrue());
  }

  /** Block numbers and addresses as plain integers. */
  static final class Model {
    final Cidr cluster;
    final int nodePrefix;
    final int bits;
    final long count;
    final BigInteger network;
    final TreeSet<Long> occupied = new TreeSet<>();
    long cursor;

    Model(Cidr cluster, int nodePrefix) {
      this.cluster = cluster;
      this.nodePrefix = nodePrefix;
      this.bits = cluster.family().bits();
      this.count = 1L << (nodePrefix - cluster.prefixLength());
      this.network = new BigInteger(1, cluster.network().toBytes());
    }

    long nextFree() {
      if (occupied.size() == count) {
        return -1;
      }
      long i = cursor;
      while (occupied.contains(i)) {
        i = (i + 1) % count;
      }
      return i;
    }

    Cidr block(long index) {
      BigInteger address = network.add(BigInteger.valueOf(index).shiftLeft(bits - nodePrefix));
      return Cidr.containing(address(address), nodePrefix);
    }

    IpAddress address(BigInteger value) {
      if (bits == 32) {
        return IpAddress.ipv4(value.longValueExact());
      }
      return IpAddress.ipv6(value.shiftRight(64).longValue(), value.longValue());
    }

    /** A CIDR overlapping the cluster CIDR: around the node prefix, at a random place inside. */
    Cidr cidrInside(Op op) {
      int prefix = Math.max(0, Math.min(bits, nodePrefix + op.prefixDelta()));
      long index = Math.floorMod(op.index(), count);
      int hostBits = bits - nodePrefix;
      BigInteger inBlock = BigInteger.valueOf(op.offset() & Long.MAX_VALUE)
          .mod(BigInteger.ONE.shiftLeft(hostBits).max(BigInteger.ONE));
      BigInteger address = network.add(BigInteger.valueOf(index).shiftLeft(hostBits)).add(inBlock);
      return Cidr.containing(address(address), prefix);
    }

    /** A CIDR just outside the cluster CIDR, or null when the cluster CIDR is everything. */
    Cidr cidrOutside(Op op) {
      if (cluster.prefixLength() == 0) {
        return null;
      }
      BigInteger flipped = network.flipBit(bits - cluster.prefixLength());
      int prefix = cluster.prefixLength() + Math.floorMod(op.prefixDelta(), bits - cluster.prefixLength() + 1);
      return Cidr.containing(address(flipped), prefix);
    }

    long[] indexRange(Cidr cidr) {
      if (cidr.prefixLength() <= cluster.prefixLength()) {
        return new long[] {0, count - 1};
      }
      BigInteger start = new BigInteger(1, cidr.network().toBytes()).subtract(network);
      long first = start.shiftRight(bits - nodePrefix).longValueExact();
      long span = cidr.prefixLength() >= nodePrefix ? 1 : 1L << (nodePrefix - cidr.prefixLength());
      return new long[] {first, first + span - 1};
    }
  }
}
