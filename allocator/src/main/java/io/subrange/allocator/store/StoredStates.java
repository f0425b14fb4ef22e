package io.subrange.allocator.store;

import io.subrange.allocator.band.BandedAllocators;
import io.subrange.allocator.ip.ServiceIpPool;
import io.subrange.allocator.ip.ServiceIpRange;
import io.subrange.allocator.net.AddressFormatException;
import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpAddress;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.podcidr.ClusterCidr;
import io.subrange.allocator.podcidr.ClusterCidrAllocator;
import io.subrange.allocator.podcidr.ClusterCidrUsage;
import io.subrange.allocator.podcidr.PodCidrAllocation;
import io.subrange.allocator.podcidr.PodCidrAllocationException;
import io.subrange.allocator.port.PortAllocator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * The engine's stored state going out and coming in: a range's state ({@link RangeState}) or one
 * window of it ({@link RangeWindow}) exported to be written, and states another replica wrote
 * loaded back over the allocators and the holder ledgers. Kept apart from the allocation paths
 * of {@link AllocationEngine}, which it shares its allocators and ledgers with.
 *
 * <p>Not synchronized: the store calls it only under its own lock.
 */
final class StoredStates {

  private final Map<IpFamily, ServiceIpPool> pools;
  private final PortAllocator nodePorts;
  private final ClusterCidrAllocator podCidrs;
  private final Map<String, Long> nodesSince;
  private final Map<IpFamily, HolderLedger<IpAddress>> addressHolders;
  private final HolderLedger<Integer> portHolders;
  private final UnknownRanges unknown;
  /** Every range the engine serves now. */
  private final Supplier<List<RangeKey>> served;

  StoredStates(Map<IpFamily, ServiceIpPool> pools, PortAllocator nodePorts, ClusterCidrAllocator podCidrs,
      Map<String, Long> nodesSince, Map<IpFamily, HolderLedger<IpAddress>> addressHolders,
      HolderLedger<Integer> portHolders, UnknownRanges unknown, Supplier<List<RangeKey>> served) {
    this.pools = pools;
    this.nodePorts = nodePorts;
    this.podCidrs = podCidrs;
    this.nodesSince = nodesSince;
    this.addressHolders = addressHolders;
    this.portHolders = portHolders;
    this.unknown = unknown;
    this.served = served;
  }

  // ---- whole ranges -----------------------------------------------------------------------

  /** See {@link AllocationEngine#export}. */
  RangeState export(RangeKey key) {
    return switch (key.kind()) {
      case SERVICE_IPS -> {
        ServiceIpPool pool = pools.get(key.family());
        ServiceIpRange range = pool.range(key.name());
        HolderLedger<IpAddress> holders = addressHolders.get(key.family());
        List<IpAddress> taken = new ArrayList<>();
        pool.forEachTaken(key.name(), taken::add);
        boolean bitmap = BandedAllocators.isBitmap(range.size());
        if (!bitmap) {
          Collections.sort(taken);  // a bitmap lists them in order already
        }
        List<RangeState.Entry> entries = new ArrayList<>(taken.size());
        taken.forEach(address -> entries.add(entry(address.toString(), holders.held(address))));
        yield new RangeState(key, range.cidr().toString(), bitmap ? RangeState.RANGE_ALLOCATION : RangeState.SPARSE,
            range.staticBandSize(), pool.snapshot(key.name()), entries);
      }
      case NODE_PORTS -> {
        List<RangeState.Entry> entries = new ArrayList<>();
        nodePorts.forEachTaken(port -> entries.add(entry(String.valueOf(port), portHolders.held(port))));
        yield new RangeState(key, nodePorts.range().toString(), RangeState.RANGE_ALLOCATION,
            nodePorts.range().staticBandSize(), nodePorts.snapshot(), entries);
      }
      case POD_CIDRS -> {
        List<RangeState.Entry> entries = new ArrayList<>();
        for (String node : podCidrs.nodesUsing(key.name())) {
          entries.add(new RangeState.Entry(blocksText(podCidrs.allocationOf(node).orElseThrow()), Holder.node(node),
              nodesSince.getOrDefault(node, 0L)));
        }
        ClusterCidr spec = podCidrs.clusterCidr(key.name()).orElseThrow();
        String range = Arrays.asList(spec.ipv4(), spec.ipv6()).stream().filter(c -> c != null).map(Cidr::toString)
            .collect(Collectors.joining(","));
        yield new RangeState(key, range, RangeState.NODE_LEDGER, 0, new byte[0], entries);
      }
    };
  }

