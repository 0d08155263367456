"""apimachinery's meta/v1 types every kind embeds (ObjectMeta, LabelSelector, ...)."""

from __future__ import annotations

from kubesched.server.apiserver.typedefs.dsl import (
    Opts,
    BOOL, INT64, STRING, STRING_MAP, STRING_SET, TIME, T, atomic, define, listmap,
)

META = "io.k8s.apimachinery.pkg.apis.meta.v1."

OWNER_REFERENCE = define(
    META + "OwnerReference", "The object that owns this one; deleting it deletes this one.",
    Opts(("apiVersion", "kind", "name", "uid"), map_type="atomic"),
    apiVersion=STRING("API version of the owner."), kind=STRING("Kind of the owner."),
    name=STRING("Name of the owner."), uid=STRING("UID of the owner."),
    controller=BOOL("Whether the owner is the managing controller."),
    blockOwnerDeletion=BOOL("Whether foreground deletion of the owner waits for this object."))

MANAGED_FIELDS_ENTRY = define(
    META + "ManagedFieldsEntry", "The fields one manager owns, for server-side apply.",
    manager=STRING("Who manages these fields."), operation=STRING("Apply or Update."),
    apiVersion=STRING("Version the fields are written in."), time=TIME("When the entry last changed."),
    fieldsType=STRING("Format of fieldsV1: always FieldsV1."),
    fieldsV1=T("object", desc="The owned fields as a tree of f:, k:, v: and i: keys."),
    subresource=STRING("Subresource the fields were written through, if any."))

OBJECT_META = define(
    META + "ObjectMeta", "Metadata every persisted object has: name, namespace, labels, owners.",
    name=STRING("Unique name within the namespace."),
    generateName=STRING("Prefix the server completes into a unique name when name is empty."),
    namespace=STRING("Namespace of the object; empty for cluster-scoped kinds."),
    selfLink=STRING("Deprecated; never set."), uid=STRING("Unique id assigned by the server."),
    resourceVersion=STRING("Opaque version used for optimistic concurrency and watches."),
    generation=INT64("Sequence number of changes to the desired state."),
    creationTimestamp=TIME("When the object was created."),
    deletionTimestamp=TIME("When graceful deletion began."),
    deletionGracePeriodSeconds=INT64("Seconds allowed for graceful termination."),
    labels=STRING_MAP("Key/value pairs used by selectors."),
    annotations=STRING_MAP("Key/value pairs for tools and extensions."),
    ownerReferences=listmap(OWNER_REFERENCE, "uid")("Objects this one depends on."),
    finalizers=STRING_SET("Conditions that must clear before the object is deleted."),
    managedFields=atomic(MANAGED_FIELDS_ENTRY)("Which manager owns which fields."))

LABEL_SELECTOR_REQUIREMENT = define(
    META + "LabelSelectorRequirement", "A label key, an operator and values.", ("key", "operator"),
    key=STRING("Label key."), operator=STRING("In, NotIn, Exists or DoesNotExist."),
    values=atomic(STRING)("Values for In and NotIn."))

LABEL_SELECTOR = define(
    META + "LabelSelector", "Selects objects by labels; the terms are ANDed.", Opts(map_type="atomic"),
    matchLabels=STRING_MAP("Labels that must match exactly."),
    matchExpressions=atomic(LABEL_SELECTOR_REQUIREMENT)("Requirements on labels."))

