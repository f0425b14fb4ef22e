package io.subrange.webhook.admission;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceSpec;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponseBuilder;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionReview;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionReviewBuilder;
import io.fabric8.zjsonpatch.DiffFlags;
import io.fabric8.zjsonpatch.JsonDiff;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
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
 * What the mutating webhook does around a NodePort Service create besides allocating: decode the
 * review's object, take the patch scope's snapshot, apply what the allocation sets (ClusterIP,
 * families, a NodePort), take the JSON Patch and write the AdmissionReview answer; and the same as
 * subrange did it before {@link JsonPatchDiff} (zjsonpatch's diff, the patch as a tree, the answer
 * built and written through the fabric8 model). {@code decode} alone is what both start with.
 * {@code benchmarks/run-webhook-service AdmissionAnswer}; numbers in docs/performance.md.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgs = {"-Xms1g", "-Xmx1g"})
public class AdmissionAnswerBenchmark {

  /** A create as kube-apiserver 1.20.2 sends it to mutating admission (benchmarks/admission/mutate.lua's). */
  static final byte[] REVIEW = """
      {"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{\
      "uid":"705ab4f5-6393-11e8-b7cc-000000000001","kind":{"group":"","version":"v1","kind":"Service"},\
      "resource":{"group":"","version":"v1","resource":"services"},\
      "requestKind":{"group":"","version":"v1","kind":"Service"},\
      "requestResource":{"group":"","version":"v1","resource":"services"},\
      "name":"svc-1","namespace":"load","operation":"CREATE",\
      "userInfo":{"username":"kubernetes-admin","groups":["system:masters","system:authenticated"]},\
      "object":{"kind":"Service","apiVersion":"v1","metadata":{"name":"svc-1","namespace":"load",\
      "creationTimestamp":null,"labels":{"app":"load"},"managedFields":[{"manager":"fabric8-kubernetes-client",\
      "operation":"Update","apiVersion":"v1","time":"2026-11-27T13:37:25Z","fieldsType":"FieldsV1",\
      "fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:externalTrafficPolicy":{},\
      "f:ports":{".":{},"k:{\\"port\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:name":{},"f:port":{},\
      "f:protocol":{},"f:targetPort":{}}},"f:sessionAffinity":{},"f:type":{}}}}]},\
      "spec":{"ports":[{"name":"http","protocol":"TCP","port":80,"targetPort":8080}],"type":"NodePort",\
      "sessionAffinity":"None","externalTrafficPolicy":"Cluster"},"status":{"loadBalancer":{}}},\
      "oldObject":null,"dryRun":false,\
      "options":{"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1"}}}""".getBytes(StandardCharsets.UTF_8);

  private static final PatchScope<Service> SPEC = PatchScope.field("spec", Service::getSpec);

  private final ObjectMapper mapper = new ObjectMapper();
  private final AdmissionReviewReader reader = new AdmissionReviewReader(mapper,
      List.of(AdmissionTarget.of(ObjectKind.SERVICE, Service.class, Operation.CREATE, Operation.UPDATE)));

  @Benchmark
  public Object decode() {
    AdmissionCall call = reader.read(REVIEW);
    return call.object().decode(Service.class, "request.object", call.kind());
  }


  @Benchmark
  public byte[] decodePatchAndAnswer() {
    AdmissionCall call = reader.read(REVIEW);
    Service service = call.object().decode(Service.class, "request.object", call.kind());
    PatchScope.Snapshot<Service> before = SPEC.before(mapper, service);
    allocate(service.getSpec());
    return AdmissionAnswers.json(mapper, AdmissionAnswers.patched(call.uid(), before.patchTo(service), List.of()));
  }


  @Benchmark
  public byte[] decodePatchAndAnswerZjsonpatch() throws Exception {
    AdmissionCall call = reader.read(REVIEW);
    Service service = call.object().decode(Service.class, "request.object", call.kind());
    JsonNode before = mapper.valueToTree(service.getSpec());
    allocate(service.getSpec());
    JsonNode patch = zjsonpatch(before, service);
    AdmissionReview review = new AdmissionReviewBuilder().withApiVersion(AdmissionReviewReader.API_VERSION)
        .withKind(AdmissionReviewReader.KIND).withResponse(new AdmissionResponseBuilder().withUid(call.uid())
            .withAllowed(true).withPatchType("JSONPatch")
            .withPatch(Base64.getEncoder().encodeToString(mapper.writeValueAsBytes(patch))).build())
        .build();
    return mapper.writeValueAsBytes(review);
  }

  private JsonNode zjsonpatch(JsonNode before, Service after) {
    JsonNode patch = JsonDiff.asJson(before, mapper.valueToTree(after.getSpec()),
        DiffFlags.dontNormalizeOpIntoMoveAndCopy());
    for (JsonNode operation : (ArrayNode) patch) {
      ((ObjectNode) operation).put("path", "/spec" + operation.path("path").asText());
    }
    return patch;
  }

  /** What ServiceAllocationPlan sets on a single-stack NodePort create. */
  private static void allocate(ServiceSpec spec) {
    spec.setClusterIP("10.96.12.34");
    spec.setClusterIPs(List.of("10.96.12.34"));
    spec.setIpFamilies(List.of("IPv4"));
    spec.setIpFamilyPolicy("SingleStack");
    spec.getPorts().get(0).setNodePort(30123);
  }
}
