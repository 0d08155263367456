"""The Python client libraries people point at a cluster — ``lightkube``, ``kr8s`` and
``kubernetes_asyncio`` — against one real ``kubesched serve`` process: create, get, list,
patch, delete, a watch resumed from the creation's resourceVersion, and server-side apply
(create-on-apply, then a re-apply that stops applying a key).

The official ``kubernetes`` client's CRUD and watches are tested in test_client_watch_e2e.py
and its dynamic client's ``server_side_apply`` in test_apply_e2e.py; not repeated here.

Expected values follow kube-apiserver's documented semantics, by hand: a merge patch adds
a key beside the others; a watch from the creation's resourceVersion delivers exactly the
later MODIFIED and DELETED events; an apply creates a missing object (201) and a field the
same manager applied before and applies no more is removed (structured-merge-diff's
ownership), and the manager's ``managedFields`` entry has operation ``Apply``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from serve_harness import API_ONLY, Server, started

pytestmark = pytest.mark.slow

APPLY = "application/apply-patch+yaml"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from started(tmp_path_factory.mktemp("clients"), *API_ONLY)


def config_map(name: str, ns: str, data: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}, "data": data}


def managers(obj_meta: dict[str, Any]) -> dict[str, str]:
    return {e["manager"]: e["operation"] for e in obj_meta.get("managedFields") or []}


# -- lightkube -------------------------------------------------------------------------------

def test_lightkube_crud_watch_apply(server: Server) -> None:
    from lightkube import Client, KubeConfig

    with Client(config=KubeConfig.from_file(str(server.kubeconfig)), field_manager="lightkube-test") as client:
        _lightkube(client)


def _lightkube(client: Any) -> None:
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.core_v1 import ConfigMap
    from lightkube.types import PatchType

    ns = "lightkube"
    created = client.create(ConfigMap(metadata=ObjectMeta(name="cm", namespace=ns), data={"a": "1"}))
    assert created.metadata is not None and created.data == {"a": "1"}
    rv = created.metadata.resourceVersion
    assert client.get(ConfigMap, "cm", namespace=ns).data == {"a": "1"}
    assert [c.metadata.name for c in client.list(ConfigMap, namespace=ns) if c.metadata] == ["cm"]
    patched = client.patch(ConfigMap, "cm", {"data": {"b": "2"}}, namespace=ns, patch_type=PatchType.MERGE)
    assert patched.data == {"a": "1", "b": "2"}
    client.delete(ConfigMap, "cm", namespace=ns)
    events = []
    for op, obj in client.watch(ConfigMap, namespace=ns, resource_version=rv, server_timeout=5):
        events.append((op, obj.data))
        if op == "DELETED":
            break
    assert events == [("MODIFIED", {"a": "1", "b": "2"}), ("DELETED", {"a": "1", "b": "2"})]

    # server-side apply: lightkube's own ``apply`` (PATCH application/apply-patch+yaml)
    applied = client.apply(ConfigMap(metadata=ObjectMeta(name="ssa", namespace=ns), data={"x": "1", "y": "2"}))
    assert applied.data == {"x": "1", "y": "2"}
    again = client.apply(ConfigMap(metadata=ObjectMeta(name="ssa", namespace=ns), data={"x": "10"}))
    assert again.data == {"x": "10"}  # y: applied before by this manager, applied no more
    assert again.metadata is not None
    assert managers(again.metadata.to_dict()) == {"lightkube-test": "Apply"}


# -- kr8s ------------------------------------------------------------------------------------

async def _kr8s(api: Any) -> None:
    from kr8s.asyncio.objects import ConfigMap

    ns = "kr8s"
    cm = await ConfigMap(config_map("cm", ns, {"a": "1"}), api=api)
    await cm.create()
    rv = cm.metadata.resourceVersion
    assert cm.raw["data"] == {"a": "1"}
    got = await ConfigMap.get("cm", namespace=ns, api=api)
    assert got.raw["data"] == {"a": "1"}
    assert [c.name async for c in api.get("configmaps", namespace=ns)] == ["cm"]
    await got.patch({"data": {"b": "2"}})
    assert got.raw["data"] == {"a": "1", "b": "2"}
    await got.patch([{"op": "replace", "path": "/data/a", "value": "3"}], type="json")
    assert got.raw["data"] == {"a": "3", "b": "2"}
    await got.delete()
    events = []
    async with api.call_api("GET", version="v1", namespace=ns, url="configmaps", stream=True,
                            params={"watch": "true", "resourceVersion": rv, "timeoutSeconds": "5"}) as resp:
        async for line in resp.aiter_lines():
            if line.strip():
                ev = json.loads(line)
                events.append((ev["type"], ev["object"]["data"]))
                if ev["type"] == "DELETED":
                    break
    assert events == [("MODIFIED", {"a": "1", "b": "2"}), ("MODIFIED", {"a": "3", "b": "2"}),
                      ("DELETED", {"a": "3", "b": "2"})]
    # kr8s's own watch (no resourceVersion: the existing objects arrive as ADDED first)
    await ConfigMap(config_map("late", ns, {"c": "1"}), api=api).create()
    async for op, obj in api.watch("configmaps", namespace=ns):
        assert (op, obj.name, obj.raw["data"]) == ("ADDED", "late", {"c": "1"})
        break

    # server-side apply: kr8s has no apply of its own; its generic call_api with the apply type
    for data, code in (({"x": "1", "y": "2"}, 201), ({"x": "10"}, 200)):
        async with api.call_api("PATCH", version="v1", namespace=ns, url="configmaps/ssa",
                                params={"fieldManager": "kr8s-test"},
                                headers={"Content-Type": APPLY},
                                content=json.dumps(config_map("ssa", ns, data))) as resp:
            assert resp.status_code == code
            body = resp.json()
        assert body["data"] == data
    assert managers(body["metadata"]) == {"kr8s-test": "Apply"}


def test_kr8s_crud_watch_apply(server: Server) -> None:
    import kr8s.asyncio

    async def run() -> None:
        api = await kr8s.asyncio.api(kubeconfig=str(server.kubeconfig))
        try:
            await _kr8s(api)
        finally:  # kr8s keeps its httpx session open for reuse and offers no close(): close it
            if api._session is not None:
                await api._session.aclose()

    asyncio.run(run())


# -- kubernetes_asyncio ----------------------------------------------------------------------

async def _kubernetes_asyncio(server: Server) -> None:
    from kubernetes_asyncio import client, config, watch
    from kubernetes_asyncio.client.exceptions import ApiException

    ns = "k8s-asyncio"
    async with await config.new_client_from_config(config_file=str(server.kubeconfig)) as api_client:
        v1 = client.CoreV1Api(api_client)
        created = await v1.create_namespaced_config_map(ns, config_map("cm", ns, {"a": "1"}))
        rv = created.metadata.resource_version
        assert (await v1.read_namespaced_config_map("cm", ns)).data == {"a": "1"}
        assert [c.metadata.name for c in (await v1.list_namespaced_config_map(ns)).items] == ["cm"]
        patched = await v1.patch_namespaced_config_map("cm", ns, {"data": {"b": "2"}})
        assert patched.data == {"a": "1", "b": "2"}
        created.data = {"a": "5"}
        created.metadata.resource_version = patched.metadata.resource_version
        replaced = await v1.replace_namespaced_config_map("cm", ns, created)
        assert replaced.data == {"a": "5"}
        created.metadata.resource_version = rv  # stale: optimistic concurrency refuses it
        with pytest.raises(ApiException) as info:
            await v1.replace_namespaced_config_map("cm", ns, created)
        assert info.value.status == 409
        await v1.delete_namespaced_config_map("cm", ns)
        events = []
        w = watch.Watch()
        async with w.stream(v1.list_namespaced_config_map, ns, resource_version=rv, timeout_seconds=5) as stream:
            async for ev in stream:
                events.append((ev["type"], ev["object"].data))
                if ev["type"] == "DELETED":
                    break
        assert events == [("MODIFIED", {"a": "1", "b": "2"}), ("MODIFIED", {"a": "5"}), ("DELETED", {"a": "5"})]

        # server-side apply: the typed patch with the apply content type and a field manager
        first = await v1.patch_namespaced_config_map("ssa", ns, config_map("ssa", ns, {"x": "1", "y": "2"}),
                                                     field_manager="asyncio-test", _content_type=APPLY)
        assert first.data == {"x": "1", "y": "2"}
        again = await v1.patch_namespaced_config_map("ssa", ns, config_map("ssa", ns, {"x": "10"}),
                                                     field_manager="asyncio-test", _content_type=APPLY)
        assert again.data == {"x": "10"}
        assert {e.manager: e.operation for e in again.metadata.managed_fields} == {"asyncio-test": "Apply"}


def test_kubernetes_asyncio_crud_watch_apply(server: Server) -> None:
    asyncio.run(_kubernetes_asyncio(server))
