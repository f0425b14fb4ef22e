package io.subrange.webhook.ranges.model;

import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;
import io.subrange.webhook.admission.ObjectKind;

/**
 * {@code subrange.io/v1alpha1 ServiceCIDR}: one Service range, or a dual-stack pair, that
 * ClusterIPs are given out of (manifests/crds/servicecidrs.subrange.io.yaml). Cluster-scoped,
 * so it does not implement {@code Namespaced}.
 */
@Group(ServiceCIDR.GROUP)
@Version(ServiceCIDR.VERSION)
@Kind(ServiceCIDR.KIND)
@Plural(ServiceCIDR.PLURAL)
@Singular("servicecidr")
public class ServiceCIDR extends CustomResource<ServiceCIDRSpec, ServiceCIDRStatus> {

  public static final String GROUP = "subrange.io";
  public static final String VERSION = "v1alpha1";
  public static final String KIND = "ServiceCIDR";
  public static final String PLURAL = "servicecidrs";
  /** {@code request.kind} of an admission request for this resource. */
  public static final ObjectKind OBJECT_KIND = new ObjectKind(GROUP, VERSION, KIND);

  public ServiceCIDR() {
  }

  public ServiceCIDR(String name, ServiceCIDRSpec spec) {
    getMetadata().setName(name);
    setSpec(spec);
  }
}
