"""Informer against ``kubesched serve``'s API server over real HTTP: list then watch,
callbacks, bookmarks, a dropped watch resumed from its resourceVersion (no re-list), a
compacted resourceVersion (410) re-listed without losing or inventing objects, objects that
fail to decode, resources the server does not serve."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from kube_helpers import eventually, pod_manifest

from kubesched.api.objects import Pod
from kubesched.server.apiserver.server import ApiServer
from kubesched.cluster.kube import Informer, KubeClient
from kubesched.cluster.kube.resources import NODES, PODS, ApiResource

FAST = (0.05, 2.0, 0.5)  # informer backoff for tests: initial, factor, cap


class Recorder:
    """The callbacks an informer made, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def add(self, obj: Any) -> None:
        self.calls.append(("add", obj.name))

    def update(self, old: Any, new: Any) -> None:
        self.calls.append(("update", new.name))

    def delete(self, obj: Any, final_state_unknown: bool) -> None:
        self.calls.append(("delete", obj.name, final_state_unknown))


@pytest.fixture
def informers(client: KubeClient) -> Iterator[list[Informer[Any]]]:
    made: list[Informer[Any]] = []
    yield made
    for inf in made:
        inf.stop()


def start(informers: list[Informer[Any]], client: KubeClient, resource: ApiResource, rec: Recorder | None = None,
          **kw: Any) -> Informer[Any]:
    rec = rec or Recorder()
    inf: Informer[Any] = Informer(client, resource, on_add=rec.add, on_update=rec.update, on_delete=rec.delete,
                                  backoff=FAST, **kw)
    informers.append(inf)
    inf.start()
    return inf


def create_pod(server: ApiServer, name: str, **spec: Any) -> dict[str, Any]:
    return server.registry.create("pods", "default", pod_manifest(name, **spec))


def test_list_then_watch(apiserver: ApiServer, client: KubeClient, informers: list[Informer[Any]]) -> None:
    rec = Recorder()
    create_pod(apiserver, "before")
    inf = start(informers, client, PODS, rec)
    assert inf.wait_for_sync(10)
    assert rec.calls == [("add", "before")]
    create_pod(apiserver, "after")
    apiserver.registry.patch("pods", "default", "after", "application/merge-patch+json",
                             {"metadata": {"labels": {"x": "1"}}})
    apiserver.registry.delete("pods", "default", "before")
    eventually(lambda: len(rec.calls) == 4)
    assert rec.calls[1:] == [("add", "after"), ("update", "after"), ("delete", "before", False)]
    assert [p.name for p in inf.values()] == ["after"]
    assert inf.get_namespaced("default", "after").labels == {"x": "1"}
    eventually(lambda: inf.stats.bookmarks > 0)  # allowWatchBookmarks: the server sends them
    assert int(inf.resource_version) >= int(apiserver.store.rv) - 1


def test_terminal_pods_leave_the_pod_informer(apiserver: ApiServer, client: KubeClient,
                                               informers: list[Informer[Any]]) -> None:
    """As upstream's scheduler lists pods: status.phase neither Succeeded nor Failed."""
    rec = Recorder()
    inf = start(informers, client, PODS, rec)
    inf.wait_for_sync(10)
    create_pod(apiserver, "job")
    eventually(lambda: inf.get("default/job") is not None)
    apiserver.registry.patch("pods", "default", "job", "application/merge-patch+json",
                             {"status": {"phase": "Succeeded"}}, subresource="status")
    eventually(lambda: inf.get("default/job") is None)
    assert rec.calls == [("add", "job"), ("delete", "job", False)]


