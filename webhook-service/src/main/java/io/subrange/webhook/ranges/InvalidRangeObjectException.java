package io.subrange.webhook.ranges;

/**
 * A ServiceCIDR or ClusterCIDR that cannot be used, with the field at fault and what is wrong
 * with it. The message is {@code "<field>: <problem>"}, as an admission denial shows it.
 */
public final class InvalidRangeObjectException extends IllegalArgumentException {

  private final String field;
  private final String problem;

  public InvalidRangeObjectException(String field, String problem) {
    super(field + ": " + problem);
    this.field = field;
    this.problem = problem;
  }

  /** The field path, e.g. {@code spec.cidrs[1]}. */
  public String field() {
    return field;
  }

  /** What is wrong and what to do, without the field. */
  public String problem() {
    return problem;
  }
}
