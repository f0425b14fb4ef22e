package io.subrange.allocator.store;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A clock a test moves by hand, in whole seconds. */
final class SteppedClock extends Clock {

  private final AtomicLong seconds;

  SteppedClock(long startSeconds) {
    seconds = new AtomicLong(startSeconds);
  }

  void advance(long by) {
    seconds.addAndGet(by);
  }

  void set(long to) {
    seconds.set(to);
  }

  long now() {
    return seconds.get();
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochSecond(seconds.get());
  }
}