def test_dropped_watch_resumes_without_relisting(apiserver: ApiServer, client: KubeClient,
                                                informers: list[Informer[Any]]) -> None:
    rec = Recorder()
    inf = start(informers, client, NODES, rec)
    inf.wait_for_sync(10)
    for i in range(3):
        eventually(lambda: inf.stats.watches == i + 1)  # watching
        apiserver.store.hub.close_all()  # the server ends every watch (as on overload)
        apiserver.registry.patch("nodes", None, "node-01", "application/merge-patch+json",
                                 {"metadata": {"labels": {"round": str(i)}}})
        eventually(lambda: inf.get("node-01").labels.get("round") == str(i))
    eventually(lambda: inf.stats.watches == 4)
    assert inf.stats.lists == 1 and inf.stats.gone == 0
    assert rec.calls == [("add", "node-01"), ("add", "node-02")] + [("update", "node-01")] * 3


def test_compacted_resource_version_relists_without_losing_objects(
        apiserver: ApiServer, client: KubeClient, informers: list[Informer[Any]]) -> None:
    """The informer falls behind (its handler is slow), its watch ends, and meanwhile the
    server compacts its change log: resuming gets 410 Gone, the informer re-lists, and the
    callbacks bring its view exactly to the server's (deleted: a final-state-unknown delete;
    re-created under the same name: a delete and an add)."""
    release = threading.Event()
    rec = Recorder()

    def slow_add(obj: Pod) -> None:
        rec.add(obj)
        if obj.name == "slow":
            release.wait(10)

    for name in ("keep", "gone", "again"):
        create_pod(apiserver, name)
    inf: Informer[Pod] = Informer(client, PODS, on_add=slow_add, on_update=rec.update, on_delete=rec.delete,
                                  backoff=FAST)
    informers.append(inf)
    inf.start()
    inf.wait_for_sync(10)
    first_uid = inf.get("default/again").uid
    create_pod(apiserver, "slow")
    eventually(lambda: ("add", "slow") in rec.calls)  # the informer is stuck in the handler
    apiserver.store.hub.close_all()
    apiserver.registry.delete("pods", "default", "gone")
    apiserver.registry.delete("pods", "default", "again")
    create_pod(apiserver, "again")
    for i in range(20):
        create_pod(apiserver, f"new-{i:02d}")
    apiserver.store.compact(0)
    release.set()
    want = {"keep", "slow", "again"} | {f"new-{i:02d}" for i in range(20)}
    eventually(lambda: {p.name for p in inf.values()} == want)
    assert inf.stats.gone == 1 and inf.stats.lists == 2
    assert inf.get("default/again").uid != first_uid
    after = rec.calls[rec.calls.index(("add", "slow")) + 1:]
    assert sorted(after) == sorted([("delete", "gone", True), ("delete", "again", True), ("add", "again")]
                                   + [("add", f"new-{i:02d}") for i in range(20)])


def test_objects_that_fail_to_decode_are_skipped(apiserver: ApiServer, client: KubeClient,
                                                 informers: list[Informer[Any]]) -> None:
    def decode(raw: dict[str, Any]) -> Any:
        if raw["metadata"]["name"].startswith("bad"):
            raise ValueError("cannot read this one")
        return Pod.from_dict(raw, validate=False)

    rec = Recorder()
    resource = ApiResource("", "v1", "pods", "Pod", True, decode)
    create_pod(apiserver, "bad-1")
    create_pod(apiserver, "good-1")
    inf = start(informers, client, resource, rec)
    inf.wait_for_sync(10)
    create_pod(apiserver, "bad-2")
    create_pod(apiserver, "good-2")
    eventually(lambda: len(inf) == 2)
    assert sorted(p.name for p in inf.values()) == ["good-1", "good-2"]
    assert inf.stats.decode_errors == 2 and rec.calls == [("add", "good-1"), ("add", "good-2")]


def test_a_resource_the_server_does_not_serve(client: KubeClient, informers: list[Informer[Any]]) -> None:
    """Optional (PodGroups without the CRD): empty and synced. Required: not synced, retried."""
    optional = ApiResource("example.com", "v1", "widgets", "Widget", True, dict, optional=True)
    required = ApiResource("example.com", "v1", "gadgets", "Gadget", True, dict)
    a = start(informers, client, optional)
    b = start(informers, client, required)
    assert a.wait_for_sync(10) and len(a) == 0
    eventually(lambda: b.stats.errors >= 2)
    assert not b.has_synced
