package io.subrange.webhook.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.subrange.allocator.store.Holder;
import io.subrange.allocator.store.RangeState;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a memo remembers saves work only: a shard's stored ledger is what a fresh encode makes. */
class LedgerMemoTest {

  private static final String SHARD = "subrange-serviceips-ipv4-0";

  @Test
  void aLedgerWrittenAgainAfterAChangeIsWhatAFreshEncodeMakes() {
    LedgerMemo memo = LedgerMemo.create();
    List<RangeState.Entry> first = entries(0, 50);
    assertThat(memo.encode(SHARD, first)).isEqualTo(LedgerMemo.NONE.encode(SHARD, first));

    // One holder released, one re-armed (a new since), one added, one with a name to escape.
    List<RangeState.Entry> second = new ArrayList<>(first);
    second.remove(10);
    RangeState.Entry rearmed = second.get(20);
    second.set(20, new RangeState.Entry(rearmed.value(), rearmed.holder(), rearmed.sinceEpochSeconds() + 60,
        rearmed.firstEpochSeconds()));
    second.add(new RangeState.Entry("10.96.1.0", new Holder("Service", "ten\tant", "web%", "uid-x"), 9));
    String remembered = memo.encode(SHARD, second);
    assertThat(remembered).isEqualTo(LedgerMemo.NONE.encode(SHARD, second));
    assertThat(lines(remembered)).contains("10.96.1.0\tService\tten%09ant\tweb%25\tuid-x\t9\t9")
        .doesNotContain(line(first.get(10)));
  }

  @Test
  void aLineReadBackInAnOlderFormIsWrittenInTheCurrentFormWhenItsShardChanges() {
    // A six-field line (written before "first" existed) reads as an entry whose first is its since.
    RangeState.Entry old = new RangeState.Entry("10.96.0.9", Holder.service("default", "old", "uid-9"), 42);
    String sixFields = "10.96.0.9\tService\tdefault\told\tuid-9\t42\n";
    LedgerMemo memo = LedgerMemo.create();
    assertThat(memo.decode(shard(sixFields))).containsExactly(old);

    // Unchanged entries keep the stored bytes; once another entry changes, the shard is written
    // whole, and every line in the current form.
    RangeState.Entry added = new RangeState.Entry("10.96.0.10", Holder.service("default", "new", ""), 50);
    String written = memo.encode(SHARD, List.of(old, added));
    assertThat(written).isEqualTo(LedgerMemo.NONE.encode(SHARD, List.of(old, added)));
    assertThat(lines(written)).containsExactly("10.96.0.9\tService\tdefault\told\tuid-9\t42\t42",
        "10.96.0.10\tService\tdefault\tnew\t\t50\t50");
  }

  private static List<RangeState.Entry> entries(int from, int to) {
    List<RangeState.Entry> entries = new ArrayList<>();
    for (int i = from; i < to; i++) {
      entries.add(new RangeState.Entry("10.96.0." + i, Holder.service("load", "svc-" + i, "uid-" + i), 1_000 + i));
    }
    return entries;
  }

  private static String line(RangeState.Entry entry) {
    return new String(LedgerCodec.ledger(List.of(entry)), StandardCharsets.UTF_8).strip();
  }

  private static List<String> lines(String base64) {
    byte[] text = LedgerCodec.gunzip(Base64.getDecoder().decode(base64), SHARD);
    return List.of(new String(text, StandardCharsets.UTF_8).split("\n"));
  }

  private static ConfigMap shard(String ledger) {
    return new ConfigMapBuilder().withNewMetadata().withName(SHARD).endMetadata()
        .addToBinaryData(RangeConfigMaps.HOLDERS, Base64.getEncoder().encodeToString(
            LedgerCodec.gzip(ledger.getBytes(StandardCharsets.UTF_8))))
        .build();
  }
}
