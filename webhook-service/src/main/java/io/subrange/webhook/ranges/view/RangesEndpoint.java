package io.subrange.webhook.ranges.view;

import io.subrange.allocator.podcidr.ClusterCidrUsage;
import io.subrange.allocator.store.AllocationStore;
import io.subrange.allocator.store.RangeView;
import java.util.List;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.stereotype.Component;

/**
 * {@code GET /ranges} on the management port: every Service range, the NodePort range and every
 * ClusterCIDR with their bands, used and free counts and the holders of the static band. JSON
 * ({@link RangesDocument}) by default, a short text layout ({@link RangesText}) for
 * {@code Accept: text/plain}.
 */
@Component
@Endpoint(id = "ranges")
public class RangesEndpoint {

  private final AllocationStore store;

  public RangesEndpoint(AllocationStore store) {
    this.store = store;
  }

  @ReadOperation(producesFrom = RangesFormat.class)
  public WebEndpointResponse<Object> ranges(RangesFormat format) {
    List<RangeView> views = store.describeRanges();
    List<ClusterCidrUsage> podCidrs = store.podCidrUsage();
    Object body = switch (format) {
      case JSON -> RangesDocument.of(views, podCidrs);
      case TEXT -> RangesText.render(views, podCidrs);
    };
    return new WebEndpointResponse<>(body, format);
  }
}
