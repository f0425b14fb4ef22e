package io.subrange.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.function.Supplier;

/** Small helpers shared by the end-to-end tests. */
final class E2eSupport {

  private E2eSupport() {
  }

  /** Runs a request expected to fail and returns the API server's error (status code, message). */
  static KubernetesClientException refused(Supplier<?> request) {
    try {
      Object result = request.get();
      throw new AssertionError("expected the API server to refuse the request, but it returned " + result);
    } catch (KubernetesClientException e) {
      return e;
    }
  }

  /** The offset of {@code address} from the network address of {@code cidr} (both as text). */
  static BigInteger indexIn(String cidr, String address) {
    String network = cidr.substring(0, cidr.indexOf('/'));
    return number(address).subtract(number(network));
  }

  static boolean inCidr(String cidr, String address) {
    int prefix = Integer.parseInt(cidr.substring(cidr.indexOf('/') + 1));
    byte[] net = bytes(cidr.substring(0, cidr.indexOf('/')));
    byte[] addr = bytes(address);
    if (net.length != addr.length) {
      return false;
    }
    int bits = net.length * 8;
    BigInteger mask = BigInteger.ONE.shiftLeft(bits).subtract(BigInteger.ONE)
        .xor(BigInteger.ONE.shiftLeft(bits - prefix).subtract(BigInteger.ONE));
    return new BigInteger(1, net).and(mask).equals(new BigInteger(1, addr).and(mask));
  }

  private static BigInteger number(String address) {
    return new BigInteger(1, bytes(address));
  }

  private static byte[] bytes(String address) {
    try {
      assertThat(address).as("an IP address literal").matches("[0-9a-fA-F.:]+");
      return InetAddress.getByName(address).getAddress();
    } catch (UnknownHostException e) {
      throw new AssertionError(e);
    }
  }
}
