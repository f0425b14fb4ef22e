package io.subrange.webhook.admission;

import static org.assertj.core.api.Assertions.assertThat;

import io.subrange.allocator.store.StoreUnavailableException;
import org.junit.jupiter.api.Test;

class AllocationDenialsTest {

  @Test
  void anUnavailableStoreIsA503ThatSaysToRetryOnce() {
    AdmissionDenied fromStore = AllocationDenials.deny("spec", new StoreUnavailableException(
        "subrange could not store the allocation for Service a/b within 3200 ms, so nothing was allocated;"
            + " retry shortly"), "");
    assertThat(fromStore.code()).isEqualTo(503);
    assertThat(fromStore.getMessage()).startsWith("spec: subrange could not store")
        .containsOnlyOnce("retry shortly");

    AdmissionDenied bare = AllocationDenials.deny("spec", new StoreUnavailableException("etcd is away"), "");
    assertThat(bare.getMessage()).isEqualTo("spec: etcd is away; nothing was allocated, retry shortly");
  }
}