  /** See {@link AllocationEngine#restore}. */
  Map<RangeKey, String> restore(RangeKey.Kind kind, IpFamily family, List<RangeState> states) {
    Map<RangeKey, String> rejected = new LinkedHashMap<>();
    List<RangeKey> keys = served.get().stream().filter(k -> k.kind() == kind && Objects.equals(k.family(), family))
        .toList();
    unknown.reloading(keys);
    switch (kind) {
      case SERVICE_IPS -> restoreServiceIps(family, states, rejected);
      case NODE_PORTS -> restoreNodePorts(states, rejected);
      case POD_CIDRS -> restorePodCidrs(states, rejected);
    }
    states.stream().map(RangeState::key).filter(k -> keys.contains(k) && !rejected.containsKey(k))
        .forEach(unknown::loaded);
    return rejected;
  }

  private void restoreServiceIps(IpFamily family, List<RangeState> states, Map<RangeKey, String> rejected) {
    ServiceIpPool pool = pools.get(family);
    if (pool == null) {
      return;
    }
    HolderLedger<IpAddress> holders = addressHolders.get(family);
    pool.clear();
    holders.clear();
    for (RangeState state : states) {
      String name = state.key().name();
      if (!pool.ranges().containsKey(name)) {
        continue;  // a range this replica does not serve (yet)
      }
      try {
        if (!pool.ranges().get(name).toString().equals(state.range())) {
          throw new IllegalArgumentException("it was made for " + state.range() + ", not " + pool.ranges().get(name));
        }
        List<Map.Entry<IpAddress, Held>> held = new ArrayList<>();
        for (RangeState.Entry entry : state.entries()) {
          // A holder line naming no value of this range is left out, not fatal: the allocation
          // bits say what is taken; a holder on record only names who took it.
          IpAddress address = addressOrNull(entry.value());
          if (address == null || !pool.range(name).canAssign(address)) {
            continue;
          }
          if (entry.holder() != null) {
            held.add(Map.entry(address, asHeld(entry)));
          }
        }
        pool.restore(name, state.allocation());
        // A line naming a value the bits leave free (a hand-edited or damaged shard) is left
        // out too: kept, a retry by its holder would get back a value the allocator may give
        // to another object.
        held.stream().filter(h -> pool.isAllocated(h.getKey())).forEach(h -> holders.record(h.getKey(), h.getValue()));
      } catch (IllegalArgumentException e) {
        rejected.put(state.key(), e.getMessage());
      }
    }
  }

  private void restoreNodePorts(List<RangeState> states, Map<RangeKey, String> rejected) {
    nodePorts.restore(new byte[0]);
    portHolders.clear();
    for (RangeState state : states) {
      try {
        if (!nodePorts.range().toString().equals(state.range())) {
          throw new IllegalArgumentException("it was made for " + state.range() + ", not " + nodePorts.range());
        }
        Map<Integer, Held> held = new HashMap<>();
        for (RangeState.Entry entry : state.entries()) {
          int port = portOrMinusOne(entry.value());
          if (!nodePorts.range().contains(port)) {
            continue;  // as for addresses: left out, not fatal
          }
          if (entry.holder() != null) {
            held.put(port, asHeld(entry));
          }
        }
        nodePorts.restore(state.allocation());
        held.forEach((port, holder) -> {
          if (nodePorts.isAllocated(port)) {  // as for addresses: the bits are the authority
            portHolders.record(port, holder);
          }
        });
      } catch (IllegalArgumentException e) {
        rejected.put(state.key(), e.getMessage());
      }
    }
  }

  private void restorePodCidrs(List<RangeState> states, Map<RangeKey, String> rejected) {
    for (ClusterCidrUsage clusterCidr : podCidrs.usage()) {
      for (String node : podCidrs.nodesUsing(clusterCidr.name())) {
        podCidrs.release(node);
      }
    }
    nodesSince.clear();
    for (RangeState state : states) {
      if (podCidrs.clusterCidr(state.key().name()).isEmpty()) {
        continue;
      }
      List<String> placed = new ArrayList<>();
      try {
        for (RangeState.Entry entry : state.entries()) {
          List<Cidr> blocks = Arrays.stream(entry.value().split(",")).map(Cidr::parse).toList();
          String node = entry.holder() == null ? "" : entry.holder().name();
          if (node.isEmpty()) {
            throw new IllegalArgumentException("blocks " + entry.value() + " have no node");
          }
          try {
            podCidrs.occupyIn(state.key().name(), node, blocks);
          } catch (PodCidrAllocationException e) {
            throw new IllegalArgumentException("pod CIDRs " + entry.value() + " of node " + node + " do not fit: "
                + e.getMessage(), e);
          }
          placed.add(node);
          nodesSince.put(node, entry.sinceEpochSeconds());
        }
      } catch (IllegalArgumentException e) {
        placed.forEach(node -> {
          podCidrs.release(node);
          nodesSince.remove(node);
        });
        rejected.put(state.key(), e.getMessage());
      }
    }
  }

