package io.subrange.webhook.admission;

/**
 * One admission request, checked for shape but with the objects still as JSON: the mutator
 * that handles the kind decodes them into its own type.
 *
 * @param object the object as admitted (absent for DELETE)
 * @param oldObject the stored object (UPDATE and DELETE only)
 */
public record AdmissionCall(String uid, ObjectKind kind, Operation operation, String namespace, String name,
    boolean dryRun, EmbeddedObject object, EmbeddedObject oldObject) {
}
