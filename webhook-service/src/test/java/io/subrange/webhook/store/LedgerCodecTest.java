package io.subrange.webhook.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.subrange.allocator.store.Holder;
import io.subrange.allocator.store.RangeState;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The holder ledger's lines, exactly as stored: other versions and the test harness read them. */
class LedgerCodecTest {

  private static final RangeState.Entry WEB = new RangeState.Entry("10.96.0.1", Holder.service("default", "web",
      "uid-1"), 1_700_000_100L, 1_700_000_000L);
  private static final RangeState.Entry UNKNOWN = new RangeState.Entry("10.96.0.2", null, 5);

  @Test
  void eachValueIsOneTabSeparatedLine() {
    String text = new String(LedgerCodec.ledger(List.of(WEB, UNKNOWN)), StandardCharsets.UTF_8);
    assertThat(text).isEqualTo("10.96.0.1\tService\tdefault\tweb\tuid-1\t1700000100\t1700000000\n"
        + "10.96.0.2\t-\t\t\t\t5\t5\n");
    assertThat(LedgerCodec.ledger(List.of())).isEmpty();
  }

  @Test
  void fieldsThatCouldBreakALineArePercentEscaped() {
    RangeState.Entry hostile = new RangeState.Entry("10.96.0.3", new Holder("Service", "ten\tant", "web\nsvc%09",
        "uid\r1"), 7);
    String text = new String(LedgerCodec.ledger(List.of(hostile)), StandardCharsets.UTF_8);
    assertThat(text).isEqualTo("10.96.0.3\tService\tten%09ant\tweb%0Asvc%2509\tuid%0D1\t7\t7\n");
    assertThat(LedgerCodec.unledger(text.getBytes(StandardCharsets.UTF_8), "shard", new ArrayList<>()))
        .containsExactly(hostile);
  }

  @Test
  void linesAlreadyParsedAreTakenAsTheyWereAndEveryLineIsNoted() {
    Map<String, RangeState.Entry> written = new HashMap<>();
    byte[] ledger = LedgerCodec.ledger(List.of(WEB, UNKNOWN), written);
    assertThat(written).hasSize(2).containsValues(WEB, UNKNOWN);

    RangeState.Entry known = new RangeState.Entry(WEB.value(), WEB.holder(), WEB.sinceEpochSeconds(),
        WEB.firstEpochSeconds());
    String webLine = written.entrySet().stream().filter(e -> e.getValue() == WEB).findFirst().orElseThrow().getKey();
    Map<String, RangeState.Entry> seen = new HashMap<>();
    List<RangeState.Entry> entries = LedgerCodec.unledger(ledger, "shard", new ArrayList<>(), Map.of(webLine, known),
        seen);
    assertThat(entries).containsExactly(WEB, UNKNOWN);
    assertThat(entries.get(0)).isSameAs(known);
    assertThat(seen).isEqualTo(written);
  }

  @Test
  void ledgersRoundTripThroughGzipAndAnythingElseIsRefused() {
    byte[] ledger = LedgerCodec.ledger(List.of(WEB, UNKNOWN));
    assertThat(LedgerCodec.gunzip(LedgerCodec.gzip(ledger), "shard")).isEqualTo(ledger);
    assertThatThrownBy(() -> LedgerCodec.gunzip(ledger, "shard-3")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("ConfigMap shard-3: holders are not gzip data");
  }

  @Test
  void aShardsReadableEntriesAreWhatItsLedgerHoldsOrNothing() {
    byte[] gzipped = LedgerCodec.gzip(("10.96.0.1\tService\tdefault\tweb\tuid-1\t1700000100\t1700000000\n"
        + "garbage\n").getBytes(StandardCharsets.UTF_8));
    assertThat(LedgerCodec.readableEntries(shard(Base64.getEncoder().encodeToString(gzipped)))).containsExactly(WEB);
    assertThat(LedgerCodec.readableEntries(shard(Base64.getEncoder().encodeToString(new byte[] {1, 2})))).isEmpty();
    assertThat(LedgerCodec.readableEntries(shard("not base64!"))).isEmpty();
  }

  private static ConfigMap shard(String holders) {
    return new ConfigMapBuilder().withNewMetadata().withName("shard-0").endMetadata()
        .addToBinaryData(RangeConfigMaps.HOLDERS, holders).build();
  }
}
