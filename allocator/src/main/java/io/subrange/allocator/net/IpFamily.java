package io.subrange.allocator.net;

/** An IP family, named as Kubernetes names it in {@code spec.ipFamilies}. */
public enum IpFamily {
  IPV4("IPv4", 32),
  IPV6("IPv6", 128);

  private final String kubernetesName;
  private final int bits;

  IpFamily(String kubernetesName, int bits) {
    this.kubernetesName = kubernetesName;
    this.bits = bits;
  }

  /** {@code IPv4} or {@code IPv6}, the spelling of {@code spec.ipFamilies}. */
  public String kubernetesName() {
    return kubernetesName;
  }

  /** Address length in bits: 32 or 128. */
  public int bits() {
    return bits;
  }

  /** Parses {@code IPv4} / {@code IPv6} exactly as Kubernetes spells them. */
  public static IpFamily fromKubernetesName(String name) {
    for (IpFamily family : values()) {
      if (family.kubernetesName.equals(name)) {
        return family;
      }
    }
    throw new IllegalArgumentException("unknown IP family \"" + name + "\": expected IPv4 or IPv6");
  }

  @Override
  public String toString() {
    return kubernetesName;
  }
}
