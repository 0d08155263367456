"""kube-scheduler-simulator's result annotations (keys and value shapes as KSS's
``simulator/scheduler/plugin/annotation/annotation.go`` and ``plugin/resultstore/store.go``
write them), and their size bound: a pod's annotations may total 256 KiB
(apimachinery ``TotalAnnotationSizeLimitB``), even on a 5,000-node cluster."""

from __future__ import annotations

import json
import pytest

from kubesched.api.decode import Manifest
from kubesched.config import load_config
from kubesched.explanation.attempt import Attempt
from kubesched.explanation.kssresults import (
    BIND, FILTER, FINALSCORE, HISTORY, PERMIT, POSTFILTER, PREFILTER_STATUS, PRESCORE, RESERVE, SCORE,
    SELECTED_NODE, SUMMARY_KEY, TOTAL_ANNOTATION_LIMIT, ProfilePlugins, result_annotations,
)
from kubesched.sim.driver import Simulation
from kubesched.testing.wrappers import make_node, make_pod

PLUGINS = ProfilePlugins(pre_filter=("NodeResourcesFit",), filter=("NodeUnschedulable", "TaintToleration",
                                                                    "NodeResourcesFit"),
                         post_filter=("DefaultPreemption",), pre_score=("TaintToleration",),
                         reserve=("VolumeBinding",), permit=(), pre_bind=("VolumeBinding",), bind=("DefaultBinder",))


def size(ann: dict[str, str]) -> int:
    return sum(len(k.encode()) + len(v.encode()) for k, v in ann.items())


def test_keys_and_value_shapes() -> None:
    att = Attempt(result="Scheduled", chosen="a")
    att.filter = {"a": "ok", "b": {"plugin": "TaintToleration", "code": "UnschedulableAndUnresolvable",
                                   "reasons": ["node(s) had untolerated taint {k: v}"]}}
    att.scores = {"a": {"TaintToleration": 300}}
    att.totals = {"a": 300}
    ann = result_annotations(att, PLUGINS)
    assert json.loads(ann[FILTER]) == {
        "a": {"NodeUnschedulable": "passed", "TaintToleration": "passed", "NodeResourcesFit": "passed"},
        "b": {"NodeUnschedulable": "passed", "TaintToleration": "node(s) had untolerated taint {k: v}"}}
    assert json.loads(ann[FINALSCORE]) == {"a": {"TaintToleration": "300"}}  # KSS writes scores as strings
    assert ann[SELECTED_NODE] == "a"
    assert json.loads(ann[PREFILTER_STATUS]) == {"NodeResourcesFit": "success"}
    assert json.loads(ann[PRESCORE]) == {"TaintToleration": "success"}
    assert json.loads(ann[RESERVE]) == {"VolumeBinding": "success"}
    assert json.loads(ann[BIND]) == {"DefaultBinder": "success"}
    assert json.loads(ann[PERMIT]) == {}
    assert json.loads(ann[POSTFILTER]) == {}
    history = json.loads(ann[HISTORY])
    assert len(history) == 1 and history[0][SELECTED_NODE] == "a" and HISTORY not in history[0]
    assert SUMMARY_KEY not in ann


def test_unschedulable_with_nomination() -> None:
    att = Attempt(result="Unschedulable", nominated_node="b", message="0/2 nodes are available: ...")
    att.filter = {n: {"plugin": "NodeResourcesFit", "code": "Unschedulable", "reasons": ["Insufficient cpu"]}
                  for n in ("a", "b")}
    att.unschedulable_plugins = {"NodeResourcesFit"}
    att.preemption = {"candidates": [{"node": "a"}, {"node": "b"}], "chosen": "b", "decidedBy": "fewest victims"}
    ann = result_annotations(att, PLUGINS)
    assert json.loads(ann[POSTFILTER]) == {"a": {}, "b": {"DefaultPreemption": "preemption victim"}}
    assert ann[SELECTED_NODE] == "" and json.loads(ann[RESERVE]) == {} and json.loads(ann[BIND]) == {}


@pytest.mark.slow
def test_bounded_on_5000_nodes() -> None:
    # a real attempt over 5,000 nodes: 2,500 too small (Insufficient cpu), 2,500 feasible and scored
    nodes = [make_node().name(f"node-{i:04d}").capacity(cpu="100m" if i % 2 else "8", memory="32Gi", pods="110")
             .label("topology.kubernetes.io/zone", f"z{i % 3}").obj() for i in range(5000)]
    manifest = Manifest(nodes=nodes, pods=[make_pod().name("p").req(cpu="1", memory="1Gi").obj()])
    sim = Simulation(manifest, load_config(None), tie_break="name", explain=True)
    sim.run(single_pass=True)
    att = sim.results()[0].attempts[0]
    assert len(att.filter) == 5000 and att.chosen
    plugins = ProfilePlugins.of(sim.sched.profiles["default-scheduler"].points)
    history: list[dict[str, str]] = []
    for _ in range(5):  # five results in a row: the history must not grow past the limit
        ann = result_annotations(att, plugins, history)
        history = json.loads(ann[HISTORY])
        assert size(ann) < TOTAL_ANNOTATION_LIMIT
    summary = json.loads(ann[SUMMARY_KEY])  # summarised, and says so
    assert summary["summarised"] is True and summary["nodes"] == 5000
    assert summary["rejectedByReason"] == {"NodeResourcesFit: Insufficient cpu": 2500}
    filt = json.loads(ann[FILTER])
    assert att.chosen in filt and len(filt) < 5000
    final = json.loads(ann[FINALSCORE])
    assert att.chosen in final and len(final) <= 21  # top 20 by total and the selected node
    best = max(att.totals.values())
    assert int(sum(int(v) for v in final[att.chosen].values())) == best
