"""``explain --fix`` on scenarios whose right fix is worked out by hand in each test.

Each test asserts that the expected fix is offered and verified (``verified: True``, the
pod's landing node), and that no offered fix is false: every fix is applied by hand to the
manifests and a fresh run must schedule the pod (``scenarios.assert_true_fix``).

Semantics the hand computations rely on (upstream kube-scheduler v1.34.1):
TaintToleration (``tainttoleration/taint_toleration.go``: NoSchedule/NoExecute taints must
be tolerated), NodeAffinity (``nodeaffinity/node_affinity.go``: every nodeSelector entry
must match), NodeResourcesFit (``noderesources/fit.go``: request <= allocatable - requested),
PodTopologySpread (``podtopologyspread/filtering.go``: matches in the node's domain + self
match - global minimum <= maxSkew), InterPodAffinity (``interpodaffinity/filtering.go``:
no pod matching a required anti-affinity term in the node's topology domain), DefaultPreemption
(``defaultpreemption/default_preemption.go``: lower-priority pods are victims).
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from kubesched.sim.mixed import mixed_objects
from tests.explain.scenarios import ZONE, assert_true_fix, node, pod, search, simulate

TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}


def _check_all(tmp_path: Path, objs: list, report, target: str) -> None:
    assert report.fixes, report.to_json()
    for fix in report.fixes:
        assert fix.verified and fix.node
        assert_true_fix(tmp_path, objs, fix, target)


def test_taint(tmp_path: Path) -> None:
    # a: 4 cpu but tainted dedicated=gpu:NoSchedule; b: 1 cpu. The pod asks 2 cpu:
    # only a has room, so tolerating the taint (or removing it from a) lands it on a.
    objs = [node("a", taints=[TAINT]), node("b", cpu="1"), pod("web", cpu="2")]
    _, report = search(tmp_path, objs, "web")
    by_kind = {f.kind: f for f in report.fixes}
    tol = by_kind["tolerate-taint"]
    assert tol.target == "pod" and tol.node == "a"
    assert tol.patch[0]["path"] == "/spec/tolerations"
    assert {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"} in tol.patch[0]["value"]
    assert by_kind["remove-taint"].target == "node/a" and by_kind["remove-taint"].node == "a"
    # lowering the request to b's 1 cpu is the other pod-only change
    assert by_kind["lower-request"].patch[0]["value"] == "1" and by_kind["lower-request"].node == "b"
    _check_all(tmp_path, objs, report, "web")


def test_selector(tmp_path: Path) -> None:
    # every node is disktype=hdd; the pod wants disktype=ssd: dropping the entry, or asking
    # for hdd, is the fix; both nodes have room.
    objs = [node("a", labels={"disktype": "hdd"}), node("b", labels={"disktype": "hdd"}),
            pod("web", spec={"nodeSelector": {"disktype": "ssd"}})]
    _, report = search(tmp_path, objs, "web")
    relax = [f for f in report.fixes if f.kind == "relax-node-selector"]
    assert {"op": "remove", "path": "/spec/nodeSelector/disktype"} in [f.patch[0] for f in relax]
    assert {"op": "replace", "path": "/spec/nodeSelector/disktype", "value": "hdd"} in [f.patch[0] for f in relax]
    assert all(f.node in ("a", "b") for f in relax)
    _check_all(tmp_path, objs, report, "web")


def _zones() -> list:
    # zones a, b, c with one 2-cpu node each; app=web pods: a 2, b 2, c 1 (1 cpu each), so
    # every node is full. The 6th replica (maxSkew 1 on zone): zone-a gives 2 + 1 - 1 = 2 > 1,
    # zone-b the same; zone-c gives 1 + 1 - 1 = 1 (allowed) but has no cpu left.
    web = {"app": "web"}
    spread = {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                                             "labelSelector": {"matchLabels": web}}]}
    return [node("a1", cpu="2", labels={ZONE: "zone-a"}), node("b1", cpu="2", labels={ZONE: "zone-b"}),
            node("c1", cpu="1", labels={ZONE: "zone-c"}),
            pod("w1", on="a1", labels=web), pod("w2", on="a1", labels=web), pod("w3", on="b1", labels=web),
            pod("w4", on="b1", labels=web), pod("w5", on="c1", labels=web),
            pod("web-6", labels=web, spec=spread)]


def test_full_zone_under_max_skew_1(tmp_path: Path) -> None:
    objs = _zones()
    _, report = search(tmp_path, objs, "web-6")
    fixes = {(f.kind, str(f.patch)): f for f in report.fixes}
    # maxSkew 2 admits zone-a and zone-b by skew, but they have no cpu: not a fix. Only
    # ScheduleAnyway does not help either (every node is full). A new node is what works,
    # and only in zone-c: a zone-a node would hold skew 2 + 1 - 1 = 2 > 1.
    adds = [f for f in report.fixes if f.kind == "add-node"]
    assert adds and all(f.extra["nodeGroup"] == "c1" for f in adds), [f.to_json() for f in adds]
    assert adds[0].patch["metadata"]["labels"][ZONE] == "zone-c"
    assert not any(k == "relax-spread" for k, _ in fixes)
    _check_all(tmp_path, objs, report, "web-6")


def test_spread_relaxed_when_room_elsewhere(tmp_path: Path) -> None:
    # as above, but zone-a's node has 1 cpu free (3 cpu): with maxSkew 2 the pod fits there
    # (skew 2 + 1 - 1 = 2 <= 2); zone-c is still full.
    objs = _zones()
    objs[0] = node("a1", cpu="3", labels={ZONE: "zone-a"})
    _, report = search(tmp_path, objs, "web-6")
    relax = {f.patch[0]["path"]: f for f in report.fixes if f.kind == "relax-spread"}
    assert relax["/spec/topologySpreadConstraints/0/maxSkew"].patch[0]["value"] == 2
    assert relax["/spec/topologySpreadConstraints/0/maxSkew"].node == "a1"
    assert relax["/spec/topologySpreadConstraints/0/whenUnsatisfiable"].node == "a1"
    _check_all(tmp_path, objs, report, "web-6")


def test_required_anti_affinity(tmp_path: Path) -> None:
    # one app=db pod on each of a and b; the new db pod must not share a host with one.
    db = {"app": "db"}
    anti = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": db}, "topologyKey": "kubernetes.io/hostname"}]}}}
    objs = [node("a"), node("b"), pod("db-1", on="a", labels=db), pod("db-2", on="b", labels=db),
            pod("db-3", labels=db, spec=anti)]
    _, report = search(tmp_path, objs, "db-3")
    kinds = {f.kind for f in report.fixes}
    relax = next(f for f in report.fixes if f.kind == "relax-affinity")
    assert relax.patch[0] == {"op": "remove", "path": "/spec/affinity/podAntiAffinity/"
                                                      "requiredDuringSchedulingIgnoredDuringExecution/0"}
    assert relax.patch[1]["value"][0]["weight"] == 100
    assert "add-node" in kinds  # a third host holds no db pod
    _check_all(tmp_path, objs, report, "db-3")


def test_too_large_request(tmp_path: Path) -> None:
    # two 4-cpu nodes with 2 cpu used each; the pod asks 3: at most 2 fits.
    objs = [node("a"), node("b"), pod("x", cpu="2", on="a"), pod("y", cpu="2", on="b"), pod("big", cpu="3")]
    _, report = search(tmp_path, objs, "big")
    lower = next(f for f in report.fixes if f.kind == "lower-request")
    assert lower.patch == [{"op": "add", "path": "/spec/containers/0/resources/requests/cpu", "value": "2"}]
    _check_all(tmp_path, objs, report, "big")


def test_preemption_at_higher_priority(tmp_path: Path) -> None:
    # one 2-cpu node full with a priority-0 pod; PriorityClass high (1000) exists. At
    # priority 1000 the pod preempts low (its only victim) and lands on n.
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
    objs = [high, node("n", cpu="2"), pod("low", cpu="2", on="n"), pod("p", cpu="1")]
    _, report = search(tmp_path, objs, "p")
    rp = next(f for f in report.fixes if f.kind == "raise-priority")
    assert rp.disturbs == ("default/low",) and rp.node == "n"
    assert {"op": "add", "path": "/spec/priorityClassName", "value": "high"} in rp.patch
    _check_all(tmp_path, objs, report, "p")


def test_missing_node_shape(tmp_path: Path) -> None:
    # two cpu-only nodes (group "cpu") and one 1-GPU node whose GPU is taken: the pod asks
    # one GPU, so only a node like the GPU node helps; no cpu-node shape is offered.
    gpu = {"nvidia.com/gpu": "1"}
    objs = [node("cpu-1", labels={"pool": "cpu"}), node("cpu-2", labels={"pool": "cpu"}),
            node("gpu-1", labels={"pool": "gpu"}, extra=gpu),
            pod("trainer", on="gpu-1", extra=gpu), pod("job", extra=gpu)]
    _, report = search(tmp_path, objs, "job")
    adds = [f for f in report.fixes if f.kind == "add-node"]
    assert [f.extra["nodeGroup"] for f in adds] == ["gpu-1"]
    assert adds[0].node == adds[0].patch["metadata"]["name"]
    _check_all(tmp_path, objs, report, "job")


def test_ranked_by_how_little_they_change(tmp_path: Path) -> None:
    # Fix.rank: pods disturbed first, then objects added, then fields changed
    objs = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
             "value": 1000}, node("n", cpu="2", taints=[TAINT]), node("m", cpu="2"),
            pod("low", cpu="2", on="m"), pod("p", cpu="1")]
    _, report = search(tmp_path, objs, "p")
    ranks = [f.rank() for f in report.fixes]
    assert ranks == sorted(ranks)
    kinds = [f.kind for f in report.fixes]
    assert kinds.index("tolerate-taint") < kinds.index("raise-priority")
    _check_all(tmp_path, objs, report, "p")


def test_move_pods(tmp_path: Path) -> None:
    # a and b: 4 cpu with a 2-cpu pod each; c: 2 cpu, empty. The pod asks 3: no node has
    # it free. Moving the one pod off a (or b) frees 4 there; the moved pod (2 cpu) fits on
    # c or on the other 4-cpu node.
    objs = [node("a"), node("b"), node("c", cpu="2"), pod("x", cpu="2", on="a"), pod("y", cpu="2", on="b"),
            pod("p", cpu="3")]
    _, report = search(tmp_path, objs, "p")
    moves = [f for f in report.fixes if f.kind == "move-pods"]
    assert moves, report.to_json()
    for f in moves:
        assert len(f.disturbs) == 1 and f.node == f.target.split("/", 1)[1]
        assert set(f.moves) == set(f.disturbs) and all(n != f.node for n in f.moves.values())
    _check_all(tmp_path, objs, report, "p")


def test_scale_down(tmp_path: Path) -> None:
    # ReplicaSet web (2 replicas, 2 cpu each) fills nodes a and b (2 cpu each). Scaled to 1,
    # the controller deletes one pod per node... both nodes hold one: the newest goes (w2,
    # on b), and the pending pod lands on b.
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "default"},
          "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                   "template": {"metadata": {"labels": {"app": "web"}}}}}
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "rs-web", "controller": True}
    objs = [rs, node("a", cpu="2"), node("b", cpu="2"),
            pod("w1", cpu="2", on="a", labels={"app": "web"}, owner=owner),
            pod("w2", cpu="2", on="b", labels={"app": "web"}, owner=owner), pod("p", cpu="2")]
    _, report = search(tmp_path, objs, "p")
    sd = next(f for f in report.fixes if f.kind == "scale-down")
    assert sd.target == "workload/ReplicaSet/default/web" and sd.patch == {"spec": {"replicas": 1}}
    assert sd.disturbs == ("default/w2",) and sd.node == "b"
    _check_all(tmp_path, objs, report, "p")


@pytest.mark.slow
def test_no_false_fix_with_other_pods_pending(tmp_path: Path) -> None:
    """On the generated "mixed" cluster (kubesched.sim.mixed: varied requests, selectors,
    spread, anti-affinity, taints, three priorities) filled past capacity, the fixes of a few
    pending pods each hold when applied by hand and the whole cluster (every other pending
    pod included, ahead of the pod in the queue) is scheduled again."""
    objs = [o for o in mixed_objects(12, 0, 260, 5)]
    first = simulate(tmp_path, objs, name="mixed.yaml")
    state = [o for o in objs if o["kind"] != "Pod"]
    for p in first.cluster.pods.values():  # the run's end state: bound pods bound, the rest pending
        raw = copy.deepcopy(p.raw)
        raw.pop("status", None)
        if p.node_name:
            raw["spec"]["nodeName"] = p.node_name
        state.append(raw)
    pending = [o.pod.name for o in first.results() if o.status == "Unschedulable"]
    assert len(pending) > 10
    offered = 0
    for name in pending[:3]:
        _, report = search(tmp_path, state, name)
        for fix in report.fixes:
            offered += 1
            assert_true_fix(tmp_path, state, fix, name)
    assert offered > 0


def test_required_node_affinity_expression(tmp_path: Path) -> None:
    # the pod requires disktype In [ssd] AND zone In [zone-a] (one term); the only zone-a node
    # is hdd, the ssd node is in zone-b. Dropping either expression admits one node; dropping
    # the whole required affinity admits both but changes more (ranked after).
    term = {"matchExpressions": [{"key": "disktype", "operator": "In", "values": ["ssd"]},
                                 {"key": ZONE, "operator": "In", "values": ["zone-a"]}]}
    aff = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}}
    objs = [node("a", labels={"disktype": "hdd", ZONE: "zone-a"}), node("b", labels={"disktype": "ssd", ZONE: "zone-b"}),
            pod("p", spec=aff)]
    _, report = search(tmp_path, objs, "p")
    relax = [f for f in report.fixes if f.kind == "relax-affinity"]
    base = "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution"
    assert [(f.patch[0]["path"], f.node) for f in relax] == [
        (base + "/nodeSelectorTerms/0/matchExpressions/0", "a"),
        (base + "/nodeSelectorTerms/0/matchExpressions/1", "b"),
        (base, relax[2].node)]
    _check_all(tmp_path, objs, report, "p")


def test_scale_down_a_statefulset_removes_its_highest_ordinal(tmp_path: Path) -> None:
    # StatefulSet db (2 replicas, 2 cpu each) fills a and b. Scaled to 1 it deletes db-1, its
    # highest ordinal (statefulset/stateful_set_control.go: condemned pods, highest ordinal
    # first) — although db-0 is listed later (newer by arrival) — and the pod lands on db-1's node.
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"},
           "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "db"}},
                    "template": {"metadata": {"labels": {"app": "db"}}}}}
    owner = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": "sts-db", "controller": True}
    objs = [sts, node("a", cpu="2"), node("b", cpu="2"),
            pod("db-1", cpu="2", on="b", labels={"app": "db"}, owner=owner),
            pod("db-0", cpu="2", on="a", labels={"app": "db"}, owner=owner), pod("p", cpu="2")]
    _, report = search(tmp_path, objs, "p")
    sd = next(f for f in report.fixes if f.kind == "scale-down")
    assert sd.target == "workload/StatefulSet/default/db" and sd.patch == {"spec": {"replicas": 1}}
    assert sd.disturbs == ("default/db-1",) and sd.node == "b"
    _check_all(tmp_path, objs, report, "p")
