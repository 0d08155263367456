"""``kubesched capacity fit|plan|drain`` on small clusters whose answers are computed by hand
here (each test shows the arithmetic). The scheduler's messages follow upstream's FitError
format (``pkg/scheduler/framework/types.go``: ``0/N nodes are available: `` then the
reasons with their node counts, sorted as strings) and NodeResourcesFit's ``Insufficient
<resource>`` (``pkg/scheduler/framework/plugins/noderesources/fit.go``)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kubesched.api.decode import load_manifests
from kubesched.api.errors import DecodeError
from kubesched.config import load_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.capacity.catalogue import load_catalogue
from kubesched.sim.capacity.common import RunOptions, load_pod_template
from kubesched.sim.capacity.drain import drain
from kubesched.sim.capacity.fit import fit
from kubesched.sim.capacity.plan import plan


def node(name: str, cpu: str, memory: str) -> str:
    return f"""---
apiVersion: v1
kind: Node
metadata: {{name: {name}}}
status: {{capacity: {{cpu: "{cpu}", memory: {memory}, pods: "110"}}}}
"""


def pod(name: str, cpu: str, memory: str, node_name: str = "", labels: str = "{}") -> str:
    where = f"nodeName: {node_name}, " if node_name else ""
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, labels: {labels}}}
spec: {{{where}containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}", memory: {memory}}}}}}}]}}
"""


def opts() -> RunOptions:
    return RunOptions(config=load_config(None, in_tree_registry()), tie_break="name")


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


# -- fit -------------------------------------------------------------------------------
FIT_CLUSTER = (node("n1", "4", "8Gi") + pod("running", "1", "1Gi", "n1")
               + node("n2", "2", "16Gi") + node("n3", "8", "4Gi"))
TEMPLATE = pod("web", "1", "1536Mi")


def test_fit_counts_copies_per_node_and_explains_the_refusal(tmp_path: Path) -> None:
    """Free room for a 1 cpu / 1.5Gi copy:
    n1: 3 cpu, 7Gi free     -> min(3, floor(7 / 1.5) = 4) = 3 copies
    n2: 2 cpu, 16Gi free    -> min(2, 10) = 2 copies
    n3: 8 cpu, 4Gi free     -> min(8, floor(4 / 1.5) = 2) = 2 copies
    7 in all. Copy 8 then meets: n1 0 cpu left (7 - 4.5 = 2.5Gi memory is enough),
    n2 0 cpu left, n3 6 cpu but 1Gi memory left -> "Insufficient memory"."""
    m = load_manifests([write(tmp_path, "c.yaml", FIT_CLUSTER)])
    tpl = load_pod_template(write(tmp_path, "t.yaml", TEMPLATE), m)
    r = fit(m, tpl, opts())
    assert r.count == 7
    assert r.per_node == {"n1": 3, "n2": 2, "n3": 2}
    assert r.stopped_by == "refusal"
    assert r.refusal is not None
    assert r.refusal.filter == {
        "n1": {"plugin": "NodeResourcesFit", "code": "Unschedulable", "reasons": ["Insufficient cpu"]},
        "n2": {"plugin": "NodeResourcesFit", "code": "Unschedulable", "reasons": ["Insufficient cpu"]},
        "n3": {"plugin": "NodeResourcesFit", "code": "Unschedulable", "reasons": ["Insufficient memory"]},
    }
    assert (r.message or "").startswith("0/3 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.")
    assert "preemptionPolicy=Never" in (r.message or "")  # copies never preempt
    assert r.reasons() == [{"plugin": "NodeResourcesFit", "reason": "Insufficient cpu", "nodes": 2},
                           {"plugin": "NodeResourcesFit", "reason": "Insufficient memory", "nodes": 1}]


