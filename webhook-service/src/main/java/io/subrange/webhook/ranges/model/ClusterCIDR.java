package io.subrange.webhook.ranges.model;

import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;
import io.subrange.webhook.admission.ObjectKind;

/**
 * {@code networking.x-k8s.io/v1 ClusterCIDR} (KEP-2593), the resource of
 * kubernetes-sigs/node-ipam-controller: where Nodes get pod CIDRs from. It has no status.
 * Cluster-scoped, so it does not implement {@code Namespaced}.
 */
@Group(ClusterCIDR.GROUP)
@Version(ClusterCIDR.VERSION)
@Kind(ClusterCIDR.KIND)
@Plural(ClusterCIDR.PLURAL)
@Singular("clustercidr")
public class ClusterCIDR extends CustomResource<ClusterCIDRSpec, Void> {

  public static final String GROUP = "networking.x-k8s.io";
  public static final String VERSION = "v1";
  public static final String KIND = "ClusterCIDR";
  public static final String PLURAL = "clustercidrs";
  /** {@code request.kind} of an admission request for this resource. */
  public static final ObjectKind OBJECT_KIND = new ObjectKind(GROUP, VERSION, KIND);

  public ClusterCIDR() {
  }

  public ClusterCIDR(String name, ClusterCIDRSpec spec) {
    getMetadata().setName(name);
    setSpec(spec);
  }
}
