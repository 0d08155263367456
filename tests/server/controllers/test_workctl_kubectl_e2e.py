"""Secrets, service-account tokens, DaemonSets, drain under PodDisruptionBudgets, pods
without a runtime and kubelet-side failures, in the real ``kubesched serve`` (with TLS and a
token file, so authentication is on) driven by the real kubectl.

Expected messages are upstream's: kubectl's drain refusal relays the eviction's 429
"Cannot evict pod as it would violate the pod's disruption budget."; kubelet's
"Node didn't have enough resource: cpu, requested: 3000, used: 3000, capacity: 4000" for a
second 3-CPU pod on a 4-CPU node (3000 + 3000 > 4000, by hand); the crash back-off of
10 s before the second restart (kubelet's initial back-off)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serve_cluster_helpers import FAST, eventually, get_json
from serve_harness import Server, started

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("workctl")
    yield from started(base, "--nodes", "3", "--node-cpu", "4", "--tls", "--token-file", str(base / "tokens"), *FAST)


def apply(server: Server, doc: dict[str, Any]) -> None:
    server.kubectl("apply", "-f", "-", input=json.dumps(doc))


def live_pods(server: Server, selector: str) -> list[dict[str, Any]]:
    return [p for p in get_json(server, "pods", "-l", selector)["items"]
            if not p["metadata"].get("deletionTimestamp") and p["status"].get("phase") not in ("Succeeded", "Failed")]


def test_secret_service_account_and_token(server: Server) -> None:
    server.kubectl("create", "secret", "generic", "creds", "--from-literal=user=admin", "--from-literal=pw=s3cret")
    s = get_json(server, "secret", "creds")
    assert s["type"] == "Opaque" and s["data"] == {"user": "YWRtaW4=", "pw": "czNjcmV0"}  # base64 by hand
    server.kubectl("create", "serviceaccount", "robot")
    token = server.kubectl("create", "token", "robot", "--duration=15m").stdout.strip()
    assert token.count(".") == 2
    # the issued token authenticates; a forged one does not
    out = server.kubectl("--token", token, "get", "secret", "creds", "-o", "name").stdout
    assert out.strip() == "secret/creds"
    bad = server.kubectl("--token", token[:-4] + "AAAA", "get", "pods", check=False)
    assert bad.returncode != 0 and "Unauthorized" in bad.stderr + bad.stdout
    eventually(lambda: server.kubectl("get", "sa", "default", check=False).returncode == 0, timeout=60)
    assert server.kubectl("create", "token", "default").stdout.count(".") == 2  # every namespace has one
    short = server.kubectl("create", "token", "robot", "--duration=1m", check=False)
    assert short.returncode != 0 and "less than 10 minutes" in short.stderr


def test_daemonset_rollout(server: Server) -> None:
    apply(server, {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
                   "spec": {"selector": {"matchLabels": {"app": "agent"}},
                            "template": {"metadata": {"labels": {"app": "agent"}},
                                         "spec": {"containers": [{"name": "a", "image": "agent:1"}]}}}})
    out = server.kubectl("rollout", "status", "ds/agent", "--timeout=60s", timeout=90).stdout
    assert 'daemon set "agent" successfully rolled out' in out
    pods = live_pods(server, "app=agent")
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["node-01", "node-02", "node-03"]
    for p in pods:
        terms = p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert terms["nodeSelectorTerms"] == [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                                 "values": [p["spec"]["nodeName"]]}]}]
        keys = {(t["key"], t["effect"]) for t in p["spec"]["tolerations"]}
        assert ("node.kubernetes.io/unschedulable", "NoSchedule") in keys
        assert ("node.kubernetes.io/unreachable", "NoExecute") in keys
    server.kubectl("set", "image", "ds/agent", "a=agent:2")
    out = server.kubectl("rollout", "status", "ds/agent", "--timeout=90s", timeout=120).stdout
    assert "successfully rolled out" in out
    eventually(lambda: sorted(p["spec"]["containers"][0]["image"] for p in live_pods(server, "app=agent"))
               == ["agent:2"] * 3, timeout=60)
    st = get_json(server, "ds", "agent")["status"]
    assert (st["desiredNumberScheduled"], st["currentNumberScheduled"], st["updatedNumberScheduled"],
            st["numberAvailable"]) == (3, 3, 3, 3)
    server.kubectl("delete", "ds", "agent")


def test_drain_with_an_allowing_and_a_blocking_budget(server: Server) -> None:
    server.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=3")
    server.kubectl("rollout", "status", "deployment/web", "--timeout=60s", timeout=90)
    server.kubectl("create", "pdb", "web", "--selector=app=web", "--max-unavailable=1")
    eventually(lambda: get_json(server, "pdb", "web").get("status", {}).get("disruptionsAllowed") == 1, timeout=60)
    st = get_json(server, "pdb", "web")["status"]
    assert (st["expectedPods"], st["desiredHealthy"], st["currentHealthy"]) == (3, 2, 3)  # 3 − 1 = 2
    node = live_pods(server, "app=web")[0]["spec"]["nodeName"]
    out = server.kubectl("drain", node, "--ignore-daemonsets", "--timeout=60s", timeout=90)
    assert f"node/{node} drained" in out.stdout
    server.kubectl("uncordon", node)
    server.kubectl("rollout", "status", "deployment/web", "--timeout=60s", timeout=90)

    server.kubectl("delete", "pdb", "web")
    server.kubectl("create", "pdb", "web-all", "--selector=app=web", "--min-available=100%")
    eventually(lambda: get_json(server, "pdb", "web-all").get("status", {}).get("observedGeneration") == 1
               and get_json(server, "pdb", "web-all")["status"].get("currentHealthy") == 3, timeout=60)
    node = live_pods(server, "app=web")[0]["spec"]["nodeName"]
    out = server.kubectl("drain", node, "--ignore-daemonsets", "--timeout=6s", check=False, timeout=60)
    assert out.returncode != 0
    assert "Cannot evict pod as it would violate the pod's disruption budget." in out.stderr
    server.kubectl("uncordon", node)
    server.kubectl("delete", "pdb", "web-all")
    server.kubectl("delete", "deployment", "web")


def test_logs_and_no_runtime(server: Server) -> None:
    server.kubectl("run", "solo", "--image=busybox:1.36")
    eventually(lambda: get_json(server, "pod", "solo")["status"].get("phase") == "Running", timeout=60)
    logs = server.kubectl("logs", "solo").stdout.splitlines()
    assert logs[1] == "kubesched: pulled image 'busybox:1.36'" and logs[2] == "kubesched: started container 'solo'"
    for args in (["exec", "solo", "--", "ls"], ["attach", "solo"], ["port-forward", "pod/solo", "18080:80"],
                 ["cp", "solo:/etc/hosts", "/tmp/kubesched-cp-test"]):
        out = server.kubectl(*args, check=False, timeout=30)
        assert out.returncode != 0, args
        assert "kubesched simulates nodes: no container runtime" in out.stderr, (args, out.stderr)
    server.kubectl("delete", "pod", "solo", "--wait=false")


def test_crash_loop_and_image_pull(server: Server) -> None:
    server.kubectl("run", "crasher", "--image=busybox", "--annotations=kubesched.io/fail=crash-loop",
                   "--annotations=kubesched.io/run-duration=200ms")
    server.kubectl("run", "puller", "--image=nosuch:1", "--annotations=kubesched.io/fail=image-pull")

    def status(name: str) -> dict[str, Any]:  # {} until the node agent has written one
        statuses = get_json(server, "pod", name)["status"].get("containerStatuses") or [{}]
        return {"restartCount": -1, "state": {}, **statuses[0]}

    eventually(lambda: status("crasher")["restartCount"] == 1, timeout=60)  # the first restart is immediate
    first = time.monotonic()
    eventually(lambda: status("crasher")["state"].get("waiting", {}).get("reason") == "CrashLoopBackOff", timeout=60)
    cs = status("crasher")
    assert cs["state"]["waiting"]["message"].startswith("back-off 10s restarting failed container=crasher pod=crasher_default(")
    assert cs["lastState"]["terminated"]["exitCode"] == 1 and cs["lastState"]["terminated"]["reason"] == "Error"
    eventually(lambda: status("crasher")["restartCount"] == 2, timeout=60)
    assert time.monotonic() - first >= 9.5  # not before the 10 s back-off (a lower bound: load only adds)
    table = server.kubectl("get", "pod", "crasher").stdout
    assert "CrashLoopBackOff" in table or "Running" in table
    events = server.kubectl("get", "events", "--field-selector", "involvedObject.name=crasher").stdout
    assert "Back-off restarting failed container crasher in pod crasher_default" in events

    # one snapshot: under load the back-off may end (ErrImagePull again) between two reads
    waiting = eventually(lambda: (w := status("puller")["state"].get("waiting", {})).get("reason") == "ImagePullBackOff"
                         and w, timeout=60)
    assert waiting["message"] == 'Back-off pulling image "nosuch:1"'
    assert get_json(server, "pod", "puller")["status"]["phase"] == "Pending"
    server.kubectl("delete", "pod", "crasher", "puller", "--wait=false")


def test_admission_rejection_is_replaced_by_the_replicaset(server: Server) -> None:
    apply(server, {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "hog"},
                   "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "hog"}},
                            "template": {"metadata": {"labels": {"app": "hog"}}, "spec": {
                                "nodeName": "node-03",
                                "containers": [{"name": "c", "image": "busybox",
                                                "resources": {"requests": {"cpu": "3"}}}]}}}})

    def failed() -> list[dict[str, Any]]:
        return [p for p in get_json(server, "pods", "-l", "app=hog")["items"] if p["status"].get("phase") == "Failed"]

    eventually(lambda: len(failed()) >= 2, timeout=90)  # rejected, replaced, rejected again
    p = failed()[0]
    assert p["status"]["reason"] == "OutOfcpu"
    assert p["status"]["message"] == ("Pod was rejected: Node didn't have enough resource: cpu, requested: 3000, "
                                      "used: 3000, capacity: 4000")
    running = [q for q in get_json(server, "pods", "-l", "app=hog")["items"] if q["status"].get("phase") == "Running"]
    assert len(running) == 1
    events = server.kubectl("get", "events", "--field-selector", f"involvedObject.name={p['metadata']['name']}").stdout
    assert "OutOfcpu" in events
    server.kubectl("delete", "rs", "hog", "--wait=false")


def test_gated_pod_and_cronjob_objects(server: Server) -> None:
    apply(server, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gated"},
                   "spec": {"schedulingGates": [{"name": "example.com/wait"}],
                            "containers": [{"name": "c", "image": "i"}]}})
    assert "SchedulingGated" in server.kubectl("get", "pod", "gated").stdout
    [cond] = get_json(server, "pod", "gated")["status"]["conditions"]
    assert (cond["reason"], cond["message"]) == ("SchedulingGated",
                                                 "Scheduling is blocked due to non-empty scheduling gates")
    server.kubectl("delete", "pod", "gated")
    server.kubectl("create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *")
    cj = get_json(server, "cronjob", "tick")
    assert cj["spec"]["concurrencyPolicy"] == "Allow" and cj["spec"]["successfulJobsHistoryLimit"] == 3
    bad = server.kubectl("create", "cronjob", "bad", "--image=busybox", "--schedule=not a schedule", check=False)
    assert bad.returncode != 0 and "spec.schedule" in bad.stderr
