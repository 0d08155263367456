"""``kubesched bench``: every workload, at small size, schedules every pod, respects node
capacity and its own constraint; the metrics follow upstream scheduler_perf's definitions
(``test/integration/scheduler_perf/util.go``, ``throughputCollector``)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.api.selectors import LabelSelector, Requirement
from kubesched.cli.main import main
from kubesched.sim.bench import RESULT_KEYS, Bench, BenchSpec, nearest_rank, throughput_samples
from kubesched.sim.workloads import HOSTNAME_LABEL, WORKLOADS, ZONE_LABEL

NODES = 50

EXPECTED_KEYS = [
    "pods_per_second", "throughput_1s_avg", "throughput_1s_p50", "throughput_1s_p90",
    "throughput_1s_p99", "algo_latency_p50_ms", "algo_latency_p99_ms", "max_rss_mb",
    "percentage_of_nodes_to_score", "nodes", "pods", "scheduled",
]


def _tainted(node: Node) -> bool:
    return any(t.key == "foo" and t.effect == "NoSchedule" for t in node.taints)


def _tolerates_foo(pod: Pod) -> bool:
    return any(t.key == "foo" for t in pod.tolerations)


def _check_none(pods: list[Pod], nodes: dict[str, Node]) -> None:
    pass


def _check_required_anti_affinity(pods: list[Pod], nodes: dict[str, Node]) -> None:
    """The template's terms cover both namespaces: at most one green pod per node."""
    per_node = Counter(p.node_name for p in pods if p.labels.get("color") == "green")
    assert max(per_node.values()) == 1


def _check_preferred_anti_affinity(pods: list[Pod], nodes: dict[str, Node]) -> None:
    """With no more yellow pods than nodes, the weight-2 InterPodAffinity score (100 vs 0)
    outweighs the resource scores' few points: every pod gets a node of its own."""
    yellow = [p for p in pods if p.labels.get("color") == "yellow"]
    assert len(yellow) <= len(nodes)
    assert max(Counter(p.node_name for p in yellow).values()) == 1


def _check_zone_spread(pods: list[Pod], nodes: dict[str, Node]) -> None:
    """maxSkew 5 on the zone, every node feasible: zone counts differ by at most 5."""
    blue = Counter(nodes[p.node_name].labels[ZONE_LABEL] for p in pods if p.labels.get("color") == "blue")
    counts = [blue.get(z, 0) for z in ("moon-1", "moon-2", "moon-3")]
    assert sum(counts) > 0 and max(counts) - min(counts) <= 5


def _check_taints(pods: list[Pod], nodes: dict[str, Node]) -> None:
    assert any(_tolerates_foo(p) for p in pods) and any(not _tolerates_foo(p) for p in pods)
    for p in pods:
        if not _tolerates_foo(p):
            assert not _tainted(nodes[p.node_name]), p.key


def _check_inclusion_policy(pods: list[Pod], nodes: dict[str, Node]) -> None:
    """Nobody tolerates foo; per namespace (the constraint's scope) the untainted nodes'
    counts differ by at most maxSkew 1, tainted nodes being left out of the skew (Honor)."""
    untainted = [n for n, node in nodes.items() if not _tainted(node)]
    for ns in {p.namespace for p in pods}:
        mine = [p for p in pods if p.namespace == ns]
        assert not any(_tainted(nodes[p.node_name]) for p in mine)
        per_node = Counter(p.node_name for p in mine)
        counts = [per_node.get(n, 0) for n in untainted]
        assert max(counts) - min(counts) <= 1


def _check_csi_limits(pods: list[Pod], nodes: dict[str, Node]) -> None:
    """Each pod has its own CSI volume of ebs.csi.aws.com; every node's CSINode allows 39."""
    assert all(len(p.pvc_names) == 1 for p in pods)
    assert max(Counter(p.node_name for p in pods).values()) <= 39


def _check_own_claim(pods: list[Pod], nodes: dict[str, Node]) -> None:
    assert all(p.pvc_names == (f"{p.name}-pvc",) for p in pods)


Check = Callable[[list[Pod], dict[str, Node]], None]

