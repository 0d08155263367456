"""``kubesched replay``: a small trace on a full cluster, the per-pod latencies computed by hand.

The queue semantics the hand computation relies on are upstream's
(``pkg/scheduler/backend/queue/scheduling_queue.go``): a pod that fails waits in the
unschedulable pool; a bound pod's deletion (AssignedPodDelete) moves pods NodeResourcesFit
rejected back to the active queue (to backoffQ while still backing off, which with
SchedulerPopFromBackoffQ is popped when activeQ is empty); activeQ orders equal priorities
by the time the pod entered the queue (PrioritySort, ``queuesort/priority_sort.go``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesched.api.decode import load_manifests
from kubesched.api.errors import DecodeError
from kubesched.config import load_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.capacity.common import RunOptions
from kubesched.sim.replay.engine import ReplayResult, replay
from kubesched.sim.replay.trace import load_trace

CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "2", memory: 8Gi, pods: "110"}}
"""

TRACE = [
    {"time": 0, "name": "a", "cpu": "2", "memory": "1Gi", "duration": 10},
    {"time": 1, "name": "b", "cpu": "2", "memory": "1Gi", "duration": 5},
    {"time": 3, "name": "c", "cpu": "1", "memory": "1Gi", "duration": 1},
    {"time": 4, "name": "d", "cpu": "2", "memory": "1Gi", "deleteAt": 12},
]
CSV = """\
time,name,cpu,memory,duration,delete_at
0,a,2,1Gi,10,
1,b,2,1Gi,5,
3,c,1,1Gi,1,
4,d,2,1Gi,,12
"""


def opts(seed: int = 0) -> RunOptions:
    return RunOptions(config=load_config(None, in_tree_registry()), seed=seed)


def run(tmp_path: Path, trace_name: str, trace_text: str, cluster: str = CLUSTER) -> ReplayResult:
    (tmp_path / "cluster.yaml").write_text(cluster)
    (tmp_path / trace_name).write_text(trace_text)
    m = load_manifests([str(tmp_path / "cluster.yaml")])
    return replay(m, load_trace(str(tmp_path / trace_name), m), opts())