  // ---- windows ----------------------------------------------------------------------------

  /** See {@link AllocationEngine#exportWindow}. */
  RangeWindow exportWindow(RangeKey key, long from, long to) {
    BitSet taken = new BitSet();
    List<RangeState.Entry> entries = new ArrayList<>();
    switch (key.kind()) {
      case SERVICE_IPS -> {
        ServiceIpPool pool = pools.get(key.family());
        ServiceIpRange range = pool.range(key.name());
        HolderLedger<IpAddress> holders = addressHolders.get(key.family());
        pool.forEachTakenIn(key.name(), from, to, address -> {
          taken.set((int) (range.offsetOf(address) - from));
          entries.add(entry(address.toString(), holders.held(address)));
        });
      }
      case NODE_PORTS -> nodePorts.forEachTakenIn(from, to, port -> {
        taken.set((int) (port - nodePorts.range().first() - from));
        entries.add(entry(String.valueOf(port), portHolders.held(port)));
      });
      case POD_CIDRS -> throw new IllegalArgumentException("pod CIDR states are stored whole");
    }
    return new RangeWindow(from, to, taken, entries);
  }

  /** See {@link AllocationEngine#restoreWindow}. */
  boolean restoreWindow(RangeKey key, String range, RangeWindow window) {
    if (unknown.contains(key)) {
      return false;
    }
    switch (key.kind()) {
      case SERVICE_IPS -> {
        ServiceIpPool pool = pools.get(key.family());
        if (pool == null || !pool.ranges().containsKey(key.name()) || pool.overlapsAnother(key.name())
            || !BandedAllocators.isBitmap(pool.range(key.name()).size())
            || !pool.ranges().get(key.name()).toString().equals(range)) {
          return false;
        }
        ServiceIpRange serviceRange = pool.range(key.name());
        BitSet taken = window.taken();
        Map<IpAddress, Held> incoming = new HashMap<>();
        for (RangeState.Entry entry : window.entries()) {
          IpAddress address = addressOrNull(entry.value());
          long offset = address == null ? ServiceIpRange.NOT_ASSIGNABLE : serviceRange.offsetOf(address);
          if (entry.holder() != null && offset != ServiceIpRange.NOT_ASSIGNABLE && window.covers(offset)
              && taken.get((int) (offset - window.from()))) {
            incoming.put(address, asHeld(entry));
          }
        }
        List<IpAddress> before = new ArrayList<>();
        pool.forEachTakenIn(key.name(), window.from(), window.to(), before::add);
        addressHolders.get(key.family()).replaceWindow(before, incoming);
        pool.replaceIn(key.name(), window.from(), window.to(), taken);
      }
      case NODE_PORTS -> {
        if (!nodePorts.range().toString().equals(range)) {
          return false;
        }
        BitSet taken = window.taken();
        Map<Integer, Held> incoming = new HashMap<>();
        for (RangeState.Entry entry : window.entries()) {
          int port = portOrMinusOne(entry.value());
          long offset = nodePorts.range().contains(port) ? port - nodePorts.range().first() : -1;
          if (entry.holder() != null && window.covers(offset) && taken.get((int) (offset - window.from()))) {
            incoming.put(port, asHeld(entry));
          }
        }
        List<Integer> before = new ArrayList<>();
        nodePorts.forEachTakenIn(window.from(), window.to(), before::add);
        portHolders.replaceWindow(before, incoming);
        nodePorts.replaceIn(window.from(), window.to(), taken);
      }
      case POD_CIDRS -> {
        return false;
      }
    }
    return true;
  }

  // ---- text forms -------------------------------------------------------------------------

  /** A node's blocks as its holder line names them: "10.244.1.0/24,fd00::100/120". */
  static String blocksText(PodCidrAllocation allocation) {
    return allocation.podCidrs().stream().map(Cidr::toString).collect(Collectors.joining(","));
  }

  private static RangeState.Entry entry(String value, Held held) {
    return held == null ? new RangeState.Entry(value, null, 0)
        : new RangeState.Entry(value, held.holder(), held.since(), held.first());
  }

  private static Held asHeld(RangeState.Entry entry) {
    return new Held(entry.holder(), entry.sinceEpochSeconds(), entry.firstEpochSeconds());
  }

  private static IpAddress addressOrNull(String text) {
    try {
      return IpAddress.parse(text);
    } catch (AddressFormatException e) {
      return null;
    }
  }

  private static int portOrMinusOne(String text) {
    try {
      return Integer.parseInt(text);
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
