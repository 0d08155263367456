"""Every built-in kind is decoded against its declared Go type before the registry reads it,
as kube-apiserver decodes every body into its Go struct: a value of the wrong JSON type is a
400 ``<Kind> in version "<v>" cannot be handled as a <Kind>: <decode error>``
(handlers/create.go ``transformDecodeError``) whose decode error is Go's ``encoding/json``
``UnmarshalTypeError``: ``json: cannot unmarshal <JSON type> into Go struct field
<Struct>.<path> of type <Go type>``, the struct and the Go type being those of k8s.io/api
v0.34.1 ``types.go`` (``ServicePort.Port int32``, ``events/v1 Event.Regarding
corev1.ObjectReference``, ``StatefulSetSpec.ServiceName string``, ``DeviceTaint.Effect
DeviceTaintEffect``, ``PolicyRule.Verbs []string``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.store import Store

_M = "json: cannot unmarshal"


@pytest.fixture
def reg(tmp_path: Path) -> Iterator[Registry]:
    store = Store(tmp_path / "db")
    r = Registry(store)
    r.bootstrap()
    yield r
    store.close()


@pytest.mark.parametrize("resource,body,message", [
    ("services", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                  "spec": {"ports": [{"port": 80}, {"port": "x"}]}},
     f'Service in version "v1" cannot be handled as a Service: {_M} string into Go struct field '
     "ServicePort.spec.ports.port of type int32"),
    ("events.events.k8s.io", {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e"},
                              "eventTime": "2024-01-02T03:04:05.000000Z", "regarding": {"kind": 3}},
     f'Event in version "v1" cannot be handled as a Event: {_M} number into Go struct field '
     "ObjectReference.regarding.kind of type string"),
    ("statefulsets.apps", {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "w"},
                           "spec": {"serviceName": 5}},
     f'StatefulSet in version "v1" cannot be handled as a StatefulSet: {_M} number into Go struct field '
     "StatefulSetSpec.spec.serviceName of type string"),
    ("resourceslices.resource.k8s.io", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "r"},
        "spec": {"driver": "d", "devices": [{"name": "g", "taints": [{"key": "k", "effect": 5}]}]}},
     f'ResourceSlice in version "v1" cannot be handled as a ResourceSlice: {_M} number into Go struct field '
     "DeviceTaint.spec.devices.taints.effect of type v1.DeviceTaintEffect"),
    ("roles.rbac.authorization.k8s.io", {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                                         "metadata": {"name": "r"}, "rules": [{"verbs": "get"}]},
     f'Role in version "v1" cannot be handled as a Role: {_M} string into Go struct field '
     "PolicyRule.rules.verbs of type []string"),
], ids=["service-port", "events-event", "statefulset", "resourceslice-taint", "role-verbs"])
def test_create_with_a_wrong_type_is_400(reg: Registry, resource: str, body: dict[str, Any], message: str) -> None:
    namespaced = resource not in ("resourceslices.resource.k8s.io",)
    reg.create("namespaces", None, {"metadata": {"name": "team"}})
    with pytest.raises(ApiError) as info:
        reg.create(resource, "team" if namespaced else None, body)
    status = info.value.status()
    assert (status["code"], status["reason"], status["message"]) == (400, "BadRequest", message)


def test_core_and_events_events_are_told_apart(reg: Registry) -> None:
    """core/v1 Event has no ``regarding`` (an unknown field, which Go's decoder skips); its
    ``involvedObject`` is the ObjectReference there."""
    reg.create("namespaces", None, {"metadata": {"name": "team"}})
    core = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}, "regarding": {"kind": 3},
            "involvedObject": {"kind": "Pod", "name": "p"}}
    assert reg.create("events", "team", core)["regarding"] == {"kind": 3}
    with pytest.raises(ApiError) as info:
        reg.create("events", "team", {**core, "metadata": {"name": "f"}, "involvedObject": {"kind": 3}})
    assert info.value.status()["message"].endswith(
        f"{_M} number into Go struct field ObjectReference.involvedObject.kind of type string")


def test_node_capacity_numbers_are_quantities(reg: Registry) -> None:
    """``resource.Quantity``'s UnmarshalJSON parses an unquoted number as it parses a string
    (apimachinery ``pkg/api/resource/quantity.go``), so ``"cpu": 4`` is accepted."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"capacity": {"cpu": 4, "memory": "8Gi"}}}
    created = reg.create("nodes", None, node)
    assert created["metadata"]["name"] == "n1"
