package io.subrange.webhook.admission;

/**
 * The names and uid an admission request carries, checked before anything is reserved under
 * them: kube-apiserver would refuse such an object after admission anyway, and a holder with a
 * tab, a newline or megabytes in its name must never reach the allocation ledgers.
 */
final class ObjectIdentity {

  private ObjectIdentity() {
  }

  /** @throws AdmissionDenied (422) naming the field that is not a valid name or uid */
  static void check(AdmissionContext<?> context, ObjectKind kind) {
    String namespace = context.namespace();
    if (!namespace.isEmpty()) {
      refuseIf("metadata.namespace", namespace, KubernetesNames.dnsLabelProblem(namespace));
    }
    String name = context.name();
    if (!name.isEmpty()) {  // empty while generateName is pending
      String problem = kind.group().isEmpty() && kind.kind().equals("Service") ? KubernetesNames.dns1035LabelProblem(name)
          : KubernetesNames.dnsSubdomainProblem(name);
      refuseIf("metadata.name", name, problem);
    }
    String uid = context.uid();
    if (!uid.isEmpty()) {
      refuseIf("metadata.uid", uid, KubernetesNames.uidProblem(uid));
    }
  }

  private static void refuseIf(String field, String value, String problem) {
    if (problem != null) {
      throw AdmissionDenied.invalid(field + ": " + quoted(value) + " " + problem);
    }
  }

  /** The value as a person can read it in one line: control characters escaped, long ones cut. */
  static String quoted(String value) {
    StringBuilder text = new StringBuilder("\"");
    int shown = Math.min(value.length(), 80);
    for (int i = 0; i < shown; i++) {
      char c = value.charAt(i);
      if (c < 0x20 || c == 0x7f) {
        text.append(String.format("\\u%04x", (int) c));
      } else {
        text.append(c);
      }
    }
    if (shown < value.length()) {
      text.append("...(").append(value.length()).append(" characters)");
    }
    return text.append('"').toString();
  }
}
