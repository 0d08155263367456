"""A custom plugin that raises, returns ``None`` or returns something else, at every
extension point, through the real ``kubesched simulate`` (in-process): never a traceback,
the run goes on, and the pod's result is what upstream's framework makes of a plugin error.

Expected messages are upstream's wrapping in pkg/scheduler/framework/runtime/framework.go
(v1.34): RunPreFilterPlugins ``running PreFilter plugin %q: %w``, RunFilterPlugins
``running %q filter plugin: %w``, RunPreScorePlugins ``running PreScore plugin %q: %w``,
RunScorePlugins ``running Score plugins: plugin %q failed with: %w`` and ``running
Normalize on Score plugins: plugin %q failed with: %w`` and ``applying score
defaultWeights on Score plugins: plugin %q returns an invalid score %v, it should in the
range of [%v, %v] after normalizing``, RunReservePluginsReserve ``running Reserve plugin
%q: %w``, RunPermitPlugins ``running Permit plugin %q: %w``, RunPreBindPlugins ``running
PreBind plugin %q: %w``, RunBindPlugins ``running Bind plugin %q: %w``; RunPostFilterPlugins
passes an error on unwrapped (a raised exception, which Go cannot have, is worded
``running PostFilter plugin %q: ...`` here); a nil Status is Success everywhere. ``%w``, the
plugin's error, is ``<ExceptionType>: <message>`` for an exception and kubesched's own
sentence for a wrong return value (see kubesched/framework/runtime/results.py). A PostFilter
message is appended to the FitError (framework/types.go FitError.Error()).
"""

from __future__ import annotations

import json
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from kubesched.cli.main import main

MODULE = "kubesched_test_misbehaving"
PLUGIN = f"{MODULE}:Misbehaving"

PLUGIN_SOURCE = textwrap.dedent('''\
    """A plugin that misbehaves at one extension point (args: point, mode)."""
    import numpy as np

    from kubesched.framework.status import Code, Status

    GOOD = {"pre_enqueue": None, "pre_filter": (None, Status()), "filter": Status(),
            "post_filter": (None, Status(Code.Unschedulable, ("no help",))), "pre_score": Status(),
            "score": 0, "normalize_score": None, "reserve": Status(), "permit": (Status(), 0),
            "pre_bind": Status(), "bind": Status(Code.Skip)}


    class Misbehaving:
        name = "Misbehaving"

        def __init__(self, args, handle):
            self.point, self.mode, self.handle = args["point"], args["mode"], handle

        def _run(self, point, *call):
            if point != self.point:
                return GOOD[point]
            if self.mode == "raise":
                raise ValueError("boom")
            if self.mode == "none":
                if point == "bind":  # a Go Bind plugin that binds returns nil
                    self.handle.sink.bind(call[1], call[2])
                return None
            if self.mode == "junk":
                return "junk"
            return self.mode  # a value the case gives (a score, a Status)

        def pre_enqueue(self, pod):
            return self._run("pre_enqueue")

        def pre_filter(self, state, pod, nodes):
            return self._run("pre_filter")

        def filter(self, state, pod, node_info):
            return self._run("filter")

        def post_filter(self, state, pod, filtered):
            return self._run("post_filter")

        def pre_score(self, state, pod, nodes):
            return self._run("pre_score")

        def score(self, state, pod, node_info):
            s = self._run("score")
            return 101 if s == "out-of-range" else s

        def normalize_score(self, state, pod, names, scores):
            return self._run("normalize_score")

        def reserve(self, state, pod, node):
            if self.point == "unreserve":
                return Status(Code.Unschedulable, ("no room",))
            return self._run("reserve")

        def unreserve(self, state, pod, node):
            if self.point == "unreserve":
                raise ValueError("boom")

        def permit(self, state, pod, node):
            return self._run("permit")

        def pre_bind(self, state, pod, node):
            return self._run("pre_bind")

        def bind(self, state, pod, node):
            return self._run("bind", state, pod, node)

        def post_bind(self, state, pod, node):
            if self.point == "post_bind":
                raise ValueError("boom")
            return "junk"  # ignored


    class BatchMisbehaving:
        """Only the batch forms (filter_nodes, score_nodes)."""
        name = "BatchMisbehaving"

        def __init__(self, args, handle):
            self.point, self.mode = args["point"], args["mode"]

        def filter_nodes(self, state, pod, table, idx):
            return self._rows("filter_nodes", idx, True)

        def filter(self, state, pod, node_info):
            return Status()

        def score_nodes(self, state, pod, table, idx):
            return self._rows("score_nodes", idx, 0)

        def score(self, state, pod, node_info):
            return 0

        def _rows(self, point, idx, good):
            if point != self.point:
                return np.full(idx.size, good)
            if self.mode == "raise":
                raise ValueError("boom")
            if self.mode == "short":
                return np.full(idx.size - 1, good)
            return None
''')

