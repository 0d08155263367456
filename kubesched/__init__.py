"""kubesched: a Kubernetes-compatible pod scheduler in Python.

The Python API, imported on first use so that ``import kubesched`` (and the command's
start-up) stays cheap:

- :func:`kubesched.simulate` and :func:`kubesched.explain` (:mod:`kubesched.python_api`);
- :mod:`kubesched.experiment`: the FGD paper's GPU-sharing experiments (``fill``, ``sweep``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesched import experiment
    from kubesched.python_api import Explanation, PodResult, Result, explain, simulate

__all__ = ["Explanation", "PodResult", "Result", "experiment", "explain", "simulate"]


def __getattr__(name: str) -> Any:
    if name == "experiment":
        import importlib

        return importlib.import_module("kubesched.experiment")
    if name in ("Explanation", "PodResult", "Result", "explain", "simulate"):
        from kubesched import python_api

        return getattr(python_api, name)
    raise AttributeError(f"module 'kubesched' has no attribute {name!r}")
