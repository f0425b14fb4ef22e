package io.subrange.webhook.store;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;
import org.springframework.stereotype.Component;

/**
 * {@code allocationState} in the readiness group: down until every range has had a state since
 * start (loaded from its ConfigMaps, or rebuilt from the cluster), so a replica that could only
 * answer 503 is not sent traffic. It stays up afterwards: a range added later answers 503 for
 * itself until it is built, without taking the replica out of service.
 */
@Component("allocationState")
public class AllocationStateHealth extends AbstractHealthIndicator {

  private final ObjectProvider<RebuildableStore> stores;

  public AllocationStateHealth(ObjectProvider<RebuildableStore> stores) {
    this.stores = stores;
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) {
    RebuildableStore store = stores.getIfAvailable();
    if (store == null || store.loadedOnce()) {
      builder.up();
    } else {
      builder.outOfService().withDetail("waiting for", store.rangesToRebuild());
    }
  }
}
