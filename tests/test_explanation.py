"""What an explained attempt says about nodes upstream never looked at, about scoring it
skipped, and about preemption: upstream ``schedule_one.go`` (``findNodesThatPassFilters``,
``numFeasibleNodesToFind``, ``evaluateNominatedNode``, the single-feasible-node shortcut of
``schedulePod``) and ``framework/preemption/preemption.go`` (``pickOneNodeForPreemption``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.api.decode import load_manifests
from kubesched.config import load_config
from kubesched.explanation.attempt import (
    CRITERIA, NOT_EVALUATED, ONLY_CANDIDATE, SKIP_NOMINATED, SKIP_SINGLE, TIE_NAME, TIE_RANDOM, decide_preemption,
)
from kubesched.plugins.preemption.ordering import Candidate, StartTimes
from kubesched.sim.driver import PodOutcome, Simulation
from kubesched.testing.wrappers import make_node, make_pod

CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def simulate(tmp_path: Path, objects: list[dict[str, Any]], config: dict[str, Any] | None = None,
             ) -> dict[str, PodOutcome]:
    (tmp_path / "m.yaml").write_text(yaml.safe_dump_all(objects))
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({**CONFIG, **(config or {})}))
    sim = Simulation(load_manifests([str(tmp_path / "m.yaml")]), load_config(str(tmp_path / "c.yaml")),
                     tie_break="name", explain=True)
    sim.run(single_pass=True)
    return {o.pod.name: o for o in sim.results()}


def nodes(n: int, cpu: str = "4", small_every: int = 0) -> list[dict[str, Any]]:
    """``n`` nodes; with ``small_every`` k, every k-th node (0, k, 2k, ...) has 100m cpu only."""
    return [make_node().name(f"n{i:03d}").capacity(
        cpu="100m" if small_every and i % small_every == 0 else cpu, memory="8Gi", pods="110").raw()
        for i in range(n)]


def prio(value: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": f"p{value}"},
            "value": value}


def verdicts(att: dict[str, Any]) -> dict[str, int]:
    out = {"ok": 0, NOT_EVALUATED: 0, "rejected": 0}
    for v in att["filter"].values():
        out["rejected" if isinstance(v, dict) else v] += 1
    return out


def test_sampling_stops_at_num_feasible_nodes_to_find(tmp_path: Path) -> None:
    # 400 nodes, percentageOfNodesToScore 50: numFeasibleNodesToFind = max(400*50/100, 100) = 200.
    # Every 4th node is too small (100 infeasible, 300 feasible): the search stops at the 200th
    # feasible node; the nodes after it were never visited, whether they would fit or not.
    out = simulate(tmp_path, [*nodes(400, small_every=4), make_pod().name("p").req(cpu="1").raw()],
                   {"percentageOfNodesToScore": 50})
    att = out["p"].attempts[0].to_json()
    v = verdicts(att)
    ev = att["evaluation"]
    assert v["ok"] == 200  # exactly numFeasibleNodesToFind feasible nodes were found
    assert v[NOT_EVALUATED] == ev["notEvaluated"] == 400 - ev["evaluated"] > 0
    assert v["ok"] + v["rejected"] == ev["evaluated"]
    # visiting 200 feasible nodes passes at least 66 of the small ones (one per 3 feasible), and
    # the small nodes not yet reached stay unjudged: 100 small nodes in all
    assert 66 <= v["rejected"] < 100
    assert "percentageOfNodesToScore" in ev["reason"] and "200 feasible" in ev["reason"]
    assert set(att["totals"]) == {n for n, x in att["filter"].items() if x == "ok"}  # only evaluated nodes scored


def test_sampling_all_feasible_half_not_evaluated(tmp_path: Path) -> None:
    # 200 nodes all feasible at 50%: 200*50/100 = 100 found, the other 100 never visited
    out = simulate(tmp_path, [*nodes(200), make_pod().name("p").req(cpu="1").raw()],
                   {"percentageOfNodesToScore": 50})
    att = out["p"].attempts[0].to_json()
    assert verdicts(att) == {"ok": 100, NOT_EVALUATED: 100, "rejected": 0}
    assert att["evaluation"]["evaluated"] == 100 and len(att["totals"]) == 100


def test_profile_without_score_plugins_stops_at_first_feasible(tmp_path: Path) -> None:
    # no Score plugin: numFeasibleNodesToFind is 1; 10 nodes, the first visited fits
    config = {"profiles": [{"schedulerName": "default-scheduler",
                            "plugins": {"score": {"disabled": [{"name": "*"}]}}}]}
    out = simulate(tmp_path, [*nodes(10), make_pod().name("p").req(cpu="1").raw()], config)
    att = out["p"].attempts[0].to_json()
    assert verdicts(att) == {"ok": 1, NOT_EVALUATED: 9, "rejected": 0}
    assert "no Score plugins" in att["evaluation"]["reason"]
    assert att["chosen"] == next(n for n, x in att["filter"].items() if x == "ok")


def test_full_evaluation_has_no_reason(tmp_path: Path) -> None:
    out = simulate(tmp_path, [*nodes(5, small_every=2), make_pod().name("p").req(cpu="1").raw()])
    att = out["p"].attempts[0].to_json()
    assert verdicts(att) == {"ok": 2, NOT_EVALUATED: 0, "rejected": 3}  # n000, n002, n004 are small
    assert att["evaluation"] == {"nodes": 5, "evaluated": 5, "notEvaluated": 0, "reason": None}
    assert "scoreSkipped" not in att
    # raw, normalised and weighted per plugin: weighted = normalised x weight, totals their sum
    for node, weighted in att["scores"].items():
        for plugin, w in weighted.items():
            assert w == att["normalizedScores"][node][plugin] * att["weights"][plugin]
        assert sum(weighted.values()) == att["totals"][node]
    assert att["weights"]["TaintToleration"] == 3 and att["weights"]["NodeResourcesFit"] == 1


def test_single_feasible_node_says_scoring_skipped(tmp_path: Path) -> None:
    out = simulate(tmp_path, [*nodes(3, small_every=2)[:2], make_pod().name("p").req(cpu="1").raw()])
    att = out["p"].attempts[0].to_json()
    assert att["chosen"] == "n001" and att["scoreSkipped"] == SKIP_SINGLE and att["upstreamSkipsScoring"]


def test_nominated_fast_path_is_marked(tmp_path: Path) -> None:
    # two full nodes (1 cpu each, a priority-0 pod on each); the priority-100 preemptor nominates
    # n000 (equal candidates, --tie-break name), then its second attempt takes the fast path
    objs = [*nodes(2, cpu="1"), prio(100),
            make_pod().name("v0").node("n000").req(cpu="1").raw(),
            make_pod().name("v1").node("n001").req(cpu="1").raw(),
            make_pod().name("hi").set("spec.priorityClassName", "p100").req(cpu="1").raw()]
    out = simulate(tmp_path, objs)
    first, second = (a.to_json() for a in out["hi"].attempts[:2])
    pre = first["preemption"]
    assert pre["chosen"] == "n000" and pre["decidedBy"] == TIE_NAME
    assert {c["node"]: c["victims"] for c in pre["candidates"]} == {"n000": ["default/v0"], "n001": ["default/v1"]}
    ev = second["evaluation"]
    assert ev["upstreamEvaluatedOnly"] == "n000" and "nominated node fast path" in ev["reason"]
    assert second["scoreSkipped"] == SKIP_NOMINATED and second["chosen"] == "n000"
    assert second["filter"]["n001"]["plugin"] == "NodeResourcesFit"  # still full: computed, marked


def candidate(node: str, victims: list[tuple[int, str]], pdb: int = 0) -> Candidate:
    pods = tuple(make_pod().name(f"{node}-v{i}").priority(p).start_time(t).obj()
                 for i, (p, t) in enumerate(victims))
    return Candidate(node, pods, pdb)


T0, T1 = "2020-01-01T00:00:00Z", "2021-01-01T00:00:00Z"
MAX32 = 2**31 - 1


@pytest.mark.parametrize(("cands", "winner", "criterion"), [
    pytest.param([candidate("a", [(5, T0)], pdb=1), candidate("b", [(9, T0)], pdb=0)], "b", CRITERIA[0],
                 id="fewest-pdb-violations"),
    pytest.param([candidate("a", [(10, T0)]), candidate("b", [(5, T0), (5, T0)])], "b", CRITERIA[1],
                 id="lowest-highest-priority"),
    # top priority 5 on both; sums (shifted by 2^31 per victim) 5+3 > 5+1
    pytest.param([candidate("a", [(5, T0), (3, T0)]), candidate("b", [(5, T0), (1, T0)])], "b", CRITERIA[2],
                 id="smallest-priority-sum"),
    # equal shifted sums: (2^31-1 + 2^31) + (2^31-2 + 2^31) == (2^31-1 + 2^31) + 2 * (-1 + 2^31);
    # a has 2 victims, b has 3
    pytest.param([candidate("a", [(MAX32, T0), (MAX32 - 1, T0)]),
                  candidate("b", [(MAX32, T0), (-1, T0), (-1, T0)])], "a", CRITERIA[3], id="fewest-victims"),
    # everything equal but the start of the highest-priority victim: the later one wins
    pytest.param([candidate("a", [(7, T0)]), candidate("b", [(7, T1)])], "b", CRITERIA[4],
                 id="latest-start-time"),
    pytest.param([candidate("a", [(7, T0)])], "a", ONLY_CANDIDATE, id="only-candidate"),
])
def test_deciding_criterion(cands: list[Candidate], winner: str, criterion: str) -> None:
    decided, rows = decide_preemption(cands, StartTimes(), by_name=True)
    assert decided == criterion
    assert [r["node"] for r in rows] == [c.name for c in cands]
    from kubesched.plugins.preemption.ordering import pick_tie_set
    assert pick_tie_set(cands, StartTimes()) == [winner]


def test_tie_on_every_criterion() -> None:
    cands = [candidate("a", [(7, T0)]), candidate("b", [(7, T0)])]
    assert decide_preemption(cands, StartTimes(), by_name=True)[0] == TIE_NAME
    assert decide_preemption(cands, StartTimes(), by_name=False)[0] == TIE_RANDOM


def test_preemption_explained_in_simulation(tmp_path: Path) -> None:
    # n000's victim has priority 10, n001's priority 5: lowest highest-priority victim decides
    objs = [*nodes(2, cpu="1"), prio(100), prio(10), prio(5),
            make_pod().name("v0").node("n000").set("spec.priorityClassName", "p10").req(cpu="1").raw(),
            make_pod().name("v1").node("n001").set("spec.priorityClassName", "p5").req(cpu="1").raw(),
            make_pod().name("hi").set("spec.priorityClassName", "p100").req(cpu="1").raw()]
    att = simulate(tmp_path, objs)["hi"].attempts[0].to_json()
    assert att["nominatedNode"] == "n001"
    pre = att["preemption"]
    assert pre["chosen"] == "n001" and pre["decidedBy"] == CRITERIA[1]
    rows = {c["node"]: c for c in pre["candidates"]}
    assert rows["n000"]["highestVictimPriority"] == 10 and rows["n001"]["highestVictimPriority"] == 5
    assert rows["n001"]["victims"] == ["default/v1"] and rows["n001"]["pdbViolations"] == 0


def test_an_attempts_scores_stay_as_computed_after_later_binds(tmp_path: Path) -> None:
    """Explain keeps score arrays and builds the per-node maps when read: an earlier attempt
    still shows the scores of its own cycle (the aliasing of a plugin's cached array that broke
    this was caught by tests/fidelity_workloads; this small case shows the expected reading). By hand, upstream ``least_allocated.go`` on nodes of 4 cpu / 8Gi for 1 cpu / 1Gi
    pods: an empty node scores cpu (4-1)/4*100 = 75, memory (8-1)/8*100 = 87 (int of 87.5),
    (75 + 87) / 2 = 81; a node with one such pod scores cpu 50, memory 75, (50 + 75) / 2 = 62.
    Pod a goes to n000 (all tie, by name); pod b sees n000 at 62 and the others at 81."""
    pod = {"cpu": "1", "memory": "1Gi"}
    out = simulate(tmp_path, [*nodes(3), make_pod().name("a").req(**pod).raw(),
                              make_pod().name("b").req(**pod).raw()])
    first, second = (out[n].attempts[0].to_json() for n in ("a", "b"))
    assert {n: s["NodeResourcesFit"] for n, s in first["scores"].items()} == {"n000": 81, "n001": 81, "n002": 81}
    assert {n: s["NodeResourcesFit"] for n, s in second["scores"].items()} == {"n000": 62, "n001": 81, "n002": 81}
