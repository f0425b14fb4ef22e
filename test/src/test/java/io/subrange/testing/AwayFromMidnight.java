package io.subrange.testing;

import java.time.Instant;
import java.time.ZoneOffset;
import java.util.TimeZone;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * Sets the test JVM's default time zone so that its local time is about six in the morning.
 *
 * <p>kube-api-test 7.6.1 times its wait for etcd and kube-apiserver with {@code LocalTime}: a
 * start within the wait's timeout before local midnight computes a deadline after midnight, which
 * {@code LocalTime} sees as earlier, and fails at once with "kube-apiserver did not start
 * properly" (seen in CI at 23:58 UTC). Far from local midnight, no run of these tests reaches it.
 * Registered for every test run of this module in {@code META-INF/services}. webhook-service's
 * tests have the same class: neither module's tests can see the other's. The load harness, run
 * outside JUnit, does not get it.
 */
public final class AwayFromMidnight implements LauncherSessionListener {

  @Override
  public void launcherSessionOpened(LauncherSession session) {
    TimeZone.setDefault(TimeZone.getTimeZone(zoneAt(Instant.now())));
  }

  /** The offset at which {@code now} is between 06:00 and 07:00 (offsets run from -18 to +18 hours). */
  static ZoneOffset zoneAt(Instant now) {
    return ZoneOffset.ofHours(6 - now.atOffset(ZoneOffset.UTC).getHour());
  }
}