NODES = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "10"}}
"""


def pod(name: str, cpu: str) -> str:
    return f"""\
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  containers: [{{name: c, image: "registry.example/app:1", resources: {{requests: {{cpu: "{cpu}"}}}}}}]
"""


POINT_KEYS = {"pre_enqueue": "preEnqueue", "pre_filter": "preFilter", "filter": "filter",
              "post_filter": "postFilter", "pre_score": "preScore", "score": "score",
              "normalize_score": "score", "reserve": "reserve", "unreserve": "reserve", "permit": "permit",
              "pre_bind": "preBind", "bind": "bind", "post_bind": "postBind",
              "filter_nodes": "filter", "score_nodes": "score"}


def config(point: str, mode: str, plugin: str = PLUGIN) -> str:
    """The default profile with the plugin at ``point`` only (first at Bind, alone at
    PostFilter so that DefaultPreemption's message does not join in)."""
    key = POINT_KEYS[point]
    enabled = [{"name": plugin, "weight": 1} if key == "score" else {"name": plugin}]
    points = {key: {"enabled": enabled}}
    if key == "bind":
        points[key] = {"enabled": [{"name": plugin}, {"name": "DefaultBinder"}], "disabled": [{"name": "*"}]}
    if key == "postFilter":
        points[key]["disabled"] = [{"name": "*"}]
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler", "plugins": points,
                         "pluginConfig": [{"name": plugin, "args": {"point": point, "mode": mode}}]}]}
    return json.dumps(doc)


@dataclass(frozen=True)
class Case:
    point: str
    mode: str  # raise | none | junk | short (batch) | a value the plugin returns
    status: str  # the pod's result
    message: str  # the pod's message ("" for a scheduled pod)
    cpu: str = "1"  # "8": fits no node (PostFilter runs)
    plugin: str = PLUGIN


def err(point: str, mode: str, message: str, **kw: str) -> Case:
    return Case(point, mode, "Error", message, **kw)


def ok(point: str, mode: str = "none") -> Case:
    return Case(point, mode, "Scheduled", "")


NOT_STATUS = "returned 'junk' (str), not a Status or None"
BOOM = "ValueError: boom"
FIT = "0/2 nodes are available: 2 Insufficient cpu."
BATCH = PLUGIN.replace("Misbehaving", "BatchMisbehaving")

CASES = [
    ok("pre_filter"), ok("filter"), ok("pre_score"), ok("normalize_score"), ok("reserve"), ok("permit"),
    ok("pre_bind"), ok("bind"), ok("pre_enqueue"),
    ok("post_bind", "raise"), ok("post_bind", "junk"),  # PostBind is informational: its failure changes nothing
    err("pre_filter", "raise", f'running PreFilter plugin "Misbehaving": {BOOM}'),
    err("pre_filter", "junk", 'running PreFilter plugin "Misbehaving": pre_filter returned \'junk\' (str), '
                              "not (PreFilterResult | None, Status | None), a Status or None"),
    err("filter", "raise", f'running "Misbehaving" filter plugin: {BOOM}'),
    err("filter", "junk", f'running "Misbehaving" filter plugin: filter {NOT_STATUS}'),
    Case("post_filter", "raise", "Unschedulable", f'{FIT} running PostFilter plugin "Misbehaving": {BOOM}', cpu="8"),
    Case("post_filter", "junk", "Unschedulable",
         f"{FIT} running PostFilter plugin \"Misbehaving\": post_filter returned 'junk' (str), "
         "not (PostFilterResult | None, Status | None), a Status or None", cpu="8"),
    Case("post_filter", "none", "Unschedulable", FIT, cpu="8"),  # Success without a nomination
    err("pre_score", "raise", f'running PreScore plugin "Misbehaving": {BOOM}'),
    err("pre_score", "junk", f'running PreScore plugin "Misbehaving": pre_score {NOT_STATUS}'),
    err("score", "raise", f'running Score plugins: plugin "Misbehaving" failed with: {BOOM}'),
    err("score", "none", 'running Score plugins: plugin "Misbehaving" failed with: score returned None '
                         "(NoneType), not an int score"),
    err("score", "junk", 'running Score plugins: plugin "Misbehaving" failed with: score returned \'junk\' '
                         "(str), not an int score"),
    err("score", "out-of-range", 'applying score defaultWeights on Score plugins: plugin "Misbehaving" returns '
                                 "an invalid score 101, it should in the range of [0, 100] after normalizing"),
    err("normalize_score", "raise", f'running Normalize on Score plugins: plugin "Misbehaving" failed with: {BOOM}'),
    err("normalize_score", "junk",
        f'running Normalize on Score plugins: plugin "Misbehaving" failed with: normalize_score {NOT_STATUS}'),
    err("reserve", "raise", f'running Reserve plugin "Misbehaving": {BOOM}'),
    err("reserve", "junk", f'running Reserve plugin "Misbehaving": reserve {NOT_STATUS}'),
    # Reserve rejects, then Unreserve raises: the rejection stands (upstream: a FitError over the node)
    Case("unreserve", "raise", "Unschedulable", "0/1 nodes are available: 1 no room."),
    err("permit", "raise", f'running Permit plugin "Misbehaving": {BOOM}'),
    err("permit", "junk", 'running Permit plugin "Misbehaving": permit returned \'junk\' (str), '
                          "not (Status | None, timeout seconds), a Status or None"),
    err("pre_bind", "raise", f'running PreBind plugin "Misbehaving": {BOOM}'),
    err("pre_bind", "junk", f'running PreBind plugin "Misbehaving": pre_bind {NOT_STATUS}'),
    err("bind", "raise", f'running Bind plugin "Misbehaving": {BOOM}'),
    err("bind", "junk", f'running Bind plugin "Misbehaving": bind {NOT_STATUS}'),
    err("filter_nodes", "raise", f'running "BatchMisbehaving" filter plugin: {BOOM}', plugin=BATCH),
    err("filter_nodes", "none", 'running "BatchMisbehaving" filter plugin: filter_nodes returned None (NoneType), '
                                "not a boolean array of 2 rows", plugin=BATCH),
    err("filter_nodes", "short", 'running "BatchMisbehaving" filter plugin: filter_nodes returned array([ True]) '
                                 "(ndarray), not a boolean array of 2 rows", plugin=BATCH),
    err("score_nodes", "raise", f'running Score plugins: plugin "BatchMisbehaving" failed with: {BOOM}', plugin=BATCH),
    err("score_nodes", "short", 'running Score plugins: plugin "BatchMisbehaving" failed with: score_nodes returned '
                                "array([0]) (ndarray), not an integer array of 2 rows", plugin=BATCH),
]


