package io.subrange.allocator.podcidr;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class CidrSetTest {

  private static Cidr cidr(String text) {
    return Cidr.parse(text);
  }

  private static List<String> take(CidrSet set, int n) {
    List<String> blocks = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      blocks.add(set.allocateNext().map(Cidr::toString).orElse("full"));
    }
    return blocks;
  }

  /** The number of the block holding {@code address}, or -1 outside the set: the index math occupy and release use. */
  private static long blockIndexOf(CidrSet set, IpAddress address) {
    return set.clusterCidr().contains(address) ? Blocks.blockIndex(set.clusterCidr(), set.nodePrefixLength(), address)
        : -1;
  }

  @Test
  void handsOutBlocksInOrderFromTheLowEnd() {
    CidrSet set = new CidrSet(cidr("10.0.0.0/16"), 24);

    assertThat(set.blockCount()).isEqualTo(256);
    assertThat(take(set, 3)).containsExactly("10.0.0.0/24", "10.0.1.0/24", "10.0.2.0/24");
    assertThat(set.allocated()).isEqualTo(3);
    assertThat(set.free()).isEqualTo(253);
  }

  @Test
  void nextCandidateFollowsTheLastHandedOutAndWraps() {
    CidrSet set = new CidrSet(cidr("10.0.0.0/16"), 24);
    take(set, 3);

    set.release(cidr("10.0.1.0/24"));
    assertThat(take(set, 1)).as("like upstream, a released block is not reused at once")
        .containsExactly("10.0.3.0/24");

    take(set, 251);  // 10.0.4.0/24 .. 10.0.254.0/24
    assertThat(take(set, 3)).containsExactly("10.0.255.0/24", "10.0.1.0/24", "full");
  }

  @Test
  void skipsOccupiedBlocksAfterWrapping() {
    CidrSet set = new CidrSet(cidr("10.0.0.0/16"), 24);
    take(set, 256);
    assertThat(set.allocateNext()).isEmpty();

    set.release(cidr("10.0.5.0/24"));
    set.release(cidr("10.0.2.0/24"));
    assertThat(set.peekNext()).map(Cidr::toString).hasValue("10.0.2.0/24");
    assertThat(take(set, 3)).containsExactly("10.0.2.0/24", "10.0.5.0/24", "full");
  }

  @Test
  void wrapsFromTheMiddleWhenOnlyEarlierBlocksAreFree() {
    CidrSet set = new CidrSet(cidr("10.0.0.0/22"), 24);
    take(set, 3);
    set.occupy(cidr("10.0.3.0/24"));
    set.release(cidr("10.0.1.0/24"));

    assertThat(take(set, 2)).containsExactly("10.0.1.0/24", "full");
  }

  @Test
  void occupyingAnExistingNodeBlockIsSkippedAndDoesNotMoveTheCandidate() {
    CidrSet set = new CidrSet(cidr("10.0.0.0/16"), 24);

    assertThat(set.occupy(cidr("10.0.1.0/24"))).isEqualTo(1);
    assertThat(set.occupy(cidr("10.0.1.0/24"))).as("occupying twice is fine").isZero();
    assertThat(take(set, 2)).containsExactly("10.0.0.0/24", "10.0.2.0/24");
  }

  @Test
  void aServiceRangeInsideTheClusterCidrIsNeverHandedOut() {
    CidrSet set = new CidrSet(cidr("10.0.0.0/16"), 24);
    Cidr serviceRange = cidr("10.0.128.0/20");

    assertThat(set.occupy(serviceRange)).as("every /24 inside the /20").isEqualTo(16);
    List<String> handedOut = take(set, 241);

    assertThat(handedOut).hasSize(241).endsWith("full");
    assertThat(handedOut.subList(0, 240))
        .allSatisfy(block -> assertThat(serviceRange.overlaps(cidr(block))).as(block).isFalse());
  }

  @Test
  void aRangeSmallerThanABlockMarksTheBlockHoldingIt() {
    CidrSet set = new CidrSet(cidr("10.0.0.0/16"), 24);

    assertThat(set.occupy(cidr("10.0.3.16/28"))).isEqualTo(1);
    assertThat(set.isOccupied(cidr("10.0.3.0/24"))).isTrue();
    assertThat(set.isOccupied(cidr("10.0.4.0/24"))).isFalse();
    assertThat(take(set, 4)).containsExactly("10.0.0.0/24", "10.0.1.0/24", "10.0.2.0/24", "10.0.4.0/24");
  }

  @Test
  void aRangeLargerThanTheClusterCidrMarksEveryBlock() {
    CidrSet set = new CidrSet(cidr("10.0.0.0/16"), 24);

    assertThat(set.occupy(cidr("10.0.0.0/8"))).isEqualTo(256);
    assertThat(set.free()).isZero();
    assertThat(set.allocateNext()).isEmpty();
    assertThat(set.release(cidr("10.0.0.0/8"))).isEqualTo(256);
    assertThat(set.release(cidr("10.0.0.0/8"))).as("release is idempotent").isZero();
    assertThat(set.allocated()).isZero();
  }

  @Test
  void refusesCidrsThatDoNotOverlapTheClusterCidr() {
    CidrSet set = new CidrSet(cidr("10.0.0.0/16"), 24);

    assertThatThrownBy(() -> set.occupy(cidr("192.168.0.0/16")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("192.168.0.0/16 does not overlap the cluster CIDR 10.0.0.0/16");
    assertThatThrownBy(() -> set.release(cidr("10.1.0.0/24")))
        .hasMessage("10.1.0.0/24 does not overlap the cluster CIDR 10.0.0.0/16");
    assertThatThrownBy(() -> set.occupy(cidr("fd00::/64")))
        .hasMessage("fd00::/64 is IPv6 but the cluster CIDR 10.0.0.0/16 is IPv4");
    assertThat(set.allocated()).isZero();
  }

  @Test
  void splitsAnIpv6Slash32IntoTwoToThe32Slash64Blocks() {
    CidrSet set = new CidrSet(cidr("2001:db8::/32"), 64);

    assertThat(set.blockCount()).isEqualTo(1L << 32);
    assertThat(take(set, 2)).containsExactly("2001:db8::/64", "2001:db8:0:1::/64");
    assertThat(set.blockAt((1L << 32) - 1)).hasToString("2001:db8:ffff:ffff::/64");
    assertThat(blockIndexOf(set, IpAddress.parse("2001:db8:ffff:ffff::1"))).isEqualTo((1L << 32) - 1);
    assertThat(blockIndexOf(set, IpAddress.parse("2001:db9::"))).isEqualTo(-1);

    assertThat(set.occupy(cidr("2001:db8:8000::/33"))).isEqualTo(1L << 31);
    assertThat(set.allocated()).isEqualTo((1L << 31) + 2);
    assertThat(set.intervalCount()).as("held as two runs, not 2^31 bits").isEqualTo(2);
    assertThat(set.release(cidr("2001:db8:8000::/33"))).isEqualTo(1L << 31);
  }

  @Test
  void blockNumbersMayStraddleTheTwo64BitHalves() {
    CidrSet set = new CidrSet(cidr("fd00::/60"), 68);

    assertThat(set.blockAt(1)).hasToString("fd00::1000:0:0:0/68");
    assertThat(set.blockAt(16)).hasToString("fd00:0:0:1::/68");
    assertThat(set.blockAt(255)).hasToString("fd00:0:0:f:f000::/68");
    assertThat(blockIndexOf(set, IpAddress.parse("fd00:0:0:f:f000::42"))).isEqualTo(255);
    assertThat(set.occupy(cidr("fd00:0:0:1::/64"))).as("blocks 16..31").isEqualTo(16);
    assertThat(set.isOccupied(cidr("fd00:0:0:1:f000::/68"))).isTrue();
    assertThat(set.isOccupied(cidr("fd00:0:0:2::/68"))).isFalse();
  }

  @Test
  void splitsUpTo62BitsDeep() {
    CidrSet set = new CidrSet(cidr("2001:db8:1::/48"), 110);

    assertThat(set.blockCount()).isEqualTo(1L << 62);
    assertThat(set.blockAt((1L << 62) - 1)).hasToString("2001:db8:1:ffff:ffff:ffff:fffc:0/110");
    assertThat(set.occupy(cidr("2001:db8:1::/48"))).isEqualTo(1L << 62);
    assertThat(set.free()).isZero();
  }

  @Test
  void refusesSplitsDeeperThan62Bits() {
    assertThatThrownBy(() -> new CidrSet(cidr("2001:db8::/48"), 112))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("2001:db8::/48 split into /112 blocks is 2^64 blocks; at most 2^62 are supported (at most 62"
            + " bits between cluster and node prefix: use /110 or shorter node blocks, or a smaller cluster CIDR)");
    assertThatThrownBy(() -> new CidrSet(cidr("2001:db8::/32"), 96)).hasMessageContaining("2^64 blocks");
  }

  @Test
  void refusesNodePrefixesThatDoNotFit() {
    assertThatThrownBy(() -> new CidrSet(cidr("10.0.0.0/16"), 8))
        .hasMessage("node prefix /8 does not fit 10.0.0.0/16: use a prefix from /16 to /32");
    assertThatThrownBy(() -> new CidrSet(cidr("10.0.0.0/16"), 33))
        .hasMessage("node prefix /33 does not fit 10.0.0.0/16: use a prefix from /16 to /32");
  }

  @Test
  void aBlockAsLargeAsTheClusterCidrIsOneBlock() {
    CidrSet set = new CidrSet(cidr("10.0.0.0/24"), 24);

    assertThat(set.blockCount()).isEqualTo(1);
    assertThat(take(set, 2)).containsExactly("10.0.0.0/24", "full");
  }

  @Test
  void snapshotGrowsWithRunsNotWithBlocks() {
    CidrSet set = new CidrSet(cidr("2001:db8::/32"), 64);
    for (int i = 0; i < 10_000; i++) {
      set.allocateNext();
    }
    byte[] snapshot = set.snapshot();

    assertThat(snapshot.length).isLessThan(40);

    CidrSet copy = new CidrSet(cidr("2001:db8::/32"), 64);
    copy.restore(snapshot);
    assertThat(copy.allocated()).isEqualTo(10_000);
    assertThat(copy.snapshot()).isEqualTo(snapshot);
    assertThat(copy.allocateNext()).isEqualTo(set.allocateNext()).map(Cidr::toString)
        .hasValue("2001:db8:0:2710::/64");
  }

  @Test
  void restoreRefusesSnapshotsOfAnotherSet() {
    CidrSet set = new CidrSet(cidr("10.0.0.0/16"), 24);
    byte[] other = new CidrSet(cidr("10.1.0.0/16"), 24).snapshot();
    byte[] otherPrefix = new CidrSet(cidr("10.0.0.0/16"), 25).snapshot();

    assertThatThrownBy(() -> set.restore(other))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("snapshot is of another set (10.1.0.0/16 split into /24 blocks), not of 10.0.0.0/16 split into"
            + " /24 blocks");
    assertThatThrownBy(() -> set.restore(otherPrefix)).hasMessageContaining("split into /25 blocks");
    assertThatThrownBy(() -> set.restore(new CidrSet(cidr("fd00::/112"), 120).snapshot()))
        .hasMessageContaining("fd00::/112");
  }

  @Test
  void restoreRefusesBlocksOutsideTheSetAndLeavesTheStateAlone() {
    CidrSet set = new CidrSet(cidr("10.0.0.0/16"), 24);
    set.allocateNext();
    byte[] before = set.snapshot();
    byte[] header = Arrays.copyOf(new CidrSet(cidr("10.0.0.0/16"), 24).snapshot(), 8);

    // next candidate 0, one run starting at block 256 (varint 0x80 0x02), one block long
    byte[] beyond = concat(header, new byte[] {0, 1, (byte) 0x80, 0x02, 0});
    // a run from block 250 that is 7 blocks long
    byte[] tooLong = concat(header, new byte[] {0, 1, (byte) 250, 0x01, 6});
    byte[] badCandidate = concat(header, new byte[] {(byte) 0x80, 0x02, 0});

    assertThatThrownBy(() -> set.restore(beyond))
        .hasMessage("snapshot names blocks beyond the last block (255) of 10.0.0.0/16 split into /24 blocks");
    assertThatThrownBy(() -> set.restore(tooLong)).hasMessageContaining("beyond the last block (255)");
    assertThatThrownBy(() -> set.restore(badCandidate))
        .hasMessage("snapshot names next candidate block 256 but 10.0.0.0/16 has only 256 /24 blocks");
    assertThat(set.snapshot()).isEqualTo(before);
  }

  @Test
  void restoreRefusesMalformedBytes() {
    CidrSet set = new CidrSet(cidr("10.0.0.0/16"), 24);
    set.allocateNext();
    byte[] good = set.snapshot();

    assertThatThrownBy(() -> set.restore(new byte[0])).hasMessage("snapshot is empty");
    assertThatThrownBy(() -> set.restore(Arrays.copyOf(good, good.length - 1)))
        .hasMessageContaining("truncated");
    assertThatThrownBy(() -> set.restore(concat(good, new byte[] {0})))
        .hasMessage("snapshot has 1 unexpected bytes after its end");
    byte[] version = good.clone();
    version[0] = 9;
    assertThatThrownBy(() -> set.restore(version))
        .hasMessage("snapshot format version 9 is not supported (expected 1)");
    byte[] header = Arrays.copyOf(good, 8);
    assertThatThrownBy(() -> set.restore(concat(header, new byte[] {(byte) 0x80, 0x00, 0})))
        .hasMessage("snapshot holds a number in a non-minimal encoding");
    assertThatThrownBy(() -> set.restore(concat(header, new byte[] {0, 100, 0, 0})))
        .hasMessage("snapshot is truncated: it announces 100 occupied runs");
  }

  @Test
  void concurrentAllocationsNeverShareABlock() throws Exception {
    CidrSet set = new CidrSet(cidr("10.0.0.0/16"), 28);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Callable<List<Cidr>>> workers = new ArrayList<>();
      for (int w = 0; w < 4; w++) {
        workers.add(() -> {
          List<Cidr> mine = new ArrayList<>();
          for (int i = 0; i < 1000; i++) {
            set.allocateNext().ifPresent(mine::add);
          }
          return mine;
        });
      }
      Set<Cidr> all = new HashSet<>();
      int count = 0;
      for (Future<List<Cidr>> result : pool.invokeAll(workers)) {
        all.addAll(result.get());
        count += result.get().size();
      }
      assertThat(count).isEqualTo(4000);
      assertThat(all).hasSize(4000);
      assertThat(set.allocated()).isEqualTo(4000);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void peekDoesNotTake() {
    CidrSet set = new CidrSet(cidr("10.0.0.0/30"), 31);

    assertThat(set.peekNext()).isEqualTo(Optional.of(cidr("10.0.0.0/31")));
    assertThat(set.peekNext()).isEqualTo(Optional.of(cidr("10.0.0.0/31")));
    assertThat(set.allocated()).isZero();
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