CASES: list[tuple[str, int, int, Check]] = [
    ("basic", 20, 60, _check_none),
    ("spread", 20, 60, _check_zone_spread),
    ("affinity", 10, 30, _check_required_anti_affinity),
    ("preferred-affinity", 20, 30, _check_preferred_anti_affinity),
    ("taints", 20, 60, _check_taints),
    ("inclusion-policy", 20, 60, _check_inclusion_policy),
    ("csi-pvs", 20, 60, _check_csi_limits),
    ("in-tree-pvs", 20, 60, _check_own_claim),
    ("default-spread", 20, 60, _check_none),  # spreading is soft: see the next test
    ("dra", 20, 40, _check_none),  # the devices: test_dra_workload_gives_each_pod_its_own_device
]


def test_csi_limit_binds_in_the_csi_workload() -> None:
    """2 nodes x 39 attachable ebs.csi.aws.com volumes: of 80 pods with a volume each, 78
    are scheduled and 2 stay pending (node(s) exceed max volume count)."""
    result = Bench(BenchSpec(workload="csi-pvs", nodes=2, init_pods=0, pods=80)).run()
    assert result.scheduled == 78


def test_every_workload_is_tested() -> None:
    assert sorted(c[0] for c in CASES) == sorted(WORKLOADS)


@pytest.mark.parametrize(("workload", "init", "measured", "check"), CASES, ids=[c[0] for c in CASES])
def test_workload_schedules_every_pod_within_capacity(workload: str, init: int, measured: int,
                                                      check: Check) -> None:
    bench = Bench(BenchSpec(workload=workload, nodes=NODES, init_pods=init, pods=measured))
    result = bench.run()
    assert result.scheduled == measured and result.pods == measured and result.nodes == NODES
    cluster = bench.sim.cluster
    nodes = cluster.nodes
    pods = list(cluster.pods.values())
    assert len(nodes) == NODES and len(pods) == init + measured
    assert all(p.node_name in nodes for p in pods), "every pod is bound"
    for name, node in nodes.items():
        assert node.labels[HOSTNAME_LABEL] == name
        mine = [p for p in pods if p.node_name == name]
        assert len(mine) <= node.allocatable["pods"]
        for res in ("cpu", "memory"):
            assert sum(p.requests.get(res, 0) for p in mine) <= node.allocatable[res]
    check(pods, nodes)
    # one algorithm-latency sample per scheduling cycle, init pods' and measured pods'
    assert len(bench.algo.samples) == init + measured


def test_default_spread_pods_get_default_constraints() -> None:
    """DefaultTopologySpreading: the measured pods (label app=scheduler-perf, no constraints
    of their own) are selected by the Service (selector app=scheduler-perf) and owned by the
    ReplicaSet (matchLabels app=scheduler-perf): helper.DefaultSelector gives the Service's
    label set plus the ReplicaSet's requirement, i.e. ``app In (scheduler-perf)`` twice."""
    bench = Bench(BenchSpec(workload="default-spread", nodes=6, init_pods=0, pods=6))
    bench.run()
    pods = [p for p in bench.sim.cluster.pods.values() if p.namespace == "service-ns"]
    assert len(pods) == 6
    plugin = bench.sim.sched.profiles["default-scheduler"].by_name["PodTopologySpread"]
    app = Requirement("app", "In", frozenset(["scheduler-perf"]))
    assert plugin.default_selector_of(pods[0]) == LabelSelector((app, app))
    # six empty, equal nodes in three zones (round-robin): at each step an empty node in a
    # least-used zone has the lowest PodTopologySpread counts (hostname and zone) and the
    # least allocation, so every plugin prefers it: two pods per zone, one per node
    zones = Counter(bench.sim.cluster.nodes[p.node_name].labels[ZONE_LABEL] for p in pods)
    assert zones == {"moon-1": 2, "moon-2": 2, "moon-3": 2}
    assert len({p.node_name for p in pods}) == 6
def test_dra_workload_gives_each_pod_its_own_device() -> None:
    """Every pod's claim (from the template) is allocated one device on the pod's node, no
    device twice; 60 pods on 10 nodes of 8 devices fit (at most 8 per node)."""
    bench = Bench(BenchSpec(workload="dra", nodes=10, init_pods=0, pods=60))
    assert bench.run().scheduled == 60
    claims = bench.sim.dra.claims
    devices = []
    for p in bench.sim.cluster.pods.values():
        claim = claims[(p.namespace, f"{p.name}-gpu")]
        assert [r.name for r in claim.reserved_for] == [p.name]
        results = claim.allocation["devices"]["results"] if claim.allocation else []
        assert len(results) == 1 and results[0]["pool"] == p.node_name
        devices.append((results[0]["pool"], results[0]["device"]))
    assert len(set(devices)) == 60


