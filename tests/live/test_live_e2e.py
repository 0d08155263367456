"""A LiveScheduler (in this process) scheduling through a ``kubesched serve --no-scheduler``
process over HTTP (the API server alone: no simulated kubelets or controllers writing beside
the test): preemption end to end, a burst onto a nearly full cluster across an API server
restart, bind conflicts, explain(), a graceful stop."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from live_harness import (api_pods, cpu_millis, create, create_retrying, eventually, scheduled_condition,
                          settled)
from serve_harness import API_ONLY, Server, pod_manifest

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.registry import PluginSpec, Registry
from kubesched.framework.status import SUCCESS, Status
from kubesched.live import LiveScheduler
from kubesched.plugins.registry import in_tree_registry

pytestmark = pytest.mark.slow


def assert_cache_matches(sched: LiveScheduler, pods: dict[str, dict[str, Any]]) -> None:
    """Nothing leaks: no assumed pod is left, and each node's requested CPU in the cache is
    the sum of the pods the API server has bound there. The informer may still be
    delivering the last binds when the API server already shows them, so this waits (up to
    the usual 30 s) for the cache to catch up; a leak never does."""
    bound: Counter[str] = Counter()
    for p in pods.values():
        if p["spec"].get("nodeName"):
            bound[p["spec"]["nodeName"]] += cpu_millis(p)

    def state() -> tuple[list[str], dict[str, int]]:
        with sched.sched.lock:
            assumed = [st.pod.key for st in sched.cache.pod_states.values() if st.assumed]
            cached = {name: ni.requested.get("cpu", 0) for name, ni in sched.cache.nodes.items() if ni.node}
        return assumed, cached

    deadline = time.monotonic() + 30.0
    assumed, cached = state()
    while (assumed or cached != {n: bound.get(n, 0) for n in cached}) and time.monotonic() < deadline:
        time.sleep(0.1)
        assumed, cached = state()
    assert not assumed
    assert cached == {n: bound.get(n, 0) for n in cached}


def test_preemption_end_to_end(spawn: Callable[..., Server], live: Callable[..., LiveScheduler]) -> None:
    server = spawn("--nodes", "1", "--node-cpu", "4", *API_ONLY)
    status, _ = server.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", {
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000})
    assert status == 201
    victim = pod_manifest("victim", cpu="3")
    victim["spec"]["terminationGracePeriodSeconds"] = 1
    create(server, victim)
    time.sleep(0.5)
    assert not api_pods(server)["victim"]["spec"].get("nodeName")  # no scheduler yet (API_ONLY: --no-scheduler)
    sched = live(server)
    eventually(lambda: api_pods(server)["victim"]["spec"].get("nodeName") == "node-01")
    preemptor = pod_manifest("preemptor", cpu="2")
    preemptor["spec"]["priorityClassName"] = "high"
    create(server, preemptor)

    terminating = eventually(lambda: (v := api_pods(server).get("victim")) and v["metadata"].get("deletionTimestamp")
                             and v)
    (cond,) = [c for c in terminating["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "True", "PreemptionByScheduler", "default-scheduler: preempting to accommodate a higher priority pod")
    bound = eventually(lambda: (p := api_pods(server)) and "victim" not in p
                       and p["preemptor"]["spec"].get("nodeName") and p["preemptor"])
    assert bound["spec"]["nodeName"] == "node-01"
    status, evs = server.request("GET", "/apis/events.k8s.io/v1/namespaces/default/events")
    preempted = [e for e in evs["items"] if e["reason"] == "Preempted"]
    assert len(preempted) == 1 and preempted[0]["regarding"]["name"] == "victim"
    assert preempted[0]["note"] == f"Preempted by pod {bound['metadata']['uid']} on node node-01"
    assert preempted[0]["related"]["name"] == "preemptor" and preempted[0]["action"] == "Preempting"
    explained = sched.explain("default", "preemptor")
    assert explained is not None and explained["result"] == "Scheduled" and explained["chosen"] == "node-01"
    assert explained["filter"] == {"node-01": "ok"}
    assert sched.explain("default", "nobody") is None
    assert_cache_matches(sched, api_pods(server))


def test_burst_onto_a_nearly_full_cluster_across_an_api_server_restart(
        spawn: Callable[..., Server], live: Callable[..., LiveScheduler]) -> None:
    """300 pods of 150m onto 10 nodes of 4 CPU (room for 26 each: 260); the API server is
    restarted half-way. Watches resume from their resourceVersion, bindings in flight are
    retried or released, and in the end 260 pods are bound exactly once, none overcommits a
    node, 40 are reported unschedulable, and the scheduler's cache matches the API."""
    server = spawn("--nodes", "10", "--node-cpu", "4", "--bookmark-interval", "1", *API_ONLY)
    sched = live(server)

    def make(i: int) -> None:
        create_retrying(server, pod_manifest(f"p-{i:03d}", cpu="150m"))

    with ThreadPoolExecutor(6) as pool:
        list(pool.map(make, range(150)))
        server.restart()
        list(pool.map(make, range(150, 300)))

    pods = eventually(lambda: (p := api_pods(server)) and len(p) == 300 and settled(p) and p, timeout=90)
    per_node: Counter[str] = Counter()
    for p in pods.values():
        if p["spec"].get("nodeName"):
            per_node[p["spec"]["nodeName"]] += cpu_millis(p)
    assert max(per_node.values()) <= 4000, per_node  # no node overcommitted
    assert sum(1 for p in pods.values() if p["spec"].get("nodeName")) == 260
    assert sched.sink.binds == 260  # each bound once, by one successful binding
    pending = [p for p in pods.values() if not p["spec"].get("nodeName")]
    assert all(scheduled_condition(p)["message"].startswith("0/10 nodes are available: 10 Insufficient cpu.")
               for p in pending)
    assert sched.pods.stats.lists == 1 and sched.pods.stats.watches >= 2  # resumed, never re-listed
    eventually(lambda: sched.binder.in_flight == 0)
    assert_cache_matches(sched, pods)


