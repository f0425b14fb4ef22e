package io.subrange.allocator.band;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/** The bitmap against a plain sorted set as a model, under random operation sequences. */
class AllocationBitmapProperties {

  enum Kind { NEXT, SPECIFIC, RELEASE, SNAPSHOT_ROUND_TRIP }

  record Op(Kind kind, int value) {
  }

  @Provide
  Arbitrary<List<Op>> operations() {
    Arbitrary<Kind> kind = Arbitraries.frequency(Tuple.of(6, Kind.NEXT), Tuple.of(2, Kind.SPECIFIC),
        Tuple.of(3, Kind.RELEASE), Tuple.of(1, Kind.SNAPSHOT_ROUND_TRIP));
    Arbitrary<Integer> value = Arbitraries.integers().between(0, 1 << 12);
    return Combinators.combine(kind, value).as(Op::new).list().ofMaxSize(600);
  }

  @Property(tries = 300)
  void behavesLikeASetWithBandedChoice(@ForAll @IntRange(min = 1, max = 700) int size,
      @ForAll @IntRange(min = 0, max = 300) int requestedBand, @ForAll @LongRange long seed,
      @ForAll("operations") List<Op> ops) {
    int band = Math.min(requestedBand, size);
    AllocationBitmap bitmap = new AllocationBitmap(size, band, new UniformStart(new SplittableRandom(seed)));
    TreeSet<Long> model = new TreeSet<>();
    for (Op op : ops) {
      long offset = op.value() % size;
      switch (op.kind()) {
        case NEXT -> {
          boolean dynamicHadRoom = model.subSet((long) band, (long) size).size() < size - band;
          long got = bitmap.allocateNext();
          if (model.size() == size) {
            assertThat(got).isEqualTo(-1);
          } else {
            assertThat(got).isBetween(0L, size - 1L);
            assertThat(model.add(got)).as("never the same offset twice").isTrue();
            if (dynamicHadRoom) {
              assertThat(got).as("dynamic band first").isGreaterThanOrEqualTo(band);
            }
          }
        }
        case SPECIFIC -> assertThat(bitmap.allocate(offset)).isEqualTo(model.add(offset));
        case RELEASE -> {
          boolean wasHeld = model.remove(offset);
          assertThat(bitmap.release(offset)).isEqualTo(wasHeld);
          assertThat(bitmap.release(offset)).as("release is idempotent").isFalse();
        }
        case SNAPSHOT_ROUND_TRIP -> {
          AllocationBitmap copy = new AllocationBitmap(size, band, new UniformStart(new SplittableRandom(seed)));
          copy.restore(bitmap.snapshot());
          assertThat(copy.snapshot()).isEqualTo(bitmap.snapshot());
          assertThat(copy.used()).isEqualTo(bitmap.used());
          assertThat(copy.usedInStaticBand()).isEqualTo(bitmap.usedInStaticBand());
          bitmap = copy;
        }
      }
      assertThat(bitmap.used()).isEqualTo(model.size());
      assertThat(bitmap.free() + bitmap.used()).isEqualTo(size);
      assertThat(bitmap.usedInStaticBand()).isEqualTo(model.headSet((long) band).size());
    }
    for (long i = 0; i < size; i++) {
      assertThat(bitmap.isAllocated(i)).isEqualTo(model.contains(i));
    }
  }

  @Property(tries = 200)
  void snapshotIsTheBigEndianNumberOfTheBitArray(@ForAll @IntRange(min = 1, max = 2000) int size,
      @ForAll List<@IntRange(min = 0, max = 1999) Integer> offsets) {
    AllocationBitmap bitmap = new AllocationBitmap(size, 0, new UniformStart(new SplittableRandom(1)));
    BigInteger expected = BigInteger.ZERO;
    for (int offset : offsets) {
      if (offset < size && bitmap.allocate(offset)) {
        expected = expected.setBit(offset);
      }
    }
    byte[] goBytes = expected.signum() == 0 ? new byte[0] : stripSignByte(expected.toByteArray());
    assertThat(bitmap.snapshot()).isEqualTo(goBytes);
  }

  private static byte[] stripSignByte(byte[] twosComplement) {
    return twosComplement[0] == 0 ? Arrays.copyOfRange(twosComplement, 1, twosComplement.length)
        : twosComplement;
  }
}
