package io.subrange.allocator.band;

import static org.assertj.core.api.Assertions.assertThat;

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
import net.jqwik.api.constraints.LongRange;

/** The sparse set against a sorted set of unsigned offsets, on small and on /64-sized ranges. */
class SparseAllocationSetProperties {

  enum Kind { NEXT, SPECIFIC, RELEASE, SNAPSHOT_ROUND_TRIP }

  record Op(Kind kind, long value) {
  }

  @Provide
  Arbitrary<List<Op>> operations() {
    Arbitrary<Kind> kind = Arbitraries.frequency(Tuple.of(6, Kind.NEXT), Tuple.of(3, Kind.SPECIFIC),
        Tuple.of(4, Kind.RELEASE), Tuple.of(1, Kind.SNAPSHOT_ROUND_TRIP));
    return Combinators.combine(kind, Arbitraries.longs()).as(Op::new).list().ofMaxSize(500);
  }

  @Provide
  Arbitrary<Long> sizes() {
    // Small ranges fill up and wrap; -1 is a /64 (2^64-1), and large unsigned sizes cross 2^63.
    return Arbitraries.oneOf(Arbitraries.longs().between(1, 600), Arbitraries.just(-1L),
        Arbitraries.longs().between(Long.MIN_VALUE, -2L));
  }

  @Property(tries = 300)
  void behavesLikeASetWithBandedChoice(@ForAll("sizes") long size, @ForAll @LongRange(min = 0, max = 256) long band,
      @ForAll long seed, @ForAll("operations") List<Op> ops) {
    long staticBand = Long.compareUnsigned(band, size) < 0 ? band : size;
    SparseAllocationSet set = new SparseAllocationSet(size, staticBand, new UniformStart(new SplittableRandom(seed)));
    TreeSet<Long> model = new TreeSet<>(Long::compareUnsigned);
    long usedStatic = 0;
    for (Op op : ops) {
      long offset = Long.remainderUnsigned(op.value(), size);
      switch (op.kind()) {
        case NEXT -> {
          long dynamicUsed = model.size() - usedStatic;
          boolean dynamicHadRoom = Long.compareUnsigned(dynamicUsed, size - staticBand) < 0;
          boolean full = Long.compareUnsigned(model.size(), size) == 0;
          long got = set.allocateNext();
          if (full) {
            assertThat(got).isEqualTo(-1L);
          } else {
            assertThat(Long.compareUnsigned(got, size)).as("inside the range").isNegative();
            assertThat(model.add(got)).as("never the same offset twice").isTrue();
            boolean inStatic = Long.compareUnsigned(got, staticBand) < 0;
            if (dynamicHadRoom) {
              assertThat(inStatic).as("dynamic band first").isFalse();
            }
            usedStatic += inStatic ? 1 : 0;
          }
        }
        case SPECIFIC -> {
          boolean added = model.add(offset);
          assertThat(set.allocate(offset)).isEqualTo(added);
          usedStatic += added && Long.compareUnsigned(offset, staticBand) < 0 ? 1 : 0;
        }
        case RELEASE -> {
          boolean removed = model.remove(offset);
          assertThat(set.release(offset)).isEqualTo(removed);
          assertThat(set.release(offset)).as("release is idempotent").isFalse();
          usedStatic -= removed && Long.compareUnsigned(offset, staticBand) < 0 ? 1 : 0;
        }
        case SNAPSHOT_ROUND_TRIP -> {
          SparseAllocationSet copy = new SparseAllocationSet(size, staticBand,
              new UniformStart(new SplittableRandom(seed)));
          copy.restore(set.snapshot());
          assertThat(copy.snapshot()).isEqualTo(set.snapshot());
          set = copy;
        }
      }
      assertThat(set.used()).isEqualTo(model.size());
      assertThat(set.usedInStaticBand()).isEqualTo(usedStatic);
      assertThat(set.free()).as("free, against the model").isEqualTo(size - model.size());
    }
    for (long offset : model) {
      assertThat(set.isAllocated(offset)).isTrue();
    }
    TreeSet<Long> visited = new TreeSet<>(Long::compareUnsigned);
    set.forEachAllocated(visited::add);
    assertThat(visited).isEqualTo(model);
  }
}
