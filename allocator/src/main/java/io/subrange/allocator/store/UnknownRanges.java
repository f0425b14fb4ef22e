package io.subrange.allocator.store;

import io.subrange.allocator.ip.ServiceIpPool;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.port.PortRange;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * The ranges whose state is not loaded yet, and the refusal ({@link StoreUnavailableException})
 * a request that needs one of them gets: once {@link AllocationEngine#requireLoadedState
 * loaded state is required}, a range serves only after its stored state was loaded, so nothing is
 * handed out that the cluster may already hold.
 *
 * <p>Not synchronized: {@link AllocationEngine} calls it only under its own lock.
 */
final class UnknownRanges {

  /** The engine's pools (by family, added to as ranges come), to name a range in a refusal. */
  private final Map<IpFamily, ServiceIpPool> pools;
  private final PortRange nodePortRange;
  private final Set<RangeKey> unknown = new LinkedHashSet<>();
  private boolean loadedStateRequired;

  UnknownRanges(Map<IpFamily, ServiceIpPool> pools, PortRange nodePortRange) {
    this.pools = pools;
    this.nodePortRange = nodePortRange;
  }

  /** From now on ranges serve only once loaded: {@code served} (every range now) starts unknown. */
  void requireLoadedState(Collection<RangeKey> served) {
    loadedStateRequired = true;
    unknown.addAll(served);
  }

  /** A range was added: unknown until loaded, when loaded state is required. */
  void added(RangeKey key) {
    if (loadedStateRequired) {
      unknown.add(key);
    }
  }

  /** A range was removed. */
  void removed(RangeKey key) {
    unknown.remove(key);
  }

  /**
   * The state of {@code keys} is being replaced: they are unknown until {@link #loaded}, when
   * loaded state is required.
   */
  void reloading(Collection<RangeKey> keys) {
    if (loadedStateRequired) {
      unknown.addAll(keys);
    }
  }

  /** The state of {@code key} is loaded. */
  void loaded(RangeKey key) {
    unknown.remove(key);
  }

  boolean contains(RangeKey key) {
    return unknown.contains(key);
  }

  /** A copy of the unknown ranges, in the order they became unknown. */
  Set<RangeKey> copy() {
    return new LinkedHashSet<>(unknown);
  }

  void requireKnown(IpFamily family) {
    if (isUnknown(family)) {
      throw notLoaded(firstUnknown(family));
    }
  }

  void requireKnown(RangeKey key) {
    if (unknown.contains(key)) {
      throw notLoaded(key);
    }
  }

  void requireKnownPodCidrs() {
    for (RangeKey key : unknown) {
      if (key.kind() == RangeKey.Kind.POD_CIDRS) {
        throw notLoaded(key);
      }
    }
  }

  boolean isUnknown(IpFamily family) {
    return firstUnknown(family) != null;
  }

  RangeKey firstUnknown(IpFamily family) {
    return unknown.stream().filter(k -> k.kind() == RangeKey.Kind.SERVICE_IPS && k.family() == family)
        .findFirst().orElse(null);
  }

  StoreUnavailableException notLoaded(RangeKey key) {
    String what = switch (key.kind()) {
      case SERVICE_IPS -> "Service range " + key.name() + " (" + pools.get(key.family()).ranges().get(key.name()) + ")";
      case NODE_PORTS -> "the NodePort range " + nodePortRange;
      case POD_CIDRS -> "ClusterCIDR " + key.name();
    };
    return new StoreUnavailableException("the allocation state of " + what + " is not loaded yet (subrange's"
        + " reconciler rebuilds it from the cluster when it is missing), so nothing was allocated; retry shortly");
  }
}
