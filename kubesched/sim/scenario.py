"""``kubesched bench --scenario FILE``: bench any manifest through the real scheduler loop.

The built-in workloads are scheduler_perf templates; a scenario is an ordinary manifest
(what ``kubesched simulate`` reads), so any cluster shape can be measured:

* Nodes, pods bound already (``spec.nodeName``) and every other object (PriorityClasses,
  Services, storage, DRA objects, ...) are loaded before anything is timed;
* pending pods annotated ``bench.kubesched.io/phase: init`` are then created and
  scheduled, not measured;
* the other pending pods are created at once, in file order, and measured.

The metrics are those of :mod:`kubesched.sim.bench` (same JSON keys). The "mixed"
workload is a scenario made by :mod:`kubesched.sim.mixed` into a temporary file, so it
goes through the same decoding as a user's file.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import tempfile
import time
from collections.abc import Callable

from kubesched.api.decode import load_manifests
from kubesched.api.errors import KubeschedError
from kubesched.config import load_config
from kubesched.config.types import API_VERSION, KIND
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.bench import Bench, BenchResult, BenchSpec, Progress, _AlgorithmTimer, settle
from kubesched.sim.driver import TERMINAL_PHASES, Simulation
from kubesched.sim.mixed import PHASE_ANNOTATION, mixed_objects
from kubesched.sim.workloads import MIXED

INIT = "init"


class ScenarioBench(Bench):
    """A manifest, loaded and wired; :meth:`run` schedules its pending pods and measures."""

    def __init__(self, spec: BenchSpec, path: str, timer: Callable[[], float] = time.perf_counter) -> None:
        manifest = load_manifests([path])
        if not manifest.nodes:
            raise KubeschedError(f"bench --scenario {path}: the manifest has no Node")
        pending = [p for p in manifest.pods if not p.node_name and p.phase not in TERMINAL_PHASES]
        for p in pending:
            phase = p.annotations.get(PHASE_ANNOTATION)
            if phase not in (None, INIT):
                raise KubeschedError(
                    f"bench --scenario {path}: pod {p.namespace}/{p.name}: metadata.annotations"
                    f"[{PHASE_ANNOTATION}] is {phase!r}; the only phase is {INIT!r} (absent: measured)")
        self.init = [p for p in pending if p.annotations.get(PHASE_ANNOTATION) == INIT]
        self.measured = [p for p in pending if p.annotations.get(PHASE_ANNOTATION) != INIT]
        pending_uids = {p.uid for p in pending}
        placed = [p for p in manifest.pods if p.uid not in pending_uids]
        self.spec = dataclasses.replace(spec, nodes=len(manifest.nodes), init_pods=len(self.init),
                                        pods=len(self.measured))
        self.timer = timer
        self.claims = True  # pods naming claim templates get their claims, as the controller would
        config = load_config({"apiVersion": API_VERSION, "kind": KIND,
                              "percentageOfNodesToScore": spec.percentage_of_nodes_to_score},
                             in_tree_registry())
        self.sim = Simulation(dataclasses.replace(manifest, pods=placed), config, seed=spec.seed, explain=False,
                              features=spec.features())
        self.algo = _AlgorithmTimer(self.sim.sched, timer)
        self._measured: set[str] = set()
        self._bound = 0
        self.bind_times: list[float] = []
        self.sim.cluster.listeners.append(self._on_change)

    def run(self, progress: Progress | None = None) -> BenchResult:
        if self.init:
            self._create(self.init)
            self._drain(INIT, len(self.init), progress)
        settle()
        pods = self.measured  # in file order, as the loader keeps them
        self._measured.update(p.uid for p in pods)
        samples_before = len(self.algo.samples)
        start = self.timer()
        self._create(pods)
        self._drain("measure", len(pods), progress)
        end = self.bind_times[-1] if self.bind_times else self.timer()
        gc.unfreeze()
        return self.result(start, end, samples_before)


def write_mixed(path: str, nodes: int, init_pods: int, pods: int, seed: int = 0) -> None:
    """Write the mixed workload as a JSON ``List`` manifest (one object a line)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"apiVersion": "v1", "kind": "List", "items": [\n')
        for i, obj in enumerate(mixed_objects(nodes, init_pods, pods, seed)):
            f.write((",\n" if i else "") + json.dumps(obj, separators=(",", ":")))
        f.write("\n]}\n")


def run_scenario(spec: BenchSpec, progress: Progress | None = None) -> BenchResult:
    """``spec.scenario``, or the mixed workload at ``spec``'s sizes, benched."""
    if spec.scenario:
        return ScenarioBench(spec, spec.scenario).run(progress)
    fd, path = tempfile.mkstemp(prefix="kubesched-mixed-", suffix=".json")
    os.close(fd)
    try:
        write_mixed(path, spec.nodes, spec.init_pods, spec.pods, spec.seed)
        bench = ScenarioBench(spec, path)
    finally:
        os.unlink(path)
    return bench.run(progress)


def run_bench(spec: BenchSpec, progress: Progress | None = None) -> BenchResult:
    """Run the benchmark ``spec`` describes: a scenario or the mixed workload, else a generated one."""
    if spec.scenario or spec.workload == MIXED:
        return run_scenario(spec, progress)
    return Bench(spec).run(progress)
