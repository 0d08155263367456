"""Type-checking against the Go types (kubesched.api.schema / schemas).

Expected messages are Go's ``encoding/json`` ``UnmarshalTypeError.Error()`` (decode.go:
``json: cannot unmarshal <value> into Go struct field <Struct>.<json path> of type <type>``,
``<value>`` being ``number <literal>`` for a number that does not fit an integer field, the
struct the innermost one holding the field, the path the JSON field names from the root
without indices), with the field types of k8s.io/api ``core/v1/types.go``,
``policy/v1``, ``scheduling/v1``; the issue's reproduction (issue 11 §2) gives the
toleration case verbatim. ``intstr.IntOrString`` and ``metav1.Time`` unmarshal with a fresh
decoder (``Go value of type``); ``resource.Quantity`` returns ``ParseQuantity``'s error.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.api.errors import FieldTypeError, QuantityError
from kubesched.api.quantity import ERR_FORMAT_WRONG, parse_quantity
from kubesched.api.schema import INT32, STRING, ListOf, MapOf, Struct, check
from kubesched.api.schemas import check_object, register, schema_for

_M = "json: cannot unmarshal"
_AFF = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"


def pod(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


def container(**fields: Any) -> dict[str, Any]:
    return pod(containers=[{"name": "c", "image": "nginx", **fields}])


@pytest.mark.parametrize("obj,field,message", [
    (pod(tolerations=[{"key": "k", "operator": "Equal", "value": 5}]), "spec.tolerations[0].value",
     f"{_M} number into Go struct field Toleration.spec.tolerations.value of type string"),
    (pod(tolerations={"key": "k"}), "spec.tolerations",
     f"{_M} object into Go struct field PodSpec.spec.tolerations of type []v1.Toleration"),
    (pod(tolerations=[5]), "spec.tolerations[0]",
     f"{_M} number into Go struct field PodSpec.spec.tolerations of type v1.Toleration"),
    (pod(tolerations=[{"key": "k", "operator": 1}]), "spec.tolerations[0].operator",
     f"{_M} number into Go struct field Toleration.spec.tolerations.operator of type v1.TolerationOperator"),
    (pod(tolerations=[{"key": "k", "tolerationSeconds": "30"}]), "spec.tolerations[0].tolerationSeconds",
     f"{_M} string into Go struct field Toleration.spec.tolerations.tolerationSeconds of type int64"),
    (pod(containers="web"), "spec.containers",
     f"{_M} string into Go struct field PodSpec.spec.containers of type []v1.Container"),
    (container(ports="80"), "spec.containers[0].ports",
     f"{_M} string into Go struct field Container.spec.containers.ports of type []v1.ContainerPort"),
    (container(ports=[{"containerPort": 1.5}]), "spec.containers[0].ports[0].containerPort",
     f"{_M} number 1.5 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32"),
    (container(ports=[{"containerPort": 2**31}]), "spec.containers[0].ports[0].containerPort",
     f"{_M} number 2147483648 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32"),
    (container(command="run"), "spec.containers[0].command",
     f"{_M} string into Go struct field Container.spec.containers.command of type []string"),
    (pod(priority="5"), "spec.priority", f"{_M} string into Go struct field PodSpec.spec.priority of type int32"),
    (pod(hostNetwork="true"), "spec.hostNetwork",
     f"{_M} string into Go struct field PodSpec.spec.hostNetwork of type bool"),
    (pod(nodeSelector=["a"]), "spec.nodeSelector",
     f"{_M} array into Go struct field PodSpec.spec.nodeSelector of type map[string]string"),
    ({**pod(), "spec": []}, "spec", f"{_M} array into Go struct field Pod.spec of type v1.PodSpec"),
    ({**pod(), "metadata": {"name": "p", "labels": {"app": 1}}}, "metadata.labels",
     f"{_M} number into Go struct field ObjectMeta.metadata.labels of type string"),
    ({**pod(), "metadata": {"name": 5}}, "metadata.name",
     f"{_M} number into Go struct field ObjectMeta.metadata.name of type string"),
    (pod(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": [1]}]}]}}}),
     f"{_AFF}[0].matchExpressions[0].values[0]",
     f"{_M} number into Go struct field NodeSelectorRequirement.{_AFF}.matchExpressions.values of type string"),
    (pod(topologySpreadConstraints=[{"maxSkew": True}]), "spec.topologySpreadConstraints[0].maxSkew",
     f"{_M} bool into Go struct field TopologySpreadConstraint.spec.topologySpreadConstraints.maxSkew of type int32"),
    ({**pod(), "metadata": {"name": "p", "creationTimestamp": 5}}, "metadata.creationTimestamp",
     f"{_M} number into Go value of type string"),
    ({"kind": "Node", "metadata": {"name": "n"}, "spec": {"taints": [{"key": 1, "effect": "NoSchedule"}]}},
     "spec.taints[0].key", f"{_M} number into Go struct field Taint.spec.taints.key of type string"),
    ({"kind": "Node", "metadata": {"name": "n"}, "spec": {"taints": [{"key": "k", "effect": True}]}},
     "spec.taints[0].effect", f"{_M} bool into Go struct field Taint.spec.taints.effect of type v1.TaintEffect"),
    ({"kind": "Node", "metadata": {"name": "n"}, "status": {"images": [{"names": "a", "sizeBytes": 1}]}},
     "status.images[0].names",
     f"{_M} string into Go struct field ContainerImage.status.images.names of type []string"),
    ({"kind": "PriorityClass", "metadata": {"name": "pc"}, "value": "1"}, "value",
     f"{_M} string into Go struct field PriorityClass.value of type int32"),
    ({"kind": "PodDisruptionBudget", "metadata": {"name": "b"}, "spec": {"minAvailable": True}},
     "spec.minAvailable", f"{_M} bool into Go value of type int32"),
    ({"kind": "PodDisruptionBudget", "metadata": {"name": "b"}, "spec": {"maxUnavailable": 1.5}},
     "spec.maxUnavailable", f"{_M} number 1.5 into Go value of type int32"),
    ({"kind": "Namespace", "metadata": {"name": "n"}, "spec": {"finalizers": [1]}}, "spec.finalizers[0]",
     f"{_M} number into Go struct field NamespaceSpec.spec.finalizers of type v1.FinalizerName"),
], ids=lambda v: v if isinstance(v, str) and "." in v and " " not in v else None)
def test_type_errors_name_the_field_as_go_does(obj: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(FieldTypeError) as info:
        check_object(obj)
    assert (info.value.field, info.value.message) == (field, message)


@pytest.mark.parametrize("value", [{"a": 1}, [1], True, "lots", 1.5e400])
def test_quantities_are_parsed_while_decoding(value: Any) -> None:
    """Quantity.UnmarshalJSON hands the JSON text to ParseQuantity; an object, array or
    boolean fails its format check (ErrFormatWrong), with no field in the message."""
    with pytest.raises(QuantityError) as info:
        check_object(container(resources={"requests": {"cpu": value}}))
    assert (info.value.field, info.value.message) == ("spec.containers[0].resources.requests.cpu", ERR_FORMAT_WRONG)


def test_a_valid_object_is_returned_as_is() -> None:
    obj = pod(tolerations=[{"key": "k", "operator": "Exists"}], unknownField={"x": [1, None]})
    assert check_object(obj) is obj


def test_nulls_decode_to_zero_values_without_touching_the_input() -> None:
    """Go decodes null into the zero value, and kube-apiserver stores the re-encoded object:
    a null pointer, slice or map field is absent, a null []string item is "", a null
    []Container item an empty container, a null ResourceList value the quantity "0"."""
    obj = pod(affinity=None, tolerations=[None], nodeSelector={"a": None},
              containers=[{"name": "c", "command": [None, "x"], "resources": {"requests": {"cpu": None}}}, None])
    obj["metadata"]["labels"] = None
    before = copy.deepcopy(obj)
    out = check_object(obj)
    assert obj == before
    assert out["metadata"] == {"name": "p"}
    assert out["spec"] == {"containers": [{"name": "c", "command": ["", "x"], "resources": {"requests": {"cpu": "0"}}},
                                          {}],
                           "tolerations": [{}], "nodeSelector": {"a": ""}}


def test_unregistered_kinds_pass_and_new_kinds_register() -> None:
    raw = {"kind": "Widget", "spec": {"size": "x"}}
    assert check_object(raw) is raw
    assert schema_for("Pod") is not None and schema_for("Widget") is None
    widget = Struct("v1.Widget", spec=Struct("v1.WidgetSpec", size=INT32, tags=ListOf(STRING), labels=MapOf(STRING)))
    with pytest.raises(FieldTypeError) as info:
        check(raw, widget)
    assert str(info.value) == ("spec.size: json: cannot unmarshal string into Go struct field WidgetSpec.spec.size "
                               "of type int32")
    with pytest.raises(ValueError):
        register("Pod", widget)


@pytest.mark.parametrize("text,amount", [("1e999", 10**999), ("9" * 400, 10**400 - 1)], ids=["1e999", "9x400"])
def test_quantities_upstream_accepts_decode(text: str, amount: int) -> None:
    """apimachinery quantity.go ParseQuantity has no digit or magnitude limit: "1e999" takes
    the int64 fast path (value 1, scale 999: 18 - 1 digits of precision >= 0), 400 nines
    the inf.Dec path; both decode and print back canonically (by hand: 10**400 - 1 has no
    factor of 10, so no suffix)."""
    out = check_object(container(resources={"requests": {"cpu": text}}))
    assert out["spec"]["containers"][0]["resources"]["requests"]["cpu"] == text
    q = parse_quantity(text)
    assert (q.amount, str(q)) == (amount, text)


def test_quantity_strings_are_trimmed_as_unmarshal_json_does() -> None:
    """Quantity.UnmarshalJSON: ParseQuantity(strings.TrimSpace(...)) (quantity.go)."""
    out = check_object(container(resources={"requests": {"cpu": " 100m\t"}}))
    assert out["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "100m"
