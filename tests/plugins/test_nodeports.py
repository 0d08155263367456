"""NodePorts, both forms, against upstream's tables.

Cases ported from upstream ``pkg/scheduler/framework/plugins/nodeports/node_ports_test.go``
(TestNodePorts, TestPreFilterDisabled, Test_isSchedulableAfterPodDeleted) and, for the
sidecar rule of ``util.GetHostPorts``, ``pkg/scheduler/util/utils_test.go``.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from kubesched.api.objects import Node, Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import QueueingHint
from kubesched.framework.status import Code
from kubesched.plugins.nodeports import ERR_REASON, NodePorts, get_host_ports
from kubesched.testing.handle import handle_for


def port_pod(name: str, node: str, *infos: str, uid: str = "") -> Pod:
    """A pod whose one container has the host ports ``PROTO/IP/PORT``."""
    ports = []
    for info in infos:
        proto, ip, port = info.split("/")
        ports.append({"containerPort": int(port), "hostPort": int(port), "protocol": proto, "hostIP": ip})
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": uid or name}
    spec: dict[str, Any] = {"containers": [{"name": "c", "ports": ports}]}
    if node:
        spec["nodeName"] = node
    return Pod.from_dict({"metadata": meta, "spec": spec}, validate=False)


M1 = Node.from_dict({"metadata": {"name": "m1"}}, validate=False)


def run_both(pod: Pod, existing: list[Pod]) -> tuple[Any, Any, Any]:
    """(PreFilter status, per-node Filter status, batch verdict) on node m1 holding ``existing``."""
    handle = handle_for(existing, [M1])
    pl = NodePorts()
    state = CycleState()
    _, pre = pl.pre_filter(state, pod, handle.snapshot.node_infos)
    if pre.code == Code.Skip:
        return pre, None, None
    table = handle.snapshot.table
    ok = pl.filter_nodes(state, pod, table, table.all)
    assert isinstance(ok, np.ndarray)
    return pre, pl.filter(state, pod, handle.snapshot.node_infos[0]), bool(ok[0])


CONFLICT = "conflict"
CASES = [
    pytest.param(["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/9090"], None, id="other-port"),
    pytest.param(["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/8080"], CONFLICT, id="same-udp-port"),
    pytest.param(["TCP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], CONFLICT, id="same-tcp-port"),
    pytest.param(["TCP/127.0.0.1/8080"], ["TCP/127.0.0.2/8080"], None, id="different-host-ip"),
    pytest.param(["UDP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], None, id="different-protocol"),
    pytest.param(["UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/8080"], CONFLICT,
                 id="second-udp-port-conflict"),
    pytest.param(["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"], ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"],
                 CONFLICT, id="first-tcp-port-conflict"),
    pytest.param(["TCP/0.0.0.0/8001"], ["TCP/127.0.0.1/8001"], CONFLICT,
                 id="first-tcp-port-conflict-due-to-0.0.0.0-hostIP"),
    pytest.param(["TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"], ["TCP/127.0.0.1/8001"], CONFLICT,
                 id="tcp-hostport-conflict-due-to-0.0.0.0-hostIP"),
    pytest.param(["TCP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001"], CONFLICT,
                 id="second-tcp-port-conflict-to-0.0.0.0-hostIP"),
    pytest.param(["UDP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001"], None, id="second-different-protocol"),
    pytest.param(["UDP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"], CONFLICT,
                 id="udp-hostport-conflict-due-to-0.0.0.0-hostIP"),
]


@pytest.mark.parametrize("wanted,used,want", CASES)
def test_node_ports(wanted: list[str], used: list[str], want: str | None) -> None:
    pre, st, ok = run_both(port_pod("p", "", *wanted), [port_pod("e", "m1", *used)])
    assert pre.success
    if want is None:
        assert st.success and ok
    else:
        assert (st.code, st.reasons) == (Code.Unschedulable, (ERR_REASON,))
        assert not ok


def test_skip_filter_without_host_ports() -> None:
    pre, _, _ = run_both(Pod.from_dict({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}, validate=False), [])
    assert pre.code == Code.Skip


def test_pre_filter_disabled_is_an_error() -> None:
    handle = handle_for([], [M1])
    pod = port_pod("p", "", "TCP/127.0.0.1/80")
    table = handle.snapshot.table
    st = NodePorts().filter(CycleState(), pod, handle.snapshot.node_infos[0])
    assert st.code == Code.Error
    res = NodePorts().filter_nodes(CycleState(), pod, table, table.all)
    assert not isinstance(res, np.ndarray) and res.code == Code.Error


def test_sidecar_init_container_ports_count() -> None:
    """``GetHostPorts``: restartable init containers first, plain init containers never."""
    pod = Pod.from_dict({"metadata": {"name": "p"}, "spec": {
        "initContainers": [
            {"name": "init", "ports": [{"containerPort": 1, "hostPort": 1}]},
            {"name": "sidecar", "restartPolicy": "Always", "ports": [{"containerPort": 2, "hostPort": 2},
                                                                       {"containerPort": 3}]}],
        "containers": [{"name": "c", "ports": [{"containerPort": 4, "hostPort": 4}]}]}}, validate=False)
    assert [p.host_port for p in get_host_ports(pod)] == [2, 4]
    pre, st, ok = run_both(pod, [port_pod("e", "m1", "TCP/0.0.0.0/2")])
    assert pre.success and st.code == Code.Unschedulable and not ok
    pre, st, ok = run_both(pod, [port_pod("e", "m1", "TCP/0.0.0.0/1")])
    assert st.success and ok


WANTS_8080 = port_pod("p", "", "TCP//8080")


@pytest.mark.parametrize("deleted,want", [
    pytest.param("not-a-pod", QueueingHint.Queue, id="backoff-wrong-old-object"),
    pytest.param(Pod.from_dict({"metadata": {"name": "d"}, "spec": {"containers": [{"name": "c"}]}}, validate=False),
                 QueueingHint.QueueSkip, id="skip-queue-on-unscheduled"),
    pytest.param(Pod.from_dict({"metadata": {"name": "d"}, "spec": {"nodeName": "fake-node",
                                                                    "containers": [{"name": "c"}]}}, validate=False),
                 QueueingHint.QueueSkip, id="skip-queue-on-non-hostport"),
    pytest.param(port_pod("d", "fake-node", "TCP//8081"), QueueingHint.QueueSkip,
                 id="skip-queue-on-unrelated-hostport"),
    pytest.param(port_pod("d", "fake-node", "TCP//8080"), QueueingHint.Queue, id="queue-on-released-hostport"),
])
def test_is_schedulable_after_pod_deleted(deleted: Any, want: QueueingHint) -> None:
    assert NodePorts().is_schedulable_after_pod_deleted(WANTS_8080, deleted, None) == want


def test_batch_agrees_with_per_node_on_random_clusters() -> None:
    rng = random.Random(3)
    ips, protos, ports = ["", "0.0.0.0", "10.0.0.1", "10.0.0.2"], ["TCP", "UDP"], [80, 81, 82]

    def info() -> str:
        return f"{rng.choice(protos)}/{rng.choice(ips)}/{rng.choice(ports)}"

    for _ in range(30):
        nodes = [Node.from_dict({"metadata": {"name": f"n{i}"}}, validate=False) for i in range(10)]
        existing = [port_pod(f"e{j}", f"n{rng.randrange(10)}", *[info() for _ in range(rng.randrange(1, 3))])
                    for j in range(rng.randrange(12))]
        pod = port_pod("p", "", *[info() for _ in range(rng.randrange(1, 3))])
        handle = handle_for(existing, nodes)
        pl, state = NodePorts(), CycleState()
        pl.pre_filter(state, pod, handle.snapshot.node_infos)
        table = handle.snapshot.table
        want = [pl.filter(state, pod, ni).success for ni in handle.snapshot.node_infos]
        got = pl.filter_nodes(state, pod, table, table.all)
        assert isinstance(got, np.ndarray) and got.tolist() == want
