"""Bodies with values of the wrong JSON type: a 400 ``Status`` as kube-apiserver's decoding
answers (handlers/create.go ``transformDecodeError``: ``<Kind> in version "<v>" cannot be
handled as a <Kind>: <decode error>``), never a 500 (issue 11 §2). The decode error texts
are Go's ``encoding/json`` ones, checked in detail in tests/api/test_schema.py."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.store import Store

_FUZZ = str(Path(__file__).resolve().parents[2] / "api")  # tests/api/manifest_fuzz.py
if _FUZZ not in sys.path:
    sys.path.insert(0, _FUZZ)
from manifest_fuzz import mutated_docs  # noqa: E402

_M = "json: cannot unmarshal"


@pytest.fixture
def reg(tmp_path: Path):
    store = Store(tmp_path / "db")
    r = Registry(store)
    r.bootstrap()
    yield r
    store.close()


def pod(name: str = "web", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx:1"}], **spec}}


def node(name: str = "n1", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": spec,
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def status_of(fn: Any, *args: Any, **kw: Any) -> dict[str, Any]:
    with pytest.raises(ApiError) as info:
        fn(*args, **kw)
    out: dict[str, Any] = info.value.status()
    return out


@pytest.mark.parametrize("resource,body,message", [
    ("pods", pod(tolerations=[{"key": "k", "operator": "Equal", "value": 5}]),
     f'Pod in version "v1" cannot be handled as a Pod: {_M} number into Go struct field '
     "Toleration.spec.tolerations.value of type string"),
    ("pods", pod(tolerations=[{"key": 7, "operator": "Exists"}]),
     f'Pod in version "v1" cannot be handled as a Pod: {_M} number into Go struct field '
     "Toleration.spec.tolerations.key of type string"),
    ("pods", {**pod(), "spec": {"containers": {"name": "c"}}},
     f'Pod in version "v1" cannot be handled as a Pod: {_M} object into Go struct field '
     "PodSpec.spec.containers of type []v1.Container"),
    ("pods", pod(containers=[{"name": "c", "image": "i", "ports": "80"}]),
     f'Pod in version "v1" cannot be handled as a Pod: {_M} string into Go struct field '
     "Container.spec.containers.ports of type []v1.ContainerPort"),
    ("pods", pod(containers=[{"name": "c", "image": "i", "resources": {"requests": {"cpu": "lots"}}}]),
     'Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression '
     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("nodes", node(taints=[{"key": "k", "value": 1, "effect": "NoSchedule"}]),
     f'Node in version "v1" cannot be handled as a Node: {_M} number into Go struct field '
     "Taint.spec.taints.value of type string"),
    ("poddisruptionbudgets.policy", {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                     "metadata": {"name": "b"}, "spec": {"minAvailable": [1]}},
     f'PodDisruptionBudget in version "v1" cannot be handled as a PodDisruptionBudget: {_M} array into '
     "Go value of type int32"),
    # the cases /work/notes/decode-500s.md listed (found by the API-server fuzz): 500s before
    ("deployments.apps", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                          "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
                              "metadata": {"labels": {"a": "b"}},
                              "spec": {"containers": [{"name": "c", "image": "i"}],
                                       "tolerations": [{"key": "k", "value": {"a": 1}}]}}}},
     f'Deployment in version "v1" cannot be handled as a Deployment: {_M} object into Go struct field '
     "Toleration.spec.template.spec.tolerations.value of type string"),
    ("pods", pod(containers=[{"name": "c", "image": "i", "ports": 5}]),
     f'Pod in version "v1" cannot be handled as a Pod: {_M} number into Go struct field '
     "Container.spec.containers.ports of type []v1.ContainerPort"),
    ("nodes", node(taints=[{"key": 5, "effect": "NoSchedule"}]),
     f'Node in version "v1" cannot be handled as a Node: {_M} number into Go struct field '
     "Taint.spec.taints.key of type string"),
    ("pods", pod(schedulingGates=[{"name": []}]),
     f'Pod in version "v1" cannot be handled as a Pod: {_M} array into Go struct field '
     "PodSchedulingGate.spec.schedulingGates.name of type string"),
    ("nodes", {**node(), "status": {"capacity": {"cpu": "1"}, "images": [{"names": 5}]}},
     f'Node in version "v1" cannot be handled as a Node: {_M} number into Go struct field '
     "ContainerImage.status.images.names of type []string"),
    ("nodes", node(taints=[{"key": ["a"], "effect": "NoSchedule"}]),
     f'Node in version "v1" cannot be handled as a Node: {_M} array into Go struct field '
     "Taint.spec.taints.key of type string"),
    ("pods", pod(schedulingGates=[{"name": 5}]),
     f'Pod in version "v1" cannot be handled as a Pod: {_M} number into Go struct field '
     "PodSchedulingGate.spec.schedulingGates.name of type string"),
], ids=["toleration-value", "toleration-key", "containers-object", "ports-string", "quantity", "taint-value",
        "pdb-intorstr", "deployment-template", "ports-number", "taint-key", "gate-name", "image-names",
        "taint-key-list", "gate-name-number"])
def test_create_with_a_wrong_type_is_400(reg: Registry, resource: str, body: dict[str, Any], message: str) -> None:
    reg.create("namespaces", None, {"metadata": {"name": "team"}})
    status = status_of(reg.create, resource, "team", body)
    assert (status["code"], status["reason"], status["message"]) == (400, "BadRequest", message)


def test_update_and_patch_with_a_wrong_type_are_refused(reg: Registry) -> None:
    reg.create("nodes", None, node())
    bad = node(taints=[{"key": 1, "effect": "NoSchedule"}])
    status = status_of(reg.update, "nodes", None, "n1", bad)
    assert (status["code"], status["message"]) == (
        400, f'Node in version "v1" cannot be handled as a Node: {_M} number into Go struct field '
             "Taint.spec.taints.key of type string")
    # a patched object that does not decode: 422 on "patch" (handlers/patch.go, NewInvalid with
    # an empty kind and name, the patched object as the value)
    status = status_of(reg.patch, "nodes", None, "n1", "application/merge-patch+json",
                       {"spec": {"unschedulable": "yes"}})
    assert (status["code"], status["reason"]) == (422, "Invalid")
    assert status["message"].startswith(' "" is invalid: patch: Invalid value: "{')
    assert status["message"].endswith(f"{_M} string into Go struct field NodeSpec.spec.unschedulable of type bool")
    assert [c["field"] for c in status["details"]["causes"]] == ["patch"]
    assert reg.get("nodes", None, "n1")["spec"] == {}


def test_nulls_are_zero_values(reg: Registry) -> None:
    """A null map or list is absent once decoded (Go's zero value, omitted on encoding)."""
    ns = reg.create("namespaces", None, {"metadata": {"name": "team", "labels": None}})
    assert ns["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team"}
    p = reg.create("pods", "team", pod(tolerations=None, nodeSelector=None, affinity=None))
    assert "nodeSelector" not in p["spec"] and "affinity" not in p["spec"]


_PLURALS = {"Pod": "pods", "Node": "nodes"}


@pytest.mark.slow
@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(docs=mutated_docs(), which=st.sampled_from(["Pod", "Node"]), n=st.integers(0, 10**6))
def test_malformed_pods_and_nodes_never_fail_the_server(reg: Registry, docs: list[Any], which: str, n: int) -> None:
    """The manifest fuzz's mutated objects, created through the registry: an object or a
    4xx, never another exception."""
    same_kind = [d for d in docs if isinstance(d, dict) and d.get("kind") == which]
    doc = copy.deepcopy(same_kind[0] if same_kind else docs[3 if which == "Pod" else 2])
    if isinstance(doc, dict) and isinstance(doc.get("metadata"), dict):
        doc["metadata"]["name"] = f"x{n}"
        doc["metadata"].pop("namespace", None)
    try:
        reg.create(_PLURALS[which], "default", doc)
    except ApiError as exc:
        assert 400 <= exc.code < 500, exc.status()
