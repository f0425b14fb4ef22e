package io.subrange.webhook.admission;

import java.util.regex.Pattern;

/** Kubernetes' rules for label keys and object names, as the API server applies them. */
public final class KubernetesNames {

  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern LABEL_NAME = Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  private static final Pattern DNS_1035_LABEL = Pattern.compile("[a-z]([-a-z0-9]*[a-z0-9])?");
  /** Object uids as the API server makes them (UUIDs); a little looser, never a separator. */
  private static final Pattern UID = Pattern.compile("[A-Za-z0-9][-A-Za-z0-9]{0,63}");
  private static final int DNS_SUBDOMAIN_MAX = 253;
  private static final int LABEL_NAME_MAX = 63;

  private KubernetesNames() {
  }

  /** Why {@code key} is not a label key ("example.com/zone", "zone"), or null when it is one. */
  public static String labelKeyProblem(String key) {
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
  public static String dnsSubdomainProblem(String name) {
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

  /** Why {@code name} is not a DNS-1123 label (a namespace), or null when it is one. */
  public static String dnsLabelProblem(String name) {
    return patternProblem(name, DNS_LABEL, LABEL_NAME_MAX,
        "must consist of lower case letters, digits or '-', and start and end with a letter or digit");
  }

  /** Why {@code name} is not a DNS-1035 label (a Service name), or null when it is one. */
  public static String dns1035LabelProblem(String name) {
    return patternProblem(name, DNS_1035_LABEL, LABEL_NAME_MAX,
        "must consist of lower case letters, digits or '-', start with a letter and end with a letter or digit");
  }

  /** Why {@code uid} is not an object uid, or null when it is one. */
  public static String uidProblem(String uid) {
    return patternProblem(uid, UID, 64, "must be a UUID (letters, digits and '-')");
  }

  private static String patternProblem(String value, Pattern pattern, int max, String rule) {
    if (value == null || value.isEmpty()) {
      return "must not be empty";
    }
    if (value.length() > max) {
      return "must be at most " + max + " characters";
    }
    return pattern.matcher(value).matches() ? null : rule;
  }
}
