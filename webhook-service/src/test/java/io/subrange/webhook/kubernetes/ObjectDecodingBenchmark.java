package io.subrange.webhook.kubernetes;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.subrange.webhook.admission.AdmissionCall;
import io.subrange.webhook.admission.AdmissionReviewReader;
import io.subrange.webhook.admission.AdmissionTarget;
import io.subrange.webhook.admission.ObjectKind;
import io.subrange.webhook.admission.Operation;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Decoding what every Service create brings subrange, as kube-apiserver 1.20.2 sends it: the
 * reconciler's watch event of the Service (fabric8's decoding against {@link ClientSerialization}),
 * and the webhook's AdmissionReview of it: read as a tree and its object decoded from the tree
 * (managedFields kept, and dropped as subrange did until the review was read in one pass), against
 * {@link AdmissionReviewReader}'s one pass, which decodes the object as it reads it.
 * {@code benchmarks/run-webhook-service ObjectDecoding}; numbers in docs/performance.md.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgs = {"-Xms1g", "-Xmx1g"})
public class ObjectDecodingBenchmark {

  private static final String EVENT = ClientSerializationTest.SERVICE_ADDED;
  private static final byte[] REVIEW = ("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
      + "\"request\":{\"uid\":\"705ab4f5-6393-11e8-b7cc-42010a800002\",\"kind\":{\"group\":\"\",\"version\":\"v1\","
      + "\"kind\":\"Service\"},\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"services\"},"
      + "\"requestKind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Service\"},\"requestResource\":{\"group\":\"\","
      + "\"version\":\"v1\",\"resource\":\"services\"},\"name\":\"svc-1234\",\"namespace\":\"default\","
      + "\"operation\":\"CREATE\",\"userInfo\":{\"username\":\"admin\",\"groups\":[\"system:masters\","
      + "\"system:authenticated\"]},\"object\":" + EVENT.substring(EVENT.indexOf("{\"kind\""), EVENT.lastIndexOf('}'))
      + ",\"oldObject\":null,\"dryRun\":false,\"options\":{\"kind\":\"CreateOptions\",\"apiVersion\":\"meta.k8s.io/v1\"}}}")
      .getBytes(StandardCharsets.UTF_8);

  private final KubernetesSerialization fabric8 = new KubernetesSerialization();
  private final ClientSerialization subrange = new ClientSerialization();
  private final ObjectMapper mapper = new ObjectMapper();
  private final AdmissionReviewReader reader = new AdmissionReviewReader(mapper,
      List.of(AdmissionTarget.of(ObjectKind.SERVICE, Service.class, Operation.CREATE, Operation.UPDATE)));

  @Benchmark
  public Object watchEventFabric8() {
    return fabric8.unmarshal(EVENT, WatchEvent.class);
  }

  @Benchmark
  public Object watchEventSubrange() {
    return subrange.unmarshal(EVENT, WatchEvent.class);
  }

  /** What admission did before managedFields were dropped: the tree, then the object decoded. */
  @Benchmark
  public Object admissionObjectWithManagedFields() throws Exception {
    JsonNode review = mapper.readTree(REVIEW);
    return mapper.treeToValue(review.path("request").path("object"), Service.class);
  }

  /** What admission did before the review was read in one pass: the tree, managedFields dropped, then the object decoded. */
  @Benchmark
  public Object admissionObjectFromTree() throws Exception {
    JsonNode review = mapper.readTree(REVIEW);
    JsonNode object = review.path("request").path("object");
    ((ObjectNode) object.path("metadata")).remove("managedFields");
    return mapper.treeToValue(object, Service.class);
  }

  @Benchmark
  public Object admissionObjectSubrange() {
    AdmissionCall call = reader.read(REVIEW);
    return call.object().decode(Service.class, "request.object", call.kind());
  }
}
