package io.subrange.allocator.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The holder ledger on its own, over a fake allocator: the one path both addresses and ports take. */
class HolderLedgerTest {

  /** Integers from a set, as the allocator; records what the ledger asks of it. */
  private static final class FakeSpace implements HolderLedger.Space<Integer> {
    final Set<Integer> taken = new TreeSet<>();
    final List<Integer> released = new ArrayList<>();
    final List<Integer> marked = new ArrayList<>();

    @Override
    public boolean isTaken(Integer value) {
      return taken.contains(value);
    }

    @Override
    public void release(Integer value) {
      taken.remove(value);
      released.add(value);
    }

    @Override
    public void markChanged(Integer value) {
      marked.add(value);
    }
  }

  private final FakeSpace space = new FakeSpace();
  private final SteppedClock clock = new SteppedClock(1_000);
  private final HolderLedger<Integer> sorted = HolderLedger.sortedPerObject(space, clock);
  private final HolderLedger<Integer> onePerObject = HolderLedger.onePerObject(space, clock);

  private final Holder web = Holder.service("default", "web", "");
  private final Holder webWithUid = Holder.service("default", "web", "uid-1");
  private final Holder api = Holder.service("default", "api", "");
  private final Holder unnamed = Holder.service("default", "", "");

  private void take(HolderLedger<Integer> ledger, int value, Holder holder) {
    space.taken.add(value);
    ledger.hold(value, holder);
  }

  private static HolderLedger.ObjectKey key(Holder holder) {
    return HolderLedger.ObjectKey.of(holder);
  }

  @Test
  void aHoldIsRecordedFromNowIndexedByObjectAndMarkedChanged() {
    take(sorted, 30005, web);
    assertThat(sorted.held(30005)).isEqualTo(new Held(web, 1_000, 1_000));
    assertThat(sorted.holdsAnythingFor(key(webWithUid))).as("any uid: the same name").isTrue();
    assertThat(sorted.holdsAnythingFor(key(api))).isFalse();
    assertThat(space.marked).containsExactly(30005);
    assertThat(sorted.heldBy(web, Set.of())).isEqualTo(30005);
    assertThat(sorted.heldBy(api, Set.of())).isNull();
  }

  @Test
  void severalValuesPerObjectAreTriedInOrderSkippingExcludedOnesAndOnesNoLongerItsOwn() {
    take(sorted, 30009, web);
    take(sorted, 30002, web);
    take(sorted, 30007, web);
    assertThat(sorted.heldBy(web, Set.of())).isEqualTo(30002);
    assertThat(sorted.heldBy(web, Set.of(30002))).isEqualTo(30007);
    assertThat(sorted.heldBy(web, Set.of(30002, 30007, 30009))).isNull();
    assertThat(sorted.heldBy(unnamed, Set.of())).as("an unnamed object takes nothing back").isNull();

    // Once the record knows a uid, a CREATE under the same name (no uid yet) is another object.
    assertThat(sorted.adopt(30002, web, webWithUid)).isTrue();
    assertThat(sorted.heldBy(web, Set.of())).isEqualTo(30007);
    assertThat(sorted.heldBy(webWithUid, Set.of())).isEqualTo(30002);
  }

  @Test
  void oneValuePerObjectNamesTheOneRecordedLast() {
    take(onePerObject, 7, web);
    take(onePerObject, 8, web);
    assertThat(onePerObject.heldBy(web, Set.of())).isEqualTo(8);
    onePerObject.forget(7);
    assertThat(onePerObject.heldBy(web, Set.of())).as("forgetting an older value keeps the newer").isEqualTo(8);
    assertThat(onePerObject.heldBy(web, Set.of(8))).isNull();
    onePerObject.forget(8);
    assertThat(onePerObject.holdsAnythingFor(key(web))).isFalse();
  }

  @Test
  void recordingAnotherHolderOfAValueDropsThePreviousOneFromTheIndexInBothShapes() {
    for (HolderLedger<Integer> ledger : List.of(sorted, onePerObject)) {
      ledger.record(40, new Held(web, 1, 1));
      ledger.record(40, new Held(api, 2, 2));
      assertThat(ledger.held(40)).isEqualTo(new Held(api, 2, 2));
      assertThat(ledger.holdsAnythingFor(key(web))).isFalse();
      assertThat(ledger.holdsAnythingFor(key(api))).isTrue();
      ledger.forget(40);
      assertThat(ledger.heldBy(web, Set.of())).isNull();
      assertThat(ledger.holdsAnythingFor(key(api))).isFalse();
    }
    assertThat(space.marked).as("recording is loading: nothing changed").isEmpty();
  }

