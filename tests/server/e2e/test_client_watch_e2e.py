"""The official ``kubernetes`` Python client against ``kubesched serve``: CRUD, patches,
watches (resume from a resourceVersion, 410 Gone after compaction, bookmarks), and
optimistic concurrency (409, no lost updates)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from serve_harness import API_ONLY, Server, pod_manifest, started

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def small_history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from started(tmp_path_factory.mktemp("history"), "--watch-history", "100", "--bookmark-interval", "0.5",
                       *API_ONLY)


def core(server: Server) -> Any:
    from kubernetes import client

    return client.CoreV1Api(server.client())


def test_crud_and_patches(small_history: Server) -> None:
    from kubernetes.client.rest import ApiException

    v1 = core(small_history)
    created = v1.create_namespaced_pod("default", pod_manifest("crud"))
    assert created.spec.scheduler_name == "default-scheduler" and created.status.phase == "Pending"
    assert [p.metadata.name for p in v1.list_namespaced_pod("default", label_selector="app=load").items] == ["crud"]
    patched = v1.patch_namespaced_pod("crud", "default", {"metadata": {"labels": {"extra": "1"}}})
    assert patched.metadata.labels == {"app": "load", "extra": "1"}
    v1.patch_namespaced_pod_status("crud", "default", {"status": {"phase": "Running"}})
    assert v1.read_namespaced_pod("crud", "default").status.phase == "Running"
    assert v1.list_namespaced_pod("default", field_selector="status.phase=Running").items[0].metadata.name == "crud"
    v1.delete_namespaced_pod("crud", "default", grace_period_seconds=0)
    with pytest.raises(ApiException) as info:
        v1.read_namespaced_pod("crud", "default")
    assert info.value.status == 404


def test_list_pagination(small_history: Server) -> None:
    v1 = core(small_history)
    for i in range(7):
        v1.create_namespaced_config_map("pages", {"metadata": {"name": f"cm{i}"}, "data": {"i": str(i)}})
    names, token = [], None
    while True:
        page = v1.list_namespaced_config_map("pages", limit=3, _continue=token)
        names += [c.metadata.name for c in page.items]
        token = page.metadata._continue
        if not token:
            break
    assert names == [f"cm{i}" for i in range(7)]


def test_watch_resumes_from_a_resource_version_and_sends_bookmarks(small_history: Server) -> None:
    from kubernetes import watch

    v1 = core(small_history)
    start = v1.list_namespaced_pod("resume").metadata.resource_version
    for i in range(3):
        v1.create_namespaced_pod("resume", pod_manifest(f"r{i}"))
    v1.delete_namespaced_pod("r1", "resume")
    w = watch.Watch()
    events = []
    for ev in w.stream(v1.list_namespaced_pod, "resume", resource_version=start, allow_watch_bookmarks=True,
                       timeout_seconds=3):
        events.append((ev["type"], ev["raw_object"]["metadata"].get("name")))
        if ev["type"] == "BOOKMARK":
            w.stop()
    assert events[:4] == [("ADDED", "r0"), ("ADDED", "r1"), ("ADDED", "r2"), ("DELETED", "r1")]
    assert events[-1] == ("BOOKMARK", None)


def test_watch_from_a_compacted_version_is_gone(small_history: Server) -> None:
    from kubernetes import watch
    from kubernetes.client.rest import ApiException

    v1 = core(small_history)
    first = v1.create_namespaced_config_map("churn", {"metadata": {"name": "c0"}})
    for i in range(1, 260):
        v1.create_namespaced_config_map("churn", {"metadata": {"name": f"c{i}"}})
    with pytest.raises(ApiException) as info:
        for _ in watch.Watch().stream(v1.list_namespaced_config_map, "churn",
                                      resource_version=first.metadata.resource_version, timeout_seconds=2):
            pass
    assert info.value.status == 410
    status, body = small_history.request(
        "GET", f"/api/v1/namespaces/churn/configmaps?watch=true&resourceVersion={first.metadata.resource_version}")
    assert status == 200 and body["type"] == "ERROR" and body["object"]["code"] == 410
    assert body["object"]["reason"] == "Expired"


def test_stale_updates_conflict_and_no_update_is_lost(small_history: Server) -> None:
    from kubernetes.client.rest import ApiException

    v1 = core(small_history)
    v1.create_namespaced_config_map("default", {"metadata": {"name": "counter"}, "data": {"n": "0"}})
    stale = v1.read_namespaced_config_map("counter", "default")
    v1.patch_namespaced_config_map("counter", "default", {"data": {"touched": "yes"}})
    with pytest.raises(ApiException) as info:
        v1.replace_namespaced_config_map("counter", "default", stale)
    assert info.value.status == 409 and '"reason":"Conflict"' in info.value.body.replace(" ", "")
    conflicts = [0]
    lock = threading.Lock()

    def worker() -> None:
        api = core(small_history)
        for _ in range(15):
            while True:
                cm = api.read_namespaced_config_map("counter", "default")
                cm.data["n"] = str(int(cm.data["n"]) + 1)
                try:
                    api.replace_namespaced_config_map("counter", "default", cm)
                    break
                except ApiException as exc:
                    assert exc.status == 409
                    with lock:
                        conflicts[0] += 1

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert v1.read_namespaced_config_map("counter", "default").data["n"] == "90"
    assert conflicts[0] > 0
