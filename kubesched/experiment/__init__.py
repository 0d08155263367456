"""The FGD paper's experiments on openb-format traces: ``fill`` (one run) and ``sweep``
(policies x seeds x traces, in local processes or on Ray), returning tables.

Imported lazily: ``import kubesched.experiment`` costs nothing until a function is called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesched.experiment.runs import FillResult
    from kubesched.experiment.matrix import SweepResult

__all__ = ["fill", "sweep"]


def fill(nodes: Any, pods: Any, *, policy: str = "fgd", seed: int = 42, inflation: float = 1.3,
         tie_break: str = "artifact") -> "FillResult":
    """One experiment: see :func:`kubesched.experiment.runs.fill`."""
    from kubesched.experiment.runs import fill as run

    return run(nodes, pods, policy=policy, seed=seed, inflation=inflation, tie_break=tie_break)


def sweep(nodes: Any, pods: Any, *, policies: Any = None, seeds: Any = range(42, 52), inflation: float = 1.3,
          out: Any = None, ray: Any = None, jobs: int | None = None, tie_break: str = "artifact",
          progress: Any = None) -> "SweepResult":
    """Many experiments: see :func:`kubesched.experiment.matrix.sweep`."""
    from kubesched.experiment.matrix import sweep as run

    return run(nodes, pods, policies=policies, seeds=seeds, inflation=inflation, out=out, ray=ray, jobs=jobs,
               tie_break=tie_break, progress=progress)