def test_fit_schedules_pending_pods_first_and_stops_at_max(tmp_path: Path) -> None:
    """A pending 5 cpu / 2Gi pod takes its room first; only n3 has 5 cpu free, so n3 is
    left with 3 cpu and 2Gi -> min(3, floor(2 / 1.5) = 1) = 1 copy instead of 2:
    3 + 2 + 1 = 6 copies. With --max 4 the answer stops at 4."""
    m = load_manifests([write(tmp_path, "c.yaml", FIT_CLUSTER + pod("pending", "5", "2Gi"))])
    tpl = load_pod_template(write(tmp_path, "t.yaml", TEMPLATE), m)
    r = fit(m, tpl, opts())
    assert r.pending_first == 1
    assert (r.count, r.per_node) == (6, {"n1": 3, "n2": 2, "n3": 1})
    capped = fit(m, tpl, opts(), max_copies=4)
    assert (capped.count, capped.stopped_by, capped.refusal) == (4, "max", None)


def test_fit_template_errors_name_the_file(tmp_path: Path) -> None:
    m = load_manifests([write(tmp_path, "c.yaml", FIT_CLUSTER)])
    with pytest.raises(DecodeError) as e:
        load_pod_template(write(tmp_path, "t.yaml", node("x", "1", "1Gi")), m)
    assert str(e.value).endswith("t.yaml: document 1: kind: the template must be a Pod, PodTemplate, Deployment, ReplicaSet, StatefulSet or Job, got 'Node'")
    with pytest.raises(DecodeError) as e:
        load_pod_template(write(tmp_path, "t2.yaml", pod("web", "one", "1Gi")), m)
    assert "t2.yaml: Pod default/web: spec.containers[0].resources.requests.cpu: quantities must match" in str(e.value)


# -- plan ------------------------------------------------------------------------------
PLAN_CLUSTER = node("n1", "2", "8Gi") + "".join(pod(f"p{i}", "2", "1Gi") for i in range(1, 10)) \
    + pod("huge", "64", "1Gi")
CATALOGUE = """\
shapes:
- {name: small, cpu: "4", memory: 16Gi, price: 1}
- {name: large, cpu: "16", memory: 64Gi, price: 5}
"""


def _plan(tmp_path: Path, catalogue: str, objective: str):  # type: ignore[no-untyped-def]
    m = load_manifests([write(tmp_path, "c.yaml", PLAN_CLUSTER)])
    return plan(m, load_catalogue(write(tmp_path, "shapes.yaml", catalogue)), opts(), objective)


def test_plan_fewest_nodes(tmp_path: Path) -> None:
    """n1 (2 cpu) takes one of the nine 2-cpu pods; 8 x 2 = 16 cpu remain. One node must
    hold all 16 cpu: only `large` (16 cpu) does -> 1 node. `huge` (64 cpu) fits no shape."""
    r = _plan(tmp_path, CATALOGUE, "count")
    assert [(s.name, n.name) for s, n in r.added] == [("large", "large-new-1")]
    assert r.cost == 5.0
    assert (r.pending, r.scheduled_before) == (10, 1)
    assert sorted(r.placements) == [f"default/p{i}" for i in range(1, 10)]
    assert sum(1 for n in r.placements.values() if n == "large-new-1") == 8
    assert r.not_placed == []
    assert [u.pod for u in r.unplaceable] == ["default/huge"]
    assert r.unplaceable[0].shapes == {
        s: {"plugin": "NodeResourcesFit", "code": "UnschedulableAndUnresolvable", "reasons": ["Insufficient cpu"]}
        for s in ("small", "large")}


def test_plan_cheapest_nodes(tmp_path: Path) -> None:
    """16 cpu of 2-cpu pods: a small (4 cpu, price 1) holds 2 pods, a large (16 cpu, 5)
    holds 8. Covering 8 pods: 4 smalls cost 4, 1 large costs 5, any mix with a large
    costs more than 5 -> 4 smalls, price 4."""
    r = _plan(tmp_path, CATALOGUE, "price")
    assert r.counts() == {"small": 4}
    assert r.cost == 4.0
    assert r.not_placed == []
    new = {n.name for _, n in r.added}
    assert sum(1 for n in r.placements.values() if n in new) == 8


def test_plan_respects_max_and_prunes(tmp_path: Path) -> None:
    """At most 2 smalls (4 pods): the other 4 pods need the large, which alone holds all 8
    -> the cheapest answer within the limits is 1 large (5), not 2 smalls + 1 large (7)."""
    r = _plan(tmp_path, CATALOGUE.replace("price: 1}", "price: 1, max: 2}"), "price")
    assert r.counts() == {"large": 1}
    assert r.cost == 5.0
    assert r.not_placed == []