def test_result_json_keys() -> None:
    result = Bench(BenchSpec(workload="basic", nodes=10, init_pods=5, pods=10)).run()
    doc = result.to_json()
    assert list(doc) == EXPECTED_KEYS == list(RESULT_KEYS)
    assert doc["scheduled"] == 10 and doc["percentage_of_nodes_to_score"] == 100
    assert doc["pods_per_second"] > 0 and doc["max_rss_mb"] > 0
    assert 0 < doc["algo_latency_p50_ms"] <= doc["algo_latency_p99_ms"]


@pytest.mark.parametrize(("binds", "end", "expected"), [
    # first tick that saw a pod (t=1) only starts the collector; 2 pods in (1,2], 1 in (2,3]
    ([0.5, 1.5, 1.6, 2.5], 3.0, [2.0, 1.0]),
    # nothing scheduled before t=2: sampling starts there
    ([1.5, 2.5, 3.5], 3.9, [1.0]),
    # an empty interval is merged into the next and counted once per interval
    ([0.5, 1.5, 3.5], 4.0, [1.0, 0.5, 0.5]),
    # the interval cut short by the end of the run is not sampled
    ([0.5, 1.5, 2.2, 2.4], 2.4, [1.0]),
    ([0.1, 0.2], 0.2, []),
], ids=["steady", "late-start", "skipped-interval", "partial-tail", "too-short"])
def test_throughput_samples_as_upstream_collector(binds: list[float], end: float,
                                                  expected: list[float]) -> None:
    assert throughput_samples(binds, 0.0, end) == expected


@pytest.mark.parametrize(("values", "pct", "expected"), [
    ([1.0, 2.0, 3.0, 4.0], 50, 2.0),
    ([1.0, 2.0, 3.0, 4.0], 90, 4.0),
    ([1.0] * 99 + [7.0], 99, 1.0),
    ([1.0] * 98 + [7.0, 8.0], 99, 7.0),
    ([], 50, None),
], ids=["p50", "p90", "p99-of-100", "p99-second-largest", "empty"])
def test_nearest_rank_percentile(values: list[float], pct: int, expected: float | None) -> None:
    assert nearest_rank(values, pct) == expected


def test_cli_bench_json(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["bench", "--workload", "spread", "--nodes", "12", "--init-pods", "6", "--pods", "9",
               "--percentage-of-nodes-to-score", "50", "-o", "json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert list(doc) == [*EXPECTED_KEYS, "kubernetesVersion"]
    assert doc["scheduled"] == 9 and doc["nodes"] == 12 and doc["percentage_of_nodes_to_score"] == 50
    assert doc["kubernetesVersion"] == "1.34"  # tests/conftest.py pins the default release


def test_cli_bench_json_reports_the_release_and_gates(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["bench", "--workload", "basic", "--nodes", "3", "--init-pods", "0", "--pods", "2", "-o", "json",
               "--kubernetes-version", "v1.36.1", "--feature-gates", "OpportunisticBatching=false"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["kubernetesVersion"], doc["featureGates"]) == ("1.36", {"OpportunisticBatching": False})


def test_cli_bench_rejects_bad_sizes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--workload", "basic", "--nodes", "0"]) == 2
    assert "--nodes" in capsys.readouterr().err
    assert main(["bench", "--suite", "--scale", "3"]) == 2
    assert main(["bench", "--suite", "--nodes", "10"]) == 2
    assert "--scale" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_bench_suite_scaled(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["bench", "--suite", "--scale", "0.002", "-o", "json"])
    assert rc == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["workload"] for r in rows] == ["basic", "spread", "affinity", "preferred-affinity",
                                              "taints", "inclusion-policy", "csi-pvs", "in-tree-pvs", "default-spread",
                                              "basic", "dra", "mixed"]
    for row in rows:
        assert list(row["result"]) == EXPECTED_KEYS
        assert row["kubernetesVersion"] == "1.34"
        assert row["result"]["scheduled"] == row["pods"]
