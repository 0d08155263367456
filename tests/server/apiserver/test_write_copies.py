"""The registry's writes copy only what they must (issue 16 item 3, serve's CPU per pod),
without sharing anything with their callers or the objects watchers already received.

A status write keeps only the body's status and resourceVersion (upstream's pod status
strategy, pkg/registry/core/pod/strategy.go ``podStatusStrategy.PrepareForUpdate``: the new
object is the old one with the new status), so only those are copied from the body; a
create of a body the caller hands over (a decoded request body) is not copied at all.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.apiserver.watch.api import open_watch


def pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1", "resources": {"requests": {"cpu": "100m"}}}]}}


def running(p: dict[str, Any]) -> dict[str, Any]:
    body = dict(p)  # as the simulated kubelet builds it: the informer's pod with a new status
    body["status"] = {"phase": "Running", "podIP": "10.244.0.5",
                      "conditions": [{"type": "Ready", "status": "True"}]}
    return body


def test_status_write_keeps_stored_spec_and_metadata_and_leaves_the_body_alone(reg: Registry) -> None:
    reg.create("pods", "default", pod("a"))
    cur = reg.get("pods", "default", "a")
    body = running(cur)
    body["metadata"] = {**cur["metadata"], "labels": {"changed": "by-status"}, "selfLink": "/api/v1/x"}
    body["spec"] = {**cur["spec"], "containers": [{"name": "c", "image": "other:2"}]}
    before = copy.deepcopy(body)
    out = reg.update("pods", "default", "a", body, subresource="status")
    # the status is the body's; spec and labels stay as stored (status subresource)
    assert out["status"]["phase"] == "Running" and out["status"]["podIP"] == "10.244.0.5"
    assert out["spec"]["containers"][0]["image"] == "nginx:1"
    assert out["metadata"]["labels"] == {"app": "web"}
    assert body == before  # the caller's object, metadata included, is untouched
    # nothing of the result is shared with the body: changing one does not change the other
    out["status"]["conditions"].append({"type": "Extra", "status": "True"})
    out["metadata"]["labels"]["x"] = "y"
    assert body == before
    stored = reg.get("pods", "default", "a")
    assert [c["type"] for c in stored["status"]["conditions"]] == ["Ready"]
    assert stored["metadata"]["labels"] == {"app": "web"}


def test_status_write_event_carries_the_old_and_new_pod(reg: Registry) -> None:
    reg.create("pods", "default", pod("a"))
    cur = reg.get("pods", "default", "a")
    stream = open_watch(reg, "pods", "default", resource_version=cur["metadata"]["resourceVersion"])
    try:
        reg.update("pods", "default", "a", running(cur), subresource="status")
        items = stream.next(5.0)
    finally:
        stream.close()
    assert [i.type for i in items] == ["MODIFIED"]
    obj = items[0].object()
    assert obj["status"]["phase"] == "Running" and obj["spec"]["containers"][0]["image"] == "nginx:1"
    # the stored pod the watcher sees was not changed by the write that replaced it
    assert cur["status"] == {"phase": "Pending", "qosClass": "Burstable"}


def test_status_write_with_a_stale_resource_version_conflicts(reg: Registry) -> None:
    reg.create("pods", "default", pod("a"))
    cur = reg.get("pods", "default", "a")
    reg.update("pods", "default", "a", running(cur), subresource="status")
    with pytest.raises(ApiError) as info:  # cur's resourceVersion is now stale: 409, nothing lost
        reg.update("pods", "default", "a", {**running(cur), "status": {"phase": "Failed"}}, subresource="status")
    assert info.value.code == 409
    assert reg.get("pods", "default", "a")["status"]["phase"] == "Running"


def test_status_write_still_validates_the_status(reg: Registry) -> None:
    reg.create("pods", "default", pod("a"))
    cur = reg.get("pods", "default", "a")
    bad = {**cur, "status": {"phase": "Running", "conditions": "not-a-list"}}
    with pytest.raises(ApiError) as info:  # the body still decodes as a Pod first: 400
        reg.update("pods", "default", "a", bad, subresource="status")
    assert info.value.code == 400
    assert "conditions" in info.value.status()["message"]


def test_spec_update_rules_unchanged(reg: Registry) -> None:
    """pkg/apis/core/validation ValidatePodUpdate: only images (and a few fields) may change."""
    reg.create("pods", "default", pod("a"))
    cur = reg.get("pods", "default", "a")
    cur["spec"]["containers"][0]["image"] = "nginx:2"
    assert reg.update("pods", "default", "a", cur)["spec"]["containers"][0]["image"] == "nginx:2"
    cur = reg.get("pods", "default", "a")
    cur["spec"]["containers"][0]["name"] = "renamed"
    with pytest.raises(ApiError) as info:
        reg.update("pods", "default", "a", cur)
    assert info.value.code == 422


def test_create_copies_the_body_unless_handed_over(reg: Registry) -> None:
    body = pod("a")
    before = copy.deepcopy(body)
    out = reg.create("pods", "default", body)
    assert body == before  # an in-process caller's object is never changed
    out["metadata"]["labels"]["x"] = "y"
    assert body == before
    given = pod("b")
    out = reg.create("pods", "default", given, owned=True)  # a request body nobody reads afterwards
    assert out["metadata"]["name"] == "b" and out["status"]["phase"] == "Pending"
    assert reg.get("pods", "default", "b")["spec"]["containers"][0]["image"] == "nginx:1"


def test_generated_names_retry_from_a_pristine_body(reg: Registry) -> None:
    body = {**pod("x"), "metadata": {"generateName": "web-"}}
    a = reg.create("pods", "default", copy.deepcopy(body), owned=True)
    b = reg.create("pods", "default", copy.deepcopy(body))
    assert a["metadata"]["name"].startswith("web-") and b["metadata"]["name"].startswith("web-")
    assert a["metadata"]["name"] != b["metadata"]["name"]
