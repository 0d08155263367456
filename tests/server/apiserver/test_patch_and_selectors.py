"""Patch formats (RFC 7386, RFC 6902, strategic merge) and selector parsing."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.patch import JSON, MERGE, STRATEGIC, apply_patch
from kubesched.server.apiserver.registry.resources import TABLE
from kubesched.server.apiserver.registry.selectors import predicate

POD: dict[str, Any] = {
    "metadata": {"name": "p", "labels": {"a": "1", "b": "2"}, "finalizers": ["x"]},
    "spec": {"containers": [{"name": "c1", "image": "i1", "ports": [{"containerPort": 80}]},
                            {"name": "c2", "image": "i2"}],
             "tolerations": [{"key": "k", "operator": "Exists"}]},
    "status": {"conditions": [{"type": "Ready", "status": "False"}, {"type": "PodScheduled", "status": "True"}]},
}

CASES = [
    ("merge-labels", MERGE, {"metadata": {"labels": {"a": None, "c": "3"}}},
     lambda o: o["metadata"]["labels"] == {"b": "2", "c": "3"}),
    ("merge-replaces-lists", MERGE, {"spec": {"containers": [{"name": "c3"}]}},
     lambda o: o["spec"]["containers"] == [{"name": "c3"}]),
    ("json-add", JSON, [{"op": "add", "path": "/metadata/labels/x~1y", "value": "v"}],
     lambda o: o["metadata"]["labels"]["x/y"] == "v"),
    ("json-replace-remove", JSON, [{"op": "replace", "path": "/spec/containers/0/image", "value": "new"},
                                   {"op": "remove", "path": "/spec/tolerations"}],
     lambda o: o["spec"]["containers"][0]["image"] == "new" and "tolerations" not in o["spec"]),
    ("json-append-move-copy-test", JSON, [{"op": "add", "path": "/metadata/finalizers/-", "value": "y"},
                                          {"op": "copy", "from": "/metadata/labels/a", "path": "/metadata/labels/z"},
                                          {"op": "move", "from": "/metadata/labels/b", "path": "/metadata/labels/m"},
                                          {"op": "test", "path": "/metadata/labels/z", "value": "1"}],
     lambda o: o["metadata"]["finalizers"] == ["x", "y"] and o["metadata"]["labels"] == {"a": "1", "z": "1", "m": "2"}),
    ("smp-containers-by-name", STRATEGIC, {"spec": {"containers": [{"name": "c2", "image": "new"}]}},
     lambda o: [c["image"] for c in o["spec"]["containers"]] == ["i1", "new"]),
    ("smp-delete-element", STRATEGIC, {"spec": {"containers": [{"name": "c1", "$patch": "delete"}]}},
     lambda o: [c["name"] for c in o["spec"]["containers"]] == ["c2"]),
    ("smp-conditions-by-type", STRATEGIC, {"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
     lambda o: o["status"]["conditions"] == [{"type": "Ready", "status": "True"},
                                            {"type": "PodScheduled", "status": "True"}]),
    ("smp-tolerations-replace", STRATEGIC, {"spec": {"tolerations": [{"key": "z", "operator": "Exists"}]}},
     lambda o: o["spec"]["tolerations"] == [{"key": "z", "operator": "Exists"}]),
    ("smp-finalizers-set", STRATEGIC, {"metadata": {"finalizers": ["x", "y"]}},
     lambda o: o["metadata"]["finalizers"] == ["x", "y"]),
    ("smp-delete-from-primitive-list", STRATEGIC, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["x"]}},
     lambda o: o["metadata"]["finalizers"] == []),
    ("smp-set-element-order", STRATEGIC,
     {"spec": {"$setElementOrder/containers": [{"name": "c2"}, {"name": "c1"}],
               "containers": [{"name": "c1", "image": "z"}]}},
     lambda o: [(c["name"], c["image"]) for c in o["spec"]["containers"]] == [("c2", "i2"), ("c1", "z")]),
    ("smp-unschedulable-and-null", STRATEGIC, {"spec": {"unschedulable": True, "tolerations": None}},
     lambda o: o["spec"]["unschedulable"] is True and "tolerations" not in o["spec"]),
    ("smp-replace-map", STRATEGIC, {"metadata": {"labels": {"$patch": "replace", "only": "me"}}},
     lambda o: o["metadata"]["labels"] == {"only": "me"}),
    ("smp-retain-keys", STRATEGIC, {"spec": {"$retainKeys": ["containers"], "containers": []}},
     lambda o: list(o["spec"]) == ["containers"]),
]


@pytest.mark.parametrize("name,ct,patch,check", CASES, ids=[c[0] for c in CASES])
def test_patch(name: str, ct: str, patch: Any, check: Any) -> None:
    import copy

    original = copy.deepcopy(POD)
    out = apply_patch(ct, original, patch)
    assert check(out)
    assert original == POD  # the input is never mutated


@pytest.mark.parametrize("ct,patch,code", [
    (JSON, [{"op": "test", "path": "/metadata/name", "value": "q"}], 422),
    (JSON, [{"op": "remove", "path": "/nope"}], 422),
    (JSON, {"not": "a list"}, 400),
    (MERGE, ["not", "an object"], 400),
    ("application/apply-patch+yaml", {}, 415),
], ids=["test-fails", "missing-path", "json-not-list", "merge-not-object", "apply-unsupported"])
def test_patch_errors(ct: str, patch: Any, code: int) -> None:
    with pytest.raises(ApiError) as info:
        apply_patch(ct, POD, patch)
    assert info.value.code == code


OBJ = {"metadata": {"name": "p", "namespace": "ns", "labels": {"app": "web", "tier": "1"}},
       "spec": {"nodeName": "n1", "hostNetwork": False}, "status": {"phase": "Running"}}


@pytest.mark.parametrize("labels,fields,matches", [
    ("app=web", "", True), ("app==web,tier!=2", "", True), ("app in (web, db)", "", True),
    ("app notin (web)", "", False), ("tier", "", True), ("!tier", "", False), ("tier>0,tier<2", "", True),
    ("", "spec.nodeName=n1", True), ("", "spec.nodeName=", False), ("", "status.phase!=Failed,status.phase!=Succeeded", True),
    ("", "metadata.name=p,metadata.namespace=ns", True), ("", "spec.hostNetwork=false", True),
    ("app=web", "status.phase=Pending", False),
], ids=lambda v: str(v))
def test_selectors(labels: str, fields: str, matches: bool) -> None:
    pred = predicate(TABLE["pods"], labels, fields)
    assert pred is not None and pred(OBJ) is matches


@pytest.mark.parametrize("labels,fields", [("app in web", ""), ("a=b=c", ""), ("", "spec.bogus=1"), ("", "nonsense")],
                         ids=["in-without-parens", "double-equals", "unknown-field", "no-operator"])
def test_selector_errors_are_400(labels: str, fields: str) -> None:
    with pytest.raises(ApiError) as info:
        predicate(TABLE["pods"], labels, fields)
    assert info.value.code == 400