def jsonl(rows: list[dict[str, object]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


EXPECTED = {
    # a: the node (2 cpu) is free at 0 -> bound at 0, latency 0; runs 10 s, deleted at 10.
    "default/a": (0.0, 0.0, 10.0),
    # b: arrives at 1, the node is full -> pool. a's deletion at 10 moves b and c (and d);
    # b entered the queue first (1 < 3 < 4) -> bound at 10: latency 10 - 1 = 9; runs 5 s.
    "default/b": (1.0, 10.0, 15.0),
    # c: fails at 3 and again at 10 (b took the node); b's deletion at 15 moves it ->
    # bound at 15: latency 15 - 3 = 12; runs 1 s, deleted at 16.
    "default/c": (3.0, 15.0, 16.0),
    # d: fails at 4 and at 10; deleted by the trace at 12 while still pending: never bound.
    "default/d": (4.0, None, 12.0),
}


@pytest.mark.parametrize(("name", "text"), [("trace.jsonl", jsonl(TRACE)), ("trace.csv", CSV)],
                         ids=["jsonl", "csv"])
def test_latencies_on_a_full_cluster(tmp_path: Path, name: str, text: str) -> None:
    r = run(tmp_path, name, text)
    got = {p.pod: (p.arrival, p.bind, p.deleted) for p in r.pods}
    assert got == EXPECTED
    assert {p.pod: p.latency for p in r.pods} == {"default/a": 0.0, "default/b": 9.0, "default/c": 12.0,
                                                   "default/d": None}
    s = r.summary()
    assert (s["scheduled"], s["neverScheduled"], s["deletedPending"], s["preempted"]) == (3, 1, 1, 0)
    assert s["latencyMax"] == 12.0
    assert s["latencyMean"] == pytest.approx((0 + 9 + 12) / 3)
    assert s["virtualSeconds"] == 16.0


def test_series(tmp_path: Path) -> None:
    """One sample per time something happened, after the queue settled:
    pending = arrived, not bound, not deleted; cpu = requested / 2 cpu;
    fragmentation: the median pod (lower median of 2, 2, 1, 2 cpu and 1Gi) needs 2 cpu, so
    any free cpu on the only node (less than 2) is stranded."""
    r = run(tmp_path, "trace.jsonl", jsonl(TRACE))
    got = [(s["time"], s["pending"], s["running"], s["cpu"], s["fragmentation"]) for s in r.series]
    assert got == [
        (0.0, 0, 1, 1.0, 0.0),   # a runs
        (1.0, 1, 1, 1.0, 0.0),   # b waits
        (3.0, 2, 1, 1.0, 0.0),   # c waits
        (4.0, 3, 1, 1.0, 0.0),   # d waits
        (10.0, 2, 1, 1.0, 0.0),  # a gone, b runs; c, d wait
        (12.0, 1, 1, 1.0, 0.0),  # d deleted
        (15.0, 0, 1, 0.5, 1.0),  # b gone, c runs: 1 cpu free, < 2: stranded
        (16.0, 0, 0, 0.0, 0.0),  # empty
    ]
    assert r.series[0]["memory"] == pytest.approx(1 / 8)


def test_pending_pods_of_the_cluster_arrive_at_zero(tmp_path: Path) -> None:
    """A pending pod of the manifest (1 cpu, never finishes) arrives at 0 and is bound
    first; the trace's `late` (2 cpu) then waits forever: the node keeps 1 cpu free."""
    cluster = CLUSTER + """---
apiVersion: v1
kind: Pod
metadata: {name: early}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}
"""
    r = run(tmp_path, "t.jsonl", jsonl([{"time": 0, "name": "late", "cpu": "2"}]), cluster)
    assert {p.pod: p.bind for p in r.pods} == {"default/early": 0.0, "default/late": None}


def test_template_and_priority(tmp_path: Path) -> None:
    """A template file relative to the trace; priority from the trace: the higher-priority
    pod arriving at the same time is scheduled first (PrioritySort), the other waits."""
    (tmp_path / "web.yaml").write_text("""\
apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]}
""")
    r = run(tmp_path, "t.jsonl", jsonl([
        {"time": 5, "name": "low", "template": "web.yaml", "priority": 1},
        {"time": 5, "name": "high", "template": "web.yaml", "priority": 100, "duration": 7},
    ]))
    assert {p.pod: p.bind for p in r.pods} == {"default/high": 5.0, "default/low": 12.0}


def test_same_seed_same_run(tmp_path: Path) -> None:
    trace = jsonl([{"time": i / 4, "cpu": "500m", "duration": 3 + i % 5} for i in range(40)])
    cluster = "".join(CLUSTER.replace("n1", f"n{i}") + "---\n" for i in range(1, 4))
    first = run(tmp_path, "t.jsonl", trace, cluster)
    again = run(tmp_path, "t.jsonl", trace, cluster)
    assert [p.to_json() for p in first.pods] == [p.to_json() for p in again.pods]
    assert first.series == again.series


@pytest.mark.parametrize(("name", "text", "message"), [
    ("t.jsonl", '{"time": 0}\n{"time": 1, "cpu": "two"}\n',
     "t.jsonl: line 2: cpu: quantities must match the regular expression"),
    ("t.jsonl", '{"name": "x"}\n', "t.jsonl: line 1: time: is required"),
    ("t.jsonl", '{"time": -1}\n', "t.jsonl: line 1: time: must be a non-negative number of seconds, got -1"),
    ("t.jsonl", '{"time": 0, "duration": "soon"}\n',
     "t.jsonl: line 1: duration: must be a number of seconds, got 'soon'"),
    ("t.jsonl", '{"time": 0}\n{"time": 1\n', "t.jsonl: line 2: invalid JSON"),
    ("t.jsonl", '{"time": 0, "colour": 1}\n', "t.jsonl: line 1: colour: unknown field"),
    ("t.jsonl", '{"time": 0, "name": "a"}\n{"time": 1, "name": "a"}\n',
     't.jsonl: line 2: name: Duplicate value: "default/a": first in line 1'),
    ("t.jsonl", '{"time": 5, "deleteAt": 2}\n', "t.jsonl: line 1: deleteAt: 2 is before the arrival time 5"),
    ("t.jsonl", '{"time": 0, "template": "missing.yaml"}\n', "t.jsonl: line 1: template: "),
    ("t.csv", "time,labels\n0,app\n", "t.csv: line 2: labels: expected k=v;k2=v2, got 'app'"),
    ("t.csv", "time,cpu\n0,1,2\n", "t.csv: line 2: more values than header columns"),
    ("t.txt", "", "t.txt: unsupported trace type"),
], ids=["quantity", "no-time", "negative", "duration", "json", "unknown", "duplicate", "delete-before",
        "template", "csv-labels", "csv-columns", "suffix"])
def test_trace_errors_name_file_line_field(tmp_path: Path, name: str, text: str, message: str) -> None:
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / name).write_text(text)
    m = load_manifests([str(tmp_path / "cluster.yaml")])
    with pytest.raises(DecodeError) as e:
        load_trace(str(tmp_path / name), m)
    assert str(e.value).startswith(str(tmp_path) + "/" + message)


def test_preemption_deletes_the_victim(tmp_path: Path) -> None:
    """`low` (priority 0) holds the node's 2 cpu; `high` (priority 100, 2 cpu) arrives at 5,
    fails Filter and preempts `low` (DefaultPreemption); the victim's deletion moves `high`
    back to the queue and it binds at 5 on the nominated node: latency 0. The victim is
    gone (nothing recreates it in a replay) and counted as preempted."""
    r = run(tmp_path, "t.jsonl", jsonl([{"time": 0, "name": "low", "cpu": "2"},
                                       {"time": 5, "name": "high", "cpu": "2", "priority": 100}]))
    got = {p.pod: (p.bind, p.deleted, p.preempted) for p in r.pods}
    assert got == {"default/low": (0.0, 5.0, True), "default/high": (5.0, None, False)}
    assert r.summary()["preempted"] == 1


def test_inline_pod_and_namespaces(tmp_path: Path) -> None:
    """JSONL `pod`: the object itself (its namespace kept unless the line names one); a bad
    inline pod is an error naming the line and the field."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "namespace": "ml"},
           "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]}}
    r = run(tmp_path, "t.jsonl", jsonl([{"time": 0, "name": "a", "pod": pod},
                                       {"time": 0, "name": "b", "namespace": "batch", "pod": pod}]))
    assert {p.pod: p.bind for p in r.pods} == {"ml/a": 0.0, "batch/b": 0.0}
    with pytest.raises(DecodeError) as e:
        run(tmp_path, "t.jsonl", jsonl([{"time": 0, "pod": {"kind": "Pod", "spec": ["x"]}}]))
    assert str(e.value) == f"{tmp_path}/t.jsonl: line 1: pod.spec: must be an object"
    with pytest.raises(DecodeError) as e:
        run(tmp_path, "t.jsonl", jsonl([{"time": 0, "pod": {"kind": "Pod", "spec": {}}}]))
    assert str(e.value) == f"{tmp_path}/t.jsonl: line 1: pod.spec.containers: Required value"