class Gate:
    """A PreBind plugin that holds pods labelled ``gate`` until the test lets them go."""

    name = "TestGate"

    def __init__(self) -> None:
        self.held: dict[str, str] = {}  # pod name -> node
        self.release: dict[str, threading.Event] = {}
        self.lock = threading.Lock()

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        if "gate" in pod.labels:
            with self.lock:
                ev = self.release.setdefault(pod.name, threading.Event())
                self.held[pod.name] = node_name
            ev.wait(30)
        return SUCCESS

    def let_go(self, name: str) -> None:
        with self.lock:
            self.release.setdefault(name, threading.Event()).set()


def test_bind_conflicts_leave_nothing_in_the_cache(spawn: Callable[..., Server],
                                                   live: Callable[..., LiveScheduler]) -> None:
    """Between the scheduling cycle and the binding, one pod is bound elsewhere by someone
    else and another is deleted: the binding fails (409, 404), the assumed pods are forgotten
    and the cache holds exactly what the API server has bound."""
    server = spawn("--nodes", "2", "--node-cpu", "4", *API_ONLY)
    gate = Gate()
    registry = in_tree_registry().merged(Registry([PluginSpec("TestGate", lambda args, handle: gate)]))
    sched = live(server, {"profiles": [{"schedulerName": "default-scheduler",
                                        "plugins": {"preBind": {"enabled": [{"name": "TestGate"}]}}}]},
                 registry=registry)
    for name in ("contested", "vanishing"):
        m = pod_manifest(name, cpu="1")
        m["metadata"]["labels"] = {"gate": "yes"}
        create(server, m)
    eventually(lambda: len(gate.held) == 2)
    chosen = gate.held["contested"]
    elsewhere = "node-02" if chosen == "node-01" else "node-01"
    status, _ = server.request("POST", "/api/v1/namespaces/default/pods/contested/binding", {
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "contested"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": elsewhere}})
    assert status == 201
    assert server.request("DELETE", "/api/v1/namespaces/default/pods/vanishing")[0] == 200
    gate.let_go("contested")
    gate.let_go("vanishing")
    eventually(lambda: sched.binder.in_flight == 0)
    create(server, pod_manifest("after", cpu="1"))  # the scheduler goes on
    pods = eventually(lambda: (p := api_pods(server)) and p["after"]["spec"].get("nodeName") and p)
    assert set(pods) == {"contested", "after"} and pods["contested"]["spec"]["nodeName"] == elsewhere
    eventually(lambda: sched.sink.binds == 1)  # "after"; the others failed (409, 404)
    eventually(lambda: sched.pods.get_namespaced("default", "after") is not None
               and sched.pods.get_namespaced("default", "after").node_name)
    assert_cache_matches(sched, pods)


def test_stop_releases_bindings_still_in_flight(spawn: Callable[..., Server],
                                                live: Callable[..., LiveScheduler]) -> None:
    """A graceful stop waits for bindings in flight up to its timeout, then releases them:
    the sink refuses to bind, the assumed pod is forgotten, nothing is written."""
    server = spawn("--nodes", "1", *API_ONLY)
    gate = Gate()
    registry = in_tree_registry().merged(Registry([PluginSpec("TestGate", lambda args, handle: gate)]))
    sched = live(server, {"profiles": [{"schedulerName": "default-scheduler",
                                        "plugins": {"preBind": {"enabled": [{"name": "TestGate"}]}}}]},
                 registry=registry, stop_timeout=0.5)
    m = pod_manifest("held")
    m["metadata"]["labels"] = {"gate": "yes"}
    create(server, m)
    eventually(lambda: "held" in gate.held)
    stopper = threading.Thread(target=sched.stop)
    stopper.start()
    time.sleep(0.8)  # past the stop timeout: the binding is released
    gate.let_go("held")
    stopper.join(10)
    assert not stopper.is_alive() and not sched.ready
    assert not api_pods(server)["held"]["spec"].get("nodeName")
    with sched.sched.lock:
        assert not sched.cache.pod_states


def test_a_standby_keeps_its_cache_warm_then_schedules(spawn: Callable[..., Server]) -> None:
    """start_informers() alone fills the cache and the queue but binds nothing (a replica
    that does not lead); start_scheduling() schedules what was waiting."""
    from kubesched.cluster.kube import KubeClient
    from kubesched.config import load_config
    from kubesched.live import LiveOptions

    server = spawn("--nodes", "1", *API_ONLY)
    create(server, pod_manifest("waiting"))
    client = KubeClient.connect(str(server.kubeconfig))
    sched = LiveScheduler(load_config(None, in_tree_registry()), client, LiveOptions(informer_backoff=(0.1, 2, 1)))
    seen: list[tuple[str, float]] = []
    sched.loop.attempt_hooks.append(lambda pod, att, seconds: seen.append((pod.name, seconds)))
    try:
        sched.start_informers()
        eventually(lambda: all(i.has_synced for i in sched.informers))
        time.sleep(0.3)
        assert not sched.ready and sched.queue.pending() == 1 and "node-01" in sched.cache.nodes
        assert not api_pods(server)["waiting"]["spec"].get("nodeName")
        sched.start_scheduling()
        assert sched.wait_ready(10)
        eventually(lambda: api_pods(server)["waiting"]["spec"].get("nodeName") == "node-01")
        assert [name for name, _ in seen] == ["waiting"] and seen[0][1] > 0
    finally:
        sched.stop()
        client.close()


def test_a_compacted_watch_is_relisted_without_losing_pods(spawn: Callable[..., Server],
                                                            live: Callable[..., LiveScheduler]) -> None:
    """The scheduler falls behind (here: its lock is held, so its pod informer is stuck on
    an event), the API server restarts and, with a change log of one revision, compacts
    past the informer's resourceVersion: the resumed watch gets 410 Gone, the informer
    re-lists, and every pod created meanwhile is scheduled."""
    server = spawn("--nodes", "2", "--watch-history", "1", *API_ONLY)
    sched = live(server)
    create(server, pod_manifest("first"))
    eventually(lambda: api_pods(server)["first"]["spec"].get("nodeName"))
    eventually(lambda: sched.binder.in_flight == 0)
    with sched.sched.lock:
        events = sched.pods.stats.events
        create(server, pod_manifest("stuck"))
        eventually(lambda: sched.pods.stats.events > events)  # the informer waits for the lock
        server.restart()
        for i in range(80):  # more than the server's compaction batch (64 writes)
            create(server, pod_manifest(f"later-{i:02d}"))
    pods = eventually(lambda: (p := api_pods(server)) and len(p) == 82 and all(
        x["spec"].get("nodeName") for x in p.values()) and p)
    assert sched.pods.stats.gone >= 1 and sched.pods.stats.lists >= 2
    eventually(lambda: sched.binder.in_flight == 0 and sched.sink.binds == 82)
    assert_cache_matches(sched, pods)
