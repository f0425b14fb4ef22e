package io.subrange.webhook.admission;

import static org.assertj.core.api.Assertions.assertThat;

import io.subrange.allocator.store.StoreUnavailableException;
import org.junit.jupiter.api.Test;

class AllocationDenialsTest {

  @Test
  void anUnavailableStoreIsA503WithTheStoresOwnMessage() {
    AdmissionDenied fromStore = AllocationDenials.deny("spec", new StoreUnavailableException(
        "subrange could not store the allocation for Service a/b within 3200 ms, so nothing was allocated;"
            + " retry shortly"), "");
    assertThat(fromStore.code()).isEqualTo(503);
    assertThat(fromStore.getMessage()).isEqualTo("spec: subrange could not store the allocation for Service a/b"
        + " within 3200 ms, so nothing was allocated; retry shortly");
  }
}