  @Test
  void releaseFreesOnlyATakenValueFromItsObjectAndALeakOnlyAsJudged() {
    take(sorted, 30001, web);
    space.marked.clear();
    assertThat(sorted.release(30001, api, HolderLedger.ANY_TIME)).as("not api's").isFalse();
    assertThat(sorted.release(30001, web, 999)).as("held since 1000, not 999").isFalse();
    assertThat(space.released).isEmpty();
    assertThat(sorted.release(30001, webWithUid, 1_000)).isTrue();
    assertThat(space.released).containsExactly(30001);
    assertThat(space.marked).containsExactly(30001);
    assertThat(sorted.held(30001)).isNull();
    assertThat(sorted.holdsAnythingFor(key(web))).isFalse();
    assertThat(sorted.release(30001, null, HolderLedger.ANY_TIME)).as("no longer taken").isFalse();

    sorted.record(30003, new Held(web, 5, 5));
    assertThat(sorted.release(30003, null, HolderLedger.ANY_TIME)).as("on record, but not taken").isFalse();
  }

  @Test
  void aRetriedCreateReArmsItsHoldOnlyAfterAWhileAndOnlyForAWhile() {
    take(onePerObject, 3, web);
    space.marked.clear();
    clock.advance(AllocationEngine.REARM_AFTER_SECONDS - 1);
    assertThat(onePerObject.needsRearm(3, web)).as("the validating webhook's check").isFalse();
    clock.advance(1);
    assertThat(onePerObject.needsRearm(3, webWithUid)).as("an object that exists").isFalse();
    assertThat(onePerObject.needsRearm(3, web)).isTrue();
    onePerObject.rearm(3, web, true);
    assertThat(onePerObject.held(3).since()).as("dry runs change nothing").isEqualTo(1_000);
    onePerObject.rearm(3, web, false);
    assertThat(onePerObject.held(3)).isEqualTo(new Held(web, clock.now(), 1_000));
    assertThat(onePerObject.heldBy(web, Set.of())).isEqualTo(3);
    assertThat(space.marked).containsExactly(3);

    clock.set(1_000 + AllocationEngine.MAX_REARMED_HOLD_SECONDS);
    assertThat(onePerObject.needsRearm(3, web)).as("held too long since first taken").isFalse();
  }

  @Test
  void adoptNamesTheOwnerOnlyFromTheHolderOnRecordAndKeepsTheTimes() {
    take(sorted, 30004, unnamed);
    clock.advance(50);
    space.marked.clear();
    assertThat(sorted.adopt(30004, api, web)).as("only from the holder on record").isFalse();
    assertThat(sorted.adopt(30004, unnamed, web)).isTrue();
    assertThat(sorted.held(30004)).isEqualTo(new Held(web, 1_000, 1_000));
    assertThat(sorted.heldBy(web, Set.of())).isEqualTo(30004);
    assertThat(space.marked).containsExactly(30004);

    space.taken.add(30006);
    assertThat(sorted.adopt(30006, null, api)).as("taken with no holder on record").isTrue();
    assertThat(sorted.held(30006)).isEqualTo(new Held(api, 1_050, 1_050));
    assertThat(sorted.adopt(30008, null, api)).as("not taken").isFalse();
  }

  @Test
  void replacingAWindowTouchesOnlyWhatChangedAndMarksNothing() {
    take(sorted, 1, web);
    take(sorted, 2, web);
    take(sorted, 3, api);
    space.marked.clear();
    Held kept = sorted.held(1);
    Map<Integer, Held> incoming = new HashMap<>();
    incoming.put(1, new Held(web, 1_000, 1_000));  // as it was
    incoming.put(3, new Held(web, 1_200, 1_100));  // now web's
    incoming.put(4, new Held(api, 1_300, 1_300));  // new
    sorted.replaceWindow(List.of(1, 2, 3), incoming);

    assertThat(sorted.held(1)).isSameAs(kept);
    assertThat(sorted.held(2)).as("no longer taken in the window").isNull();
    assertThat(sorted.held(3)).isEqualTo(new Held(web, 1_200, 1_100));
    assertThat(sorted.held(4)).isEqualTo(new Held(api, 1_300, 1_300));
    assertThat(sorted.heldBy(web, Set.of(1))).isEqualTo(3);
    assertThat(sorted.heldBy(api, Set.of())).isEqualTo(4);
    assertThat(space.marked).isEmpty();

    sorted.clear();
    assertThat(sorted.held(1)).isNull();
    assertThat(sorted.holdsAnythingFor(key(web))).isFalse();
    assertThat(sorted.holdsAnythingFor(key(api))).isFalse();
  }
}
