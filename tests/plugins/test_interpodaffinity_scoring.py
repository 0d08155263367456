"""InterPodAffinity PreScore/Score/NormalizeScore, ported from upstream
``pkg/scheduler/framework/plugins/interpodaffinity/scoring_test.go`` (v1.34):
TestPreferredAffinity and TestPreferredAffinityWithHardPodAffinitySymmetricWeight.

Every case is checked in both forms (per-node ``score`` and batch ``score_nodes``), after
NormalizeScore. Adaptations: upstream's ``""`` namespace is kubesched's ``"default"``; the
two cases with selector values of invalid label syntax are decode-time errors here and are
not ported. Plugin args parsing/validation is covered at the end.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from kubesched.api.objects import Node, Pod
from kubesched.api.policy import Namespace
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.errors import ProfileError
from kubesched.framework.status import Code, Status
from kubesched.plugins.interpodaffinity import InterPodAffinity, InterPodAffinityArgs
from kubesched.plugins.interpodaffinity.scoring import PRE_SCORE_STATE_KEY, PreScoreState
from kubesched.testing.handle import handle_for
from kubesched.testing.harness import score_all
from kubesched.testing.wrappers import make_pod

NAMESPACES = [Namespace.from_dict({"metadata": {"name": n, "labels": {"team": t}}}, validate=False)
              for n, t in (("subteam1.team1", "team1"), ("subteam2.team1", "team1"),
                           ("subteam1.team2", "team2"), ("subteam2.team2", "team2"))]
SKIP = "skip"
_names = itertools.count()


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def term(*exprs: dict[str, Any], tk: str, **extra: Any) -> dict[str, Any]:
    return {"labelSelector": {"matchExpressions": list(exprs)}, "topologyKey": tk, **extra}


def preferred(kind: str, *weighted: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    return {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": w, "podAffinityTerm": t} for w, t in weighted]}}


def merge(*parts: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in parts:
        out.update(p)
    return out


S1 = {"security": "S1"}
S2 = {"security": "S2"}
CHINA = {"region": "China"}
INDIA = {"region": "India"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
TEAM1 = {"matchExpressions": [expr("team", "In", "team1")]}

STAY_S1_REGION = preferred("podAffinity", (5, term(expr("security", "In", "S1"), tk="region")))
STAY_S2_REGION = preferred("podAffinity", (6, term(expr("security", "In", "S2"), tk="region")))
AFFINITY3 = preferred("podAffinity",
                      (8, term(expr("security", "NotIn", "S1"), expr("security", "In", "S2"), tk="region")),
                      (2, term(expr("security", "Exists"), expr("wrongkey", "DoesNotExist"), tk="region")))
HARD_AFFINITY = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    term(expr("security", "In", "S1", "value2"), tk="region"),
    term(expr("security", "Exists"), expr("wrongkey", "DoesNotExist"), tk="region")]}}
AWAY_S1_AZ = preferred("podAntiAffinity", (5, term(expr("security", "In", "S1"), tk="az")))
AWAY_S2_AZ = preferred("podAntiAffinity", (5, term(expr("security", "In", "S2"), tk="az")))
STAY_S1_AWAY_S2 = merge(preferred("podAffinity", (8, term(expr("security", "In", "S1"), tk="region"))),
                        preferred("podAntiAffinity", (5, term(expr("security", "In", "S2"), tk="az"))))
NS_SEL_TERM = term(expr("security", "In", "S1"), tk="region", namespaces=["subteam2.team2"],
                   namespaceSelector=TEAM1)
AFFINITY_NS_SELECTOR = preferred("podAffinity", (5, NS_SEL_TERM))
ANTI_AFFINITY_NS_SELECTOR = preferred("podAntiAffinity", (5, NS_SEL_TERM))


def pod(labels: dict[str, str] | None = None, node: str = "", ns: str = "",
        affinity: dict[str, Any] | None = None) -> Pod:
    w = make_pod().name(f"p{next(_names)}").labels(labels or {})
    if ns:
        w.namespace(ns)
    if node:
        w.node(node)
    if affinity is not None:
        w.affinity(affinity)
    return w.obj()


def node(name: str, labels: dict[str, str]) -> Node:
    return Node.from_dict({"metadata": {"name": name, "labels": dict(labels)}}, validate=False)


def nodes_of(*labels: dict[str, str]) -> list[Node]:
    return [node(f"node{i + 1}", lb) for i, lb in enumerate(labels)]


def check(incoming: Pod, pods: list[Pod], nodes: list[Node], want: list[int] | str,
          args: dict[str, Any]) -> None:
    handle = handle_for(pods, nodes, NAMESPACES)
    plugin = InterPodAffinity(args, handle)
    for batch in (False, True):
        got = score_all(plugin, incoming, handle, batch=batch)
        if want == SKIP:
            assert isinstance(got, Status) and got.code == Code.Skip
        else:
            assert got == {n.name: w for n, w in zip(nodes, want)}, f"batch={batch}"


def pods_on(labels: dict[str, str], *names: str, **kw: Any) -> list[Pod]:
    return [pod(labels, node=n, **kw) for n in names]


# -- TestPreferredAffinity ----------------------------------------------------------------
PREFERRED: list[tuple[str, Pod, list[Pod], list[Node], Any, bool]] = [
    ("affinity-nil", pod(S1), [], nodes_of(CHINA, INDIA, AZ1), SKIP, False),
    ("affinity-topology-and-pods-match",
     pod(S1, affinity=STAY_S1_REGION),
     [pod(S1, node="node1"), pod(S2, node="node2"), pod(S1, node="node3")],
     nodes_of(CHINA, INDIA, AZ1), [100, 0, 0], False),
    ("same-topology-value-same-score",
     pod(affinity=STAY_S1_REGION), [pod(S1, node="node1")],
     nodes_of(CHINA, CHINA_AZ1, INDIA), [100, 100, 0], False),
    ("region-with-more-matches-wins",
     pod(S1, affinity=STAY_S2_REGION), pods_on(S2, "node1", "node1", "node2", "node3", "node4", "node5"),
     nodes_of(CHINA, INDIA, CHINA, CHINA, INDIA), [100, 0, 100, 100, 0], False),
    ("different-operators-partial-matches",
     pod(S1, affinity=AFFINITY3),
     [pod(S1, node="node1"), pod(S2, node="node2"), pod(S1, node="node3")],
     nodes_of(CHINA, INDIA, AZ1), [20, 100, 0], False),
    ("symmetry-preferred-affinity",
     pod(S2), [pod(S1, node="node1", affinity=STAY_S1_REGION), pod(S2, node="node2", affinity=STAY_S2_REGION)],
     nodes_of(CHINA, INDIA, AZ1), [0, 100, 0], False),
    ("symmetry-affinity-namespace-selector",
     pod(S1, ns="subteam1.team1"),
     [pod(S1, node="node1", affinity=AFFINITY_NS_SELECTOR), pod(S2, node="node2", affinity=STAY_S2_REGION)],
     nodes_of(CHINA, INDIA, AZ1), [100, 0, 0], False),
    ("symmetry-anti-affinity-namespace-selector",
     pod(S1, ns="subteam1.team1"),
     [pod(S1, node="node1", affinity=ANTI_AFFINITY_NS_SELECTOR), pod(S2, node="node2", affinity=STAY_S2_REGION)],
     nodes_of(CHINA, INDIA, AZ1), [0, 100, 100], False),
    ("symmetry-required-affinity",
     pod(S1), [pod(S1, node="node1", affinity=HARD_AFFINITY), pod(S2, node="node2", affinity=HARD_AFFINITY)],
     nodes_of(CHINA, INDIA, AZ1), [100, 100, 0], False),
    ("anti-affinity-unmatched-node-high",
     pod(S1, affinity=AWAY_S1_AZ), [pod(S1, node="node1"), pod(S2, node="node2")],
     nodes_of(AZ1, CHINA), [0, 100], False),
    ("anti-affinity-topology-key-missing-high",
     pod(S1, affinity=AWAY_S1_AZ), [pod(S1, node="node1"), pod(S1, node="node2")],
     nodes_of(AZ1, CHINA), [0, 100], False),
    ("anti-affinity-more-matches-low",
     pod(S1, affinity=AWAY_S1_AZ), [pod(S1, node="node1"), pod(S1, node="node1"), pod(S2, node="node2")],
     nodes_of(AZ1, INDIA), [0, 100], False),
    ("anti-affinity-symmetry",
     pod(S2), [pod(S1, node="node1", affinity=AWAY_S2_AZ), pod(S2, node="node2", affinity=AWAY_S1_AZ)],
     nodes_of(AZ1, AZ2), [0, 100], False),
    ("affinity-and-anti-affinity",
     pod(S1, affinity=STAY_S1_AWAY_S2), [pod(S1, node="node1"), pod(S1, node="node2")],
     nodes_of(CHINA, AZ1), [100, 0], False),
    ("affinity-and-anti-affinity-same-labels",
     pod(S1, affinity=STAY_S1_AWAY_S2),
     pods_on(S1, "node1", "node1", "node2", "node3", "node3", "node4", "node5"),
     nodes_of(CHINA_AZ1, INDIA, CHINA, CHINA, INDIA), [100, 0, 100, 100, 0], False),
    ("affinity-anti-affinity-and-symmetry",
     pod(S1, affinity=STAY_S1_AWAY_S2),
     [pod(S1, node="node1"), pod(S2, node="node2"), pod(node="node3", affinity=STAY_S1_AWAY_S2),
      pod(node="node4", affinity=AWAY_S1_AZ)],
     nodes_of(CHINA, AZ1, INDIA, AZ2), [100, 0, 100, 0], False),
    ("partial-topology-with-affinity-pods-all-equal",
     pod(S1), [pod(S1, node="node1"), pod(node="node2", affinity=STAY_S1_AWAY_S2)],
     nodes_of(CHINA, CHINA), [0, 0], False),
    ("affinity-pods-matching-namespace-selector",
     pod(S1, ns="subteam1.team1", affinity=AFFINITY_NS_SELECTOR),
     pods_on(S1, "node1", "node1", ns="subteam1.team1") + [pod(S1, node="node1", ns="subteam1.team2"),
                                                          pod(S1, node="node2", ns="subteam2.team1")],
     nodes_of(CHINA, INDIA), [100, 0], False),
    ("affinity-pods-matching-namespace-selector-and-namespaces",
     pod(S1, ns="subteam1.team1", affinity=AFFINITY_NS_SELECTOR),
     pods_on(S1, "node1", "node1", ns="subteam1.team1") + [pod(S1, node="node1", ns="subteam2.team2"),
                                                          pod(S1, node="node2", ns="subteam2.team1")],
     nodes_of(CHINA, INDIA), [100, 0], False),
    ("anti-affinity-pods-matching-namespace-selector",
     pod(S1, ns="subteam1.team1", affinity=ANTI_AFFINITY_NS_SELECTOR),
     pods_on(S1, "node1", "node1", ns="subteam1.team1") + [pod(S1, node="node1", ns="subteam1.team2"),
                                                          pod(S1, node="node2", ns="subteam2.team1")],
     nodes_of(CHINA, INDIA), [0, 100], False),
    ("anti-affinity-pods-matching-namespace-selector-and-namespaces",
     pod(S1, ns="subteam1.team1", affinity=ANTI_AFFINITY_NS_SELECTOR),
     pods_on(S1, "node1", "node1", ns="subteam1.team1") + [pod(S1, node="node1", ns="subteam2.team2"),
                                                          pod(S1, node="node2", ns="subteam2.team1")],
     nodes_of(CHINA, INDIA), [0, 100], False),
    ("ignore-preferred-terms-of-existing-pods",
     pod(S2), [pod(S1, node="node1", affinity=STAY_S1_AWAY_S2), pod(S2, node="node2", affinity=STAY_S2_REGION)],
     nodes_of(CHINA, INDIA), SKIP, True),
    ("do-not-ignore-preferred-terms-of-existing-pods",
     pod(S2), [pod(S1, node="node1", affinity=STAY_S1_AWAY_S2), pod(S2, node="node2", affinity=STAY_S2_REGION)],
     nodes_of(CHINA, INDIA), [0, 100], False),
    ("no-nodes", pod(S2), [], [], SKIP, False),
]


@pytest.mark.parametrize("incoming,pods,nodes,want,ignore", [c[1:] for c in PREFERRED],
                         ids=[c[0] for c in PREFERRED])
def test_preferred_affinity(incoming: Pod, pods: list[Pod], nodes: list[Node], want: Any, ignore: bool) -> None:
    check(incoming, pods, nodes, want,
          {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": ignore})


# -- TestPreferredAffinityWithHardPodAffinitySymmetricWeight --------------------------------
SERVICE_S1 = {"service": "S1"}
HARD_POD_AFFINITY = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    term(expr("service", "In", "S1"), tk="region", namespaces=["default", "subteam2.team2"],
         namespaceSelector=TEAM1)]}}
HARD_NODES = nodes_of(CHINA, INDIA, AZ1)

HARD: list[tuple[str, str, int, Any]] = [
    ("default-weight", "", 1, [100, 100, 0]),
    ("zero-weight", "", 0, SKIP),
    ("no-matching-namespace", "subteam1.team2", 1, SKIP),
    ("matching-namespace-selector", "subteam1.team1", 1, [100, 100, 0]),
    ("matching-namespaces", "subteam2.team2", 1, [100, 100, 0]),
]


@pytest.mark.parametrize("ns,weight,want", [c[1:] for c in HARD], ids=[c[0] for c in HARD])
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(ns: str, weight: int, want: Any) -> None:
    pods = [pod(node="node1", affinity=HARD_POD_AFFINITY), pod(node="node2", affinity=HARD_POD_AFFINITY)]
    check(pod(SERVICE_S1, ns=ns), pods, HARD_NODES, want, {"hardPodAffinityWeight": weight})


# -- NormalizeScore and args ----------------------------------------------------------------
def test_normalize_score_truncates_float64_and_handles_negatives() -> None:
    """Upstream: int64(100 * (float64(s - min) / float64(max - min)))."""
    plugin = InterPodAffinity(None, handle_for([], []))
    cs = CycleState()
    cs.write(PRE_SCORE_STATE_KEY, PreScoreState({"region": {"a": 1}}))
    scores = np.array([-5, 0, 3, -2], dtype=np.int64)
    assert plugin.normalize_score(cs, pod(), ["a", "b", "c", "d"], scores).success
    assert scores.tolist() == [0, 62, 100, 37]


def test_normalize_score_without_pre_score_state_is_an_error() -> None:
    plugin = InterPodAffinity(None, handle_for([], []))
    st = plugin.normalize_score(CycleState(), pod(), ["a"], np.zeros(1, np.int64))
    assert st.code == Code.Error
    assert st.reasons == ('failed to read "PreScoreInterPodAffinity" from cycleState: not found',)


@pytest.mark.parametrize("raw,want", [
    (None, InterPodAffinityArgs()),
    ({}, InterPodAffinityArgs(hard_pod_affinity_weight=1)),
    ({"hardPodAffinityWeight": 0}, InterPodAffinityArgs(hard_pod_affinity_weight=0)),
    ({"hardPodAffinityWeight": 100, "ignorePreferredTermsOfExistingPods": True},
     InterPodAffinityArgs(hard_pod_affinity_weight=100, ignore_preferred_terms_of_existing_pods=True)),
], ids=["none", "empty", "zero", "max-and-ignore"])
def test_parse_args_defaults(raw: Any, want: InterPodAffinityArgs) -> None:
    assert InterPodAffinity.parse_args(raw, "args") == want


@pytest.mark.parametrize("weight", [-1, 101])
def test_parse_args_rejects_weight_out_of_range(weight: int) -> None:
    with pytest.raises(ProfileError) as exc:
        InterPodAffinity.parse_args({"hardPodAffinityWeight": weight}, "args")
    assert exc.value.field == "args.hardPodAffinityWeight"
    assert exc.value.message == f"Invalid value: {weight}: not in valid range [0, 100]"
