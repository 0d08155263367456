"""DaemonSet surge rollouts and ControllerRevisions against a real ``kubesched serve`` with
its controllers, simulated nodes and scheduler, driven by the real kubectl:
``maxSurge`` starts each new daemon pod before its old one is deleted (upstream
``pkg/controller/daemon/update.go``), and ``kubectl rollout history`` / ``rollout undo``
work for DaemonSets and StatefulSets (kubectl's ``DaemonSetHistoryViewer`` /
``DaemonSetRollbacker`` read the ControllerRevisions the set controls and patch the
template back from one; an undone-to revision is renumbered to the highest)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from serve_harness import Server, eventually

pytestmark = pytest.mark.slow

DS = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
      "spec": {"selector": {"matchLabels": {"app": "agent"}},
               "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
               "template": {"metadata": {"labels": {"app": "agent"}},
                            "spec": {"containers": [{"name": "c", "image": "registry.example/agent:1",
                                                     "resources": {"requests": {"cpu": "10m"}}}]}}}}
STS = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
       "spec": {"serviceName": "web", "replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                             "spec": {"containers": [{"name": "c", "image": "registry.example/web:1"}]}}}}


def _revisions(server: Server) -> dict[str, int]:
    items = server.request("GET", "/apis/apps/v1/namespaces/default/controllerrevisions")[1]["items"]
    return {i["metadata"]["name"]: i["revision"] for i in items}


def _history(server: Server, what: str) -> list[str]:
    out = server.kubectl("rollout", "history", what).stdout.splitlines()
    return [line.split()[0] for line in out[2:] if line.strip()]


def test_daemonset_surge_history_and_undo(spawn: Callable[..., Server]) -> None:
    server = spawn("--nodes", "2")
    server.kubectl("create", "-f", "-", input=json.dumps(DS))
    server.kubectl("rollout", "status", "ds/agent", "--timeout=60s")
    assert _history(server, "ds/agent") == ["1"]
    before = int(server.request("GET", "/apis/apps/v1/namespaces/default/daemonsets/agent")[1]
                 ["metadata"]["resourceVersion"])
    server.kubectl("set", "image", "ds/agent", "c=registry.example/agent:2")
    server.kubectl("rollout", "status", "ds/agent", "--timeout=90s")
    events = server.request("GET", "/api/v1/namespaces/default/events")[1]["items"]
    mine: list[tuple[int, str]] = sorted(
        (int(e["metadata"]["resourceVersion"]), e["reason"]) for e in events
        if e["involvedObject"].get("name") == "agent" and int(e["metadata"]["resourceVersion"]) > before)
    reasons = [r for _, r in mine]
    # surge: each old pod is deleted only after a new one was created (without surge, delete first)
    assert reasons.count("SuccessfulCreate") == 2 and reasons.count("SuccessfulDelete") == 2, reasons
    assert reasons[0] == "SuccessfulCreate", reasons
    images = {p["spec"]["containers"][0]["image"] for p in
              server.request("GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Dagent")[1]["items"]}
    assert images == {"registry.example/agent:2"}
    assert _history(server, "ds/agent") == ["1", "2"]
    assert sorted(_revisions(server).values()) == [1, 2]
    table = server.kubectl("get", "controllerrevisions").stdout.splitlines()
    assert table[0].split() == ["NAME", "CONTROLLER", "REVISION", "AGE"]
    assert {tuple(line.split()[1:3]) for line in table[1:]} == {("daemonset.apps/agent", "1"),
                                                                ("daemonset.apps/agent", "2")}
    shown = server.kubectl("rollout", "history", "ds/agent", "--revision=1").stdout
    assert "registry.example/agent:1" in shown
    out = server.kubectl("rollout", "undo", "ds/agent")
    assert "daemonset.apps/agent rolled back" in out.stdout
    ds: Any = server.request("GET", "/apis/apps/v1/namespaces/default/daemonsets/agent")[1]
    assert ds["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.example/agent:1"
    # the first revision comes back as revision 3, not as a copy
    eventually(lambda: sorted(_revisions(server).values()) == [2, 3])
    assert _history(server, "ds/agent") == ["2", "3"]
    server.kubectl("rollout", "status", "ds/agent", "--timeout=90s")


def test_statefulset_history_and_undo(spawn: Callable[..., Server]) -> None:
    server = spawn("--nodes", "1")
    server.kubectl("create", "-f", "-", input=json.dumps(STS))
    eventually(lambda: _history(server, "sts/web") == ["1"])
    server.kubectl("set", "image", "sts/web", "c=registry.example/web:2")
    eventually(lambda: _history(server, "sts/web") == ["1", "2"])
    out = server.kubectl("rollout", "undo", "sts/web", "--to-revision=1")
    assert "statefulset.apps/web rolled back" in out.stdout
    sts: Any = server.request("GET", "/apis/apps/v1/namespaces/default/statefulsets/web")[1]
    assert sts["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.example/web:1"
    eventually(lambda: _history(server, "sts/web") == ["2", "3"])
