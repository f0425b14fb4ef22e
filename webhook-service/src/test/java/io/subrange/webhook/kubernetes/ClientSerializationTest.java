package io.subrange.webhook.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.subrange.webhook.ranges.model.ServiceCIDR;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Watch events decode to what fabric8's own serialization makes of them, managedFields left out,
 * whether or not they take the direct path; the events are as kube-apiserver 1.20.2 sent them.
 */
class ClientSerializationTest {

  /** A NodePort Service created with kubectl and given its values by subrange, as watched. */
  static final String SERVICE_ADDED = """
      {"type":"ADDED","object":{"kind":"Service","apiVersion":"v1","metadata":{"name":"svc-1234",\
      "namespace":"default","uid":"a6f62260-17da-450d-86f6-806f2144005b","resourceVersion":"233",\
      "creationTimestamp":"2026-11-27T13:37:25Z","managedFields":[{"manager":"kubectl-create",\
      "operation":"Update","apiVersion":"v1","time":"2026-11-27T13:37:25Z","fieldsType":"FieldsV1",\
      "fieldsV1":{"f:spec":{"f:externalTrafficPolicy":{},"f:ports":{".":{},\
      "k:{\\"port\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{},\
      "f:targetPort":{}}},"f:sessionAffinity":{},"f:type":{}}}}]},"spec":{"ports":[{"name":"http",\
      "protocol":"TCP","port":80,"targetPort":80,"nodePort":30505}],"clusterIP":"10.104.148.0",\
      "clusterIPs":["10.104.148.0"],"type":"NodePort","sessionAffinity":"None",\
      "externalTrafficPolicy":"Cluster","ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack"},\
      "status":{"loadBalancer":{}}}}
      """;

  private final ClientSerialization lean = new ClientSerialization();
  private final KubernetesSerialization fabric8 = new KubernetesSerialization();

  @Test
  void aServiceEventDecodesDirectlyToWhatFabric8MakesOfItWithoutManagedFields() {
    assertThat(lean.watchEvent(SERVICE_ADDED)).as("the direct path takes it").isNotNull();

    WatchEvent ours = lean.unmarshal(SERVICE_ADDED, WatchEvent.class);
    WatchEvent theirs = fabric8.unmarshal(SERVICE_ADDED, WatchEvent.class);

    assertThat(ours.getType()).isEqualTo("ADDED");
    Service service = (Service) ours.getObject();
    Service expected = (Service) theirs.getObject();
    assertThat(expected.getMetadata().getManagedFields()).hasSize(1);
    assertThat(service.getMetadata().getManagedFields()).isEmpty();
    expected.getMetadata().setManagedFields(service.getMetadata().getManagedFields());
    assertThat(service).isEqualTo(expected);
    assertThat(service.getSpec().getPorts().get(0).getNodePort()).isEqualTo(30505);
    assertThat(service.getSpec().getClusterIPs()).containsExactly("10.104.148.0");
  }

  @Test
  void apiVersionBeforeKindAsCustomResourcesAreWrittenTakesTheDirectPathToo() {
    lean.registerKubernetesResource(ServiceCIDR.class);
    fabric8.registerKubernetesResource(ServiceCIDR.class);
    String event = """
        {"type":"MODIFIED","object":{"apiVersion":"subrange.io/v1alpha1","kind":"ServiceCIDR",\
        "metadata":{"name":"kubernetes","resourceVersion":"77","finalizers":["subrange.io/allocations"]},\
        "spec":{"cidrs":["10.96.0.0/12"]}}}
        """;

    assertThat(lean.watchEvent(event)).isNotNull();
    HasMetadata ours = (HasMetadata) lean.unmarshal(event, WatchEvent.class).getObject();
    assertThat(ours).isInstanceOf(ServiceCIDR.class).isEqualTo(fabric8.unmarshal(event, WatchEvent.class).getObject());
    assertThat(((ServiceCIDR) ours).getSpec().cidrs()).containsExactly("10.96.0.0/12");
  }

  @Test
  void eventsOfOtherShapesAreDecodedByFabric8AsBefore() {
    String[] events = {
        // an error: a Status in place of the object
        """
        {"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",\
        "message":"too old resource version: 5 (233)","reason":"Expired","code":410}}
        """,
        // a bookmark carries only a resourceVersion
        """
        {"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"240"}}}
        """,
        // a kind with no class: a generic resource
        """
        {"type":"ADDED","object":{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"size":3}}
        """,
        // kind and apiVersion not first
        """
        {"type":"ADDED","object":{"metadata":{"name":"c","namespace":"n"},"kind":"ConfigMap","apiVersion":"v1",\
        "data":{"a":"b"}}}
        """,
        // the object before the type
        """
        {"object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c"}},"type":"DELETED"}
        """,
    };
    for (String event : events) {
      assertThat(lean.unmarshal(event, WatchEvent.class)).as(event).isEqualTo(fabric8.unmarshal(event, WatchEvent.class));
    }
    assertThat(lean.watchEvent(events[0])).isNotNull();
    assertThat(((Status) lean.unmarshal(events[0], WatchEvent.class).getObject()).getCode()).isEqualTo(410);
    assertThat(lean.watchEvent(events[2])).as("no class for Widget").isNull();
    assertThat(lean.unmarshal(events[2], WatchEvent.class).getObject()).isInstanceOf(GenericKubernetesResource.class);
    assertThat(lean.watchEvent(events[3])).as("metadata first").isNull();
    assertThat(((ConfigMap) lean.unmarshal(events[3], WatchEvent.class).getObject()).getData()).containsEntry("a", "b");
    assertThat(lean.watchEvent(events[4])).as("object first").isNull();
  }

  @Test
  void brokenEventsFailAsFabric8FailsThem() {
    String cut = SERVICE_ADDED.substring(0, SERVICE_ADDED.length() / 2);
    String trailing = SERVICE_ADDED.strip() + "{}";
    assertThat(lean.watchEvent(cut)).isNull();
    assertThat(lean.watchEvent(trailing)).isNull();
    assertThatThrownBy(() -> fabric8.unmarshal(cut, WatchEvent.class)).isInstanceOf(RuntimeException.class);
    assertThatThrownBy(() -> lean.unmarshal(cut, WatchEvent.class)).isInstanceOf(RuntimeException.class);
    assertThat(outcome(() -> lean.unmarshal(trailing, WatchEvent.class)))
        .isEqualTo(outcome(() -> withManagedFieldsDropped(fabric8.unmarshal(trailing, WatchEvent.class))));
  }

  /** What a decoding gives: its result, or the class of what it threw. */
  private static Object outcome(Supplier<Object> decoding) {
    try {
      return decoding.get();
    } catch (RuntimeException e) {
      return e.getClass();
    }
  }

  private static WatchEvent withManagedFieldsDropped(WatchEvent event) {
    if (event.getObject() instanceof HasMetadata object) {
      object.getMetadata().setManagedFields(List.of());
    }
    return event;
  }
}
