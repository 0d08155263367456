"""Deployments and ReplicaSets in the real ``kubesched serve``, driven by the real kubectl:
create, rollout status, scale, set image, rollout history, describe, delete (background,
foreground, orphan), and pods replaced after an eviction or a deletion."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serve_cluster_helpers import FAST, eventually, get_json
from serve_harness import Server, started

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from started(tmp_path_factory.mktemp("workloads"), "--nodes", "3", *FAST)


def pods(server: Server, selector: str) -> list[dict[str, Any]]:
    return list(get_json(server, "pods", "-l", selector)["items"])


def live(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for p in items if not p["metadata"].get("deletionTimestamp")
            and p["status"].get("phase") not in ("Succeeded", "Failed")]


def running(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for p in live(items) if p["status"].get("phase") == "Running"]


def test_create_rollout_scale_update_and_delete(server: Server) -> None:
    server.kubectl("create", "deployment", "web", "--image=nginx:1.27", "--replicas=3")
    out = server.kubectl("rollout", "status", "deployment/web", "--timeout=60s", timeout=90).stdout
    assert 'deployment "web" successfully rolled out' in out
    [rs] = get_json(server, "rs", "-l", "app=web")["items"]
    h = rs["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"web-{h}" and rs["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    web = running(pods(server, "app=web"))
    assert len(web) == 3 and all(p["metadata"]["name"].startswith(f"web-{h}-") for p in web)
    assert all(p["spec"]["nodeName"] and p["status"]["podIP"] for p in web)

    server.kubectl("scale", "deployment", "web", "--replicas=5")
    server.kubectl("rollout", "status", "deployment/web", "--timeout=60s", timeout=90)
    eventually(lambda: len(running(pods(server, "app=web"))) == 5)
    server.kubectl("scale", "deployment", "web", "--replicas=2")
    eventually(lambda: len(live(pods(server, "app=web"))) == 2)

    server.kubectl("set", "image", "deployment/web", "nginx=nginx:1.28")
    out = server.kubectl("rollout", "status", "deployment/web", "--timeout=60s", timeout=90).stdout
    assert "successfully rolled out" in out
    eventually(lambda: {c["image"] for p in live(pods(server, "app=web")) for c in p["spec"]["containers"]}
               == {"nginx:1.28"})
    history = server.kubectl("rollout", "history", "deployment/web").stdout
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
    described = server.kubectl("describe", "deployment", "web").stdout
    assert "ScalingReplicaSet" in described and "deployment-controller" in described
    assert "MinimumReplicasAvailable" in described and "NewReplicaSetAvailable" in described
    dep = get_json(server, "deployment", "web")
    st = dep["status"]
    assert (st["replicas"], st["updatedReplicas"], st["readyReplicas"], st["availableReplicas"]) == (2, 2, 2, 2)
    assert st["observedGeneration"] == dep["metadata"]["generation"]

    server.kubectl("delete", "deployment", "web")
    eventually(lambda: not get_json(server, "rs", "-l", "app=web")["items"] and not pods(server, "app=web"))


def test_evicted_and_deleted_pods_are_replaced(server: Server) -> None:
    server.kubectl("create", "deployment", "ev", "--image=nginx", "--replicas=3")
    server.kubectl("rollout", "status", "deployment/ev", "--timeout=60s", timeout=90)
    first, second = (p["metadata"]["name"] for p in running(pods(server, "app=ev"))[:2])
    status, _ = server.request("POST", f"/api/v1/namespaces/default/pods/{first}/eviction",
                               {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": first}})
    assert status == 201
    server.kubectl("delete", "pod", second, "--wait=false")
    names = eventually(lambda: len(running(pods(server, "app=ev"))) == 3
                       and {p["metadata"]["name"] for p in running(pods(server, "app=ev"))})
    assert first not in names and second not in names
    eventually(lambda: len(pods(server, "app=ev")) == 3)  # the old ones are gone, not just terminating
    events = server.kubectl("get", "events", "--field-selector", "involvedObject.kind=ReplicaSet").stdout
    assert "SuccessfulCreate" in events and "Created pod: ev-" in events


@pytest.mark.parametrize("cascade", ["foreground", "orphan"])
def test_delete_with_a_cascade_policy(server: Server, cascade: str) -> None:
    name = f"cascade-{cascade}"
    server.kubectl("create", "deployment", name, "--image=nginx", "--replicas=2")
    server.kubectl("rollout", "status", f"deployment/{name}", "--timeout=60s", timeout=90)
    server.kubectl("delete", "deployment", name, f"--cascade={cascade}", timeout=60)
    assert server.kubectl("get", "deployment", name, check=False).returncode != 0
    if cascade == "foreground":  # kubectl waited until the dependents were gone
        assert not get_json(server, "rs", "-l", f"app={name}")["items"]
        eventually(lambda: not pods(server, f"app={name}"))
        return
    [rs] = eventually(lambda: [r for r in get_json(server, "rs", "-l", f"app={name}")["items"]
                               if not r["metadata"].get("ownerReferences")])
    assert len(running(pods(server, f"app={name}"))) == 2
    server.kubectl("delete", "rs", rs["metadata"]["name"])
    eventually(lambda: not pods(server, f"app={name}"))


def test_replicaset_status_as_kubectl_shows_it(server: Server, tmp_path: Path) -> None:
    manifest = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "plain"},
                "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "plain"}},
                         "template": {"metadata": {"labels": {"app": "plain"}},
                                      "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}
    server.kubectl("apply", "-f", "-", input=json.dumps(manifest))
    row = eventually(lambda: next((line.split() for line in server.kubectl("get", "rs", "plain").stdout.splitlines()
                                   if line.startswith("plain ") and line.split()[1:4] == ["2", "2", "2"]), None))
    assert row[0] == "plain"
    server.kubectl("delete", "rs", "plain")
    eventually(lambda: not pods(server, "app=plain"))
