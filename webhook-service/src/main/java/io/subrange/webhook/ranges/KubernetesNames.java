package io.subrange.webhook.ranges;

import java.util.regex.Pattern;

/** Kubernetes' rules for label keys and object names, as the API server applies them. */
final class KubernetesNames {

  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern LABEL_NAME = Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
  private static final int DNS_SUBDOMAIN_MAX = 253;
  private static final int LABEL_NAME_MAX = 63;

  private KubernetesNames() {
  }

  /** Why {@code key} is not a label key ("example.com/zone", "zone"), or null when it is one. */
  static String labelKeyProblem(String key) {
    if (key == null || key.isEmpty()) {
      return "a label key must not be empty";
    }
    String[] parts = key.split("/", -1);
    if (parts.length > 2) {
      return "a label key is a name with an optional DNS subdomain prefix and one \"/\", such as"
          + " \"topology.kubernetes.io/zone\"";
    }
    if (parts.length == 2) {
      if (parts[0].isEmpty()) {
        return "the prefix before \"/\" must not be empty";
      }
      String prefixProblem = dnsSubdomainProblem(parts[0]);
      if (prefixProblem != null) {
        return "the prefix \"" + parts[0] + "\" " + prefixProblem;
      }
    }
    String name = parts[parts.length - 1];
    if (name.isEmpty()) {
      return "the name part must not be empty";
    }
    if (name.length() > LABEL_NAME_MAX) {
      return "the name part must be at most " + LABEL_NAME_MAX + " characters";
    }
    if (!LABEL_NAME.matcher(name).matches()) {
      return "the name part must consist of letters, digits, '-', '_' or '.', and start and end with a letter"
          + " or digit";
    }
    return null;
  }

  /** Why {@code name} is not a DNS-1123 subdomain (a Node name), or null when it is one. */
  static String dnsSubdomainProblem(String name) {
    if (name == null || name.isEmpty()) {
      return "must not be empty";
    }
    if (name.length() > DNS_SUBDOMAIN_MAX) {
      return "must be at most " + DNS_SUBDOMAIN_MAX + " characters";
    }
    if (!DNS_SUBDOMAIN.matcher(name).matches()) {
      return "must consist of lower case letters, digits, '-' or '.', and start and end with a letter or digit";
    }
    return null;
  }
}
