"""kube-apiserver's validation of the objects the scheduler reads, done once, here.

Upstream validates every object on create (``pkg/apis/core/validation``,
``pkg/apis/scheduling/validation``, ``pkg/apis/policy/validation``, apimachinery's
``ValidateObjectMeta`` and ``util/validation``). The object constructors of
:mod:`kubesched.api.objects` and :mod:`kubesched.api.podgroup` call these checks after
decoding, so ``kubesched simulate`` and the embedded API server reject exactly what a real
API server rejects, with its messages and field paths.

Upstream collects every error; a :class:`~kubesched.api.errors.DecodeError` carries one,
so each check raises the first error in upstream's order (map entries in the order given).

    field       upstream's field errors (Invalid, Required, ...) and how values print
    strings     IsDNS1123Label / Subdomain, IsQualifiedName, IsValidLabelValue, ...
    meta        ObjectMeta, labels, annotations, label selectors
    resources   resource names and quantities, requests against limits
    scheduling  affinity, tolerations, topology spread constraints
    pod         ValidatePodCreate: metadata, containers, pod spec
    kinds       Node, Namespace, PriorityClass, PodDisruptionBudget, PodGroup
"""

from kubesched.api.validation.field import GoJSON, go_json, go_quote
from kubesched.api.validation.kinds import (
    HIGHEST_USER_DEFINABLE_PRIORITY, SYSTEM_CRITICAL_PRIORITY, SYSTEM_PRIORITY_CLASS_VALUES,
    validate_namespace, validate_node, validate_pdb, validate_pod_group, validate_priority_class,
)
from kubesched.api.validation.meta import (
    string_map, validate_annotations, validate_label_selector, validate_labels, validate_object_meta,
)
from kubesched.api.validation.pod import PodParts, validate_pod
from kubesched.api.validation.strings import (
    is_dns1035_label, is_dns1123_label, is_dns1123_subdomain, is_qualified_name, is_valid_label_value,
    is_valid_percent, is_valid_port_name,
)

__all__ = [
    "GoJSON", "HIGHEST_USER_DEFINABLE_PRIORITY", "PodParts", "SYSTEM_CRITICAL_PRIORITY",
    "SYSTEM_PRIORITY_CLASS_VALUES", "go_json", "go_quote", "is_dns1035_label", "is_dns1123_label",
    "is_dns1123_subdomain", "is_qualified_name", "is_valid_label_value", "is_valid_percent",
    "is_valid_port_name", "string_map", "validate_annotations", "validate_label_selector", "validate_labels",
    "validate_namespace", "validate_node", "validate_object_meta", "validate_pdb", "validate_pod",
    "validate_pod_group", "validate_priority_class",
]
