"""``sweep``: every (trace, policy, seed) fill, in local processes or on Ray, resumable.

With an output directory each finished run is saved as ``runs/<trace>/<policy>/<seed>.json``
the moment it ends, and a sweep started again over the same directory runs only what is
missing. At the end the directory gets the artifact's result layouts (``allocation.csv``
as its ``analysis_allo_discrete.csv``, ``fragmentation.csv`` as
``analysis_frag_ratio_discrete.csv``, ``fragmentation_amount.csv`` as
``analysis_frag_discrete.csv``), ``summary.csv`` and ``report.html``
(:mod:`kubesched.experiment.results`).

Traces are read once by the caller and handed to the workers (a Ray cluster needs
kubesched installed on its nodes, not the trace files).
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubesched.api.errors import KubeschedError
from kubesched.experiment.engine import POLICIES, TIE_BREAKS
from kubesched.experiment.openb import TraceNode, TracePod, read_nodes, read_pods
from kubesched.experiment.runs import FillResult, fill_trace, workload_name

Progress = Callable[[int, int, FillResult], None]


@dataclass(frozen=True, slots=True)
class Job:
    workload: str
    policy: str
    seed: int

    def path(self, out: Path) -> Path:
        return out / "runs" / self.workload / POLICIES[self.policy] / f"{self.seed}.json"


@dataclass(frozen=True, slots=True)
class SweepResult:
    """The runs of a sweep (loaded ones included) and where they were written."""

    runs: list[FillResult]
    out: Path | None

    def allocation(self) -> Any:
        from kubesched.experiment import results

        return results.allocation_table(self.runs)

    def fragmentation(self) -> Any:
        from kubesched.experiment import results

        return results.frag_ratio_table(self.runs)

    def fragmentation_amount(self) -> Any:
        from kubesched.experiment import results

        return results.frag_amount_table(self.runs)

    def summary(self) -> Any:
        from kubesched.experiment import results

        return results.summary_table(self.runs)


_TRACES: dict[str, Any] = {}


def _init_worker(nodes: list[TraceNode], pods: dict[str, list[TracePod]]) -> None:
    _TRACES["nodes"], _TRACES["pods"] = nodes, pods


def _run(job: Job, inflation: float, tie_break: str, nodes: list[TraceNode] | None = None,
         pods: list[TracePod] | None = None) -> dict[str, Any]:
    nodes = _TRACES["nodes"] if nodes is None else nodes
    pods = _TRACES["pods"][job.workload] if pods is None else pods
    return fill_trace(nodes, pods, workload=job.workload, policy=job.policy, seed=job.seed, inflation=inflation,
                      tie_break=tie_break).to_json()


def sweep(nodes: str | Path, pods: str | Path | Sequence[str | Path], *, policies: Iterable[str] | None = None,
          seeds: Iterable[int] = range(42, 52), inflation: float = 1.3, out: str | Path | None = None,
          ray: bool | str | None = None, jobs: int | None = None, tie_break: str = "artifact",
          progress: Progress | None = None) -> SweepResult:
    """Run the matrix. ``ray``: None/False for local processes (``jobs`` of them, default
    the CPU count), True for a local Ray, an address ("ray://host:10001", "auto") for a cluster."""
    pod_paths = [pods] if isinstance(pods, (str, Path)) else list(pods)
    pols = list(policies) if policies is not None else list(POLICIES)
    bad = [p for p in pols if p not in POLICIES]
    if bad:
        raise KubeschedError(f"policy {bad[0]!r}: not one of {', '.join(POLICIES)}")
    if tie_break not in TIE_BREAKS:
        raise KubeschedError(f"tie-break {tie_break!r}: not one of {', '.join(TIE_BREAKS)}")
    node_list = read_nodes(nodes)
    traces = {workload_name(p): read_pods(p) for p in pod_paths}
    if len(traces) != len(pod_paths):
        raise KubeschedError("two pod lists have the same file name: name each trace differently")
    all_jobs = [Job(w, p, s) for w in traces for p in pols for s in seeds]
    out_dir = Path(out) if out is not None else None
    done: dict[Job, FillResult] = {}
    if out_dir is not None:
        try:
            (out_dir / "runs").mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise KubeschedError(f"{out_dir}: {exc.strerror or exc}") from exc
        done = _load_done(all_jobs, out_dir)
    todo = [j for j in all_jobs if j not in done]
    total = len(all_jobs)

    def finished(job: Job, doc: dict[str, Any]) -> None:
        res = FillResult.from_json(doc)
        done[job] = res
        if out_dir is not None:
            _save(job.path(out_dir), doc)
        if progress is not None:
            progress(len(done), total, res)

    if todo:
        if ray:
            _on_ray(todo, node_list, traces, inflation, tie_break, ray, finished)
        else:
            _on_processes(todo, node_list, traces, inflation, tie_break, jobs, finished)
    result = SweepResult([done[j] for j in all_jobs], out_dir)
    if out_dir is not None:
        from kubesched.experiment import results

        results.write_all(result.runs, out_dir)
    return result


def _load_done(jobs: list[Job], out: Path) -> dict[Job, FillResult]:
    done: dict[Job, FillResult] = {}
    for j in jobs:
        p = j.path(out)
        if p.is_file():
            try:
                done[j] = FillResult.from_json(json.loads(p.read_text(encoding="utf-8")))
            except (ValueError, KeyError, TypeError):
                continue  # a run cut off while being written: run it again
    return done


def _save(path: Path, doc: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _on_processes(todo: list[Job], nodes: list[TraceNode], traces: dict[str, list[TracePod]], inflation: float,
                  tie_break: str, jobs: int | None, finished: Callable[[Job, dict[str, Any]], None]) -> None:
    workers = max(1, min(jobs or os.cpu_count() or 1, len(todo)))
    if workers == 1:
        for j in todo:
            finished(j, _run(j, inflation, tie_break, nodes, traces[j.workload]))
        return
    # spawn: workers start clean (no fork of a process that may hold threads), on every OS
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker,
                             initargs=(nodes, traces)) as pool:
        pending = {pool.submit(_run, j, inflation, tie_break): j for j in todo}
        while pending:
            ready, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in ready:
                finished(pending.pop(fut), fut.result())


def _on_ray(todo: list[Job], nodes: list[TraceNode], traces: dict[str, list[TracePod]], inflation: float,
            tie_break: str, address: bool | str, finished: Callable[[Job, dict[str, Any]], None]) -> None:
    try:
        import ray
    except ImportError as exc:
        raise KubeschedError("--ray needs Ray: pip install 'kubesched[ray]'") from exc
    started = not ray.is_initialized()
    if started:
        ray.init(address=None if address is True else str(address), include_dashboard=False,
                 log_to_driver=False, configure_logging=False)
    try:
        remote = ray.remote(_run)
        node_ref = ray.put(nodes)
        pod_refs = {w: ray.put(p) for w, p in traces.items()}
        refs = {remote.remote(j, inflation, tie_break, node_ref, pod_refs[j.workload]): j for j in todo}
        while refs:
            ready, _ = ray.wait(list(refs), num_returns=1)
            for r in ready:
                finished(refs.pop(r), ray.get(r))
    finally:
        if started:
            ray.shutdown()