@pytest.mark.parametrize(("text", "message"), [
    ("shapes: []", "shapes.yaml: shapes: must be a non-empty list of node shapes"),
    ("shapes:\n- {name: a, memory: 1Gi}", "shapes.yaml: shape a: cpu: is required"),
    ("shapes:\n- {name: a, cpu: two, memory: 1Gi}",
     "shapes.yaml: shape a: cpu: quantities must match the regular expression"),
    ("shapes:\n- {name: a, cpu: 1, memory: 1Gi, price: -1}",
     "shapes.yaml: shape a: price: must be a non-negative number, got -1"),
    ("shapes:\n- {name: a, cpu: 1, memory: 1Gi, size: 3}", "shapes.yaml: shape a: size: unknown field"),
    ("shapes:\n- {name: a, cpu: 1, memory: 1Gi, taints: [{key: k, effect: Sometimes}]}",
     'shapes.yaml: shape a: taints[0].effect: Unsupported value: "Sometimes"'),
], ids=["empty", "no-cpu", "bad-cpu", "negative-price", "unknown-field", "bad-taint"])
def test_catalogue_errors(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(DecodeError) as e:
        load_catalogue(write(tmp_path, "shapes.yaml", text))
    assert message in str(e.value)


def test_plan_price_objective_needs_prices(tmp_path: Path) -> None:
    with pytest.raises(DecodeError) as e:
        _plan(tmp_path, "shapes:\n- {name: a, cpu: '4', memory: 16Gi}", "price")
    assert str(e.value) == "shape a: price: is required by --objective price"


# -- drain -----------------------------------------------------------------------------
DRAIN_CLUSTER = (node("n1", "4", "8Gi") + node("n2", "4", "8Gi") + node("n3", "4", "8Gi")
                 + pod("a1", "1", "1Gi", "n1", "{app: web}") + pod("d1", "1", "1Gi", "n2", "{app: db}")
                 + pod("big", "3", "1Gi", "n3") + """---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db}
spec: {minAvailable: 1, selector: {matchLabels: {app: db}}}
""")


def test_drain_exactly_the_nodes_that_can_go(tmp_path: Path) -> None:
    """Candidates least utilised first: n1 (1/4 cpu), n2 (1/4), n3 (3/4); n1 before n2 by name.
    n1: a1 (1 cpu) moves; n2 has 3 cpu free -> drainable, a1 now on n2.
    n2: PDB db selects d1, minAvailable 1 of 1 healthy pod -> disruptionsAllowed 1 - 1 = 0,
        the node holds 1 of its pods -> blocked.
    n3: big (3 cpu) must move; n1 is gone, n2 holds d1 + a1 (2 cpu, 2 free) -> no room."""
    m = load_manifests([write(tmp_path, "c.yaml", DRAIN_CLUSTER)])
    r = drain(m, opts())
    assert [v.node for v in r.verdicts] == ["n1", "n2", "n3"]
    assert r.drainable == ["n1"]
    n1, n2, n3 = r.verdicts
    assert n1.moves == {"default/a1": "n2"}
    assert n2.blocked_by == ["PodDisruptionBudget default/db allows 0 disruption(s), the node has 1 of its pods"]
    assert list(n3.unschedulable) == ["default/big"]
    assert n3.unschedulable["default/big"].startswith(
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable.")


def test_drain_given_nodes_in_order(tmp_path: Path) -> None:
    """--nodes n3 n1, in that order. n3: big (3 cpu) fits n1 or n2 (3 cpu free each, equal
    scores; --tie-break name -> n1) -> drainable. n1 then holds a1 + big (4 cpu), both must
    move, n3 is gone and n2 has 3 cpu free < 4 -> n1 is not drainable."""
    m = load_manifests([write(tmp_path, "c.yaml", DRAIN_CLUSTER)])
    r = drain(m, opts(), ["n3", "n1"])
    assert [(v.node, v.drainable) for v in r.verdicts] == [("n3", True), ("n1", False)]
    assert r.verdicts[0].moves == {"default/big": "n1"}
    assert sorted(r.verdicts[1].pods) == ["default/a1", "default/big"]
