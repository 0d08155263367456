"""``Lt``/``Gt`` tolerations behind TaintTolerationComparisonOperators (alpha, off by default).

Expected values: upstream ``staging/src/k8s.io/api/core/v1/toleration_test.go``
(TestTolerationToleratesTaint, its Gt/Lt rows) for the comparison; ``toleration.go``
``ToleratesTaint`` for the gate (off: a Lt/Gt toleration tolerates nothing) and
``compareNumericValues`` for the canonical-integer rule (apimachinery ``content.IsDecimalInteger``:
no leading zeros, no ``+``); ``taint_toleration.go`` passes the gate to
``FindMatchingUntoleratedTaint`` in Filter and to the PreferNoSchedule count in Score.
"""

from __future__ import annotations

import pytest

from kubesched.api.errors import KubeschedError
from kubesched.api.objects import Pod, Taint, Toleration
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.features import Features
from kubesched.plugins.tainttoleration import TaintToleration
from kubesched.testing.handle import handle_for
from kubesched.testing.harness import score_all
from tests.plugins.test_tainttoleration import node, pod, tol

SLA = "node.kubernetes.io/sla"
NS, PNS = "NoSchedule", "PreferNoSchedule"


@pytest.mark.parametrize("op,tol_value,taint_key,taint_value,want", [
    pytest.param("Gt", "950", SLA, "800", False, id="gt-taint-less"),
    pytest.param("Gt", "750", SLA, "950", True, id="gt-taint-greater"),
    pytest.param("Lt", "800", SLA, "950", False, id="lt-taint-greater"),
    pytest.param("Lt", "950", SLA, "800", True, id="lt-taint-less"),
    pytest.param("Gt", "950", SLA, "950", False, id="gt-equal"),
    pytest.param("Gt", "950", SLA, "high", False, id="gt-non-numeric-taint"),
    pytest.param("Gt", "-100", "test-key", "-200", False, id="gt-negative"),
    pytest.param("Gt", "9223372036854775806", "test-key", "100", False, id="gt-large-int64"),
    # compareNumericValues: values not in canonical form match nothing
    pytest.param("Gt", "100", SLA, "0950", False, id="leading-zero-taint"),
    pytest.param("Lt", "+950", SLA, "800", False, id="plus-sign-toleration"),
    pytest.param("Lt", "9223372036854775808", SLA, "1", False, id="beyond-int64"),
])
def test_toleration_compares_values(op: str, tol_value: str, taint_key: str, taint_value: str, want: bool) -> None:
    toleration = Toleration(key=taint_key, operator=op, value=tol_value, effect=NS)
    taint = Taint(key=taint_key, value=taint_value, effect=NS)
    assert toleration.tolerates(taint, comparison_operators=True) is want
    # gate off: ToleratesTaint's Lt/Gt branch returns false before comparing
    assert toleration.tolerates(taint) is False


def _filter(version_gates: str | None, p: Pod, taint_value: str) -> bool:
    handle = handle_for([], [node("n1", [(SLA, taint_value, NS)])])
    handle.features = Features.for_version("1.37", version_gates)
    pl = TaintToleration(None, handle)
    table = handle.snapshot.table
    per_node = pl.filter(CycleState(), p, handle.snapshot.node_infos[0]).success
    assert pl.filter_nodes(CycleState(), p, table, table.all).tolist() == [per_node]
    return per_node


def test_filter_follows_the_gate() -> None:
    p = pod([tol(SLA, "900", NS, "Gt")])
    assert _filter("TaintTolerationComparisonOperators=true", p, "950")
    assert not _filter("TaintTolerationComparisonOperators=true", p, "800")
    assert not _filter(None, p, "950")  # off by default in every release


def test_score_counts_prefer_no_schedule_taints_with_the_gate() -> None:
    """Score counts untolerated PreferNoSchedule taints: the Gt toleration tolerates n1's
    taint (950 > 900) and not n2's (800), so n1 scores 100 and n2 0; without the gate both
    taints are untolerated and both nodes score 0 (DefaultNormalizeScore, reversed, of 1 and 1)."""
    p = pod([tol(SLA, "900", PNS, "Gt")])
    nodes = [node("n1", [(SLA, "950", PNS)]), node("n2", [(SLA, "800", PNS)])]
    for gates, want in (("TaintTolerationComparisonOperators=true", {"n1": 100, "n2": 0}),
                        (None, {"n1": 0, "n2": 0})):
        handle = handle_for([], nodes)
        handle.features = Features.for_version("1.37", gates)
        assert score_all(TaintToleration(None, handle), p, handle) == want


def test_flag_is_taken() -> None:
    assert Features.for_version("1.35", "TaintTolerationComparisonOperators=true").enabled(
        "TaintTolerationComparisonOperators")


@pytest.mark.parametrize("value,ok", [("950", True), ("-5", True), ("0", True), ("0950", False),
                                      ("+1", False), ("high", False), ("", False)])
def test_pods_with_comparison_tolerations_validate(value: str, ok: bool) -> None:
    """An API server with the gate on accepts Lt/Gt whose value is a canonical decimal integer."""
    raw = {"metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "i"}],
                    "tolerations": [{"key": SLA, "operator": "Lt", "value": value, "effect": NS}]}}
    if ok:
        assert Pod.from_dict(raw).tolerations[0].operator == "Lt"
    else:
        with pytest.raises(KubeschedError, match=r"spec\.tolerations\[0\]\.value"):
            Pod.from_dict(raw)


@pytest.mark.parametrize("gates,b_fits", [("TaintTolerationComparisonOperators=true", False), (None, True)])
def test_pod_topology_spread_node_inclusion_follows_the_gate(gates: str | None, b_fits: bool) -> None:
    """PodTopologySpread's ``matchNodeInclusionPolicies`` passes the gate to
    ``FindMatchingUntoleratedTaint`` (podtopologyspread/common.go). Zones a and b; b is
    tainted sla=950 and runs one matching pod; the pod tolerates sla Gt 900, nodeTaintsPolicy
    Honor, maxSkew 1. With the gate b counts: zone counts a 0, b 1, so b would make the skew
    1 + 1 - 0 = 2 > 1 and fails while a passes. Without it b is left out: only a is counted
    (0), and b's skew is 0 + 1 - 0 = 1, so both pass (hand computation from filtering.go)."""
    from kubesched.plugins.podtopologyspread import PodTopologySpread
    from kubesched.testing.harness import filter_all
    from kubesched.testing.wrappers import make_node, make_pod

    zone = "topology.kubernetes.io/zone"
    nodes = [make_node().name("a").label(zone, "a").obj(),
             make_node().name("b").label(zone, "b").taint(SLA, "950").obj()]
    existing = make_pod().name("e").label("app", "web").node("b").obj()
    p = (make_pod().name("p").label("app", "web").toleration(SLA, "Gt", "900", NS)
         .spread(1, zone, "DoNotSchedule", {"matchLabels": {"app": "web"}}, nodeTaintsPolicy="Honor").obj())
    handle = handle_for([existing], nodes)
    handle.features = Features.for_version("1.37", gates)
    got = {n: s.success for n, s in filter_all(PodTopologySpread(None, handle), p, handle).items()}
    assert got == {"a": True, "b": b_fits}