@pytest.fixture
def plugin_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / f"{MODULE}.py").write_text(PLUGIN_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    return tmp_path


def simulate(tmp_path: Path, case: Case, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, dict[str, str]]]:
    (tmp_path / "cluster.yaml").write_text(NODES + pod("p1", case.cpu) + pod("p2", case.cpu))
    (tmp_path / "config.yaml").write_text(config(case.point, case.mode, case.plugin))
    code = main(["simulate", "-f", str(tmp_path / "cluster.yaml"), "--config", str(tmp_path / "config.yaml"),
                 "-o", "json"])
    out, errors = capsys.readouterr()
    assert "Traceback" not in out + errors
    pods = {p["name"]: p for p in json.loads(out)["pods"]} if code == 0 else {}
    return code, pods


@pytest.mark.parametrize("case", CASES, ids=[f"{c.point}-{c.mode}" for c in CASES])
def test_misbehaving_plugin(case: Case, plugin_module: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, pods = simulate(plugin_module, case, capsys)
    assert code == 0
    # both pods are tried and reported: one pod's failure does not stop the run
    assert sorted(pods) == ["p1", "p2"]
    for p in pods.values():
        assert (p["status"], p.get("message") or "") == (case.status, case.message)
        if case.status == "Scheduled":
            assert p["node"] in ("n1", "n2")


def test_pre_enqueue_failure_gates_the_pod(plugin_module: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Upstream runPreEnqueuePlugins: a PreEnqueue error keeps the pod out of activeQ (logged),
    as a rejection would; the run goes on."""
    for mode in ("raise", "junk"):
        code, pods = simulate(plugin_module, Case("pre_enqueue", mode, "", ""), capsys)
        assert code == 0
        assert {p["status"] for p in pods.values()} == {"Gated"}, pods


def test_events_to_register_failure_is_a_profile_error(plugin_module: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Upstream NewFramework fails when a plugin's EventsToRegister returns an error: one
    line naming the plugin, exit 2."""
    with (plugin_module / f"{MODULE}.py").open("a") as fh:
        fh.write("\n\ndef _events(self):\n    raise RuntimeError('no events')\n\n"
                 "Misbehaving.events_to_register = _events\n")
    (plugin_module / "cluster.yaml").write_text(NODES + pod("p1", "1"))
    (plugin_module / "config.yaml").write_text(config("filter", "none"))
    code = main(["simulate", "-f", str(plugin_module / "cluster.yaml"), "--config",
                 str(plugin_module / "config.yaml")])
    _, errors = capsys.readouterr()
    assert code == 2
    assert "Traceback" not in errors
    assert "plugin 'Misbehaving': events_to_register failed: RuntimeError: no events" in errors
