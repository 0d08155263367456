"""Timing hooks, the framework's half of the scheduler's metrics.

Extension points: a Framework whose ``observer`` is set reports each ``run_<point>`` call
(upstream's ``extension_point`` label, the result, the seconds) to it; with no observer the
methods run untimed (:func:`timed_point`).

Plugins, sampled:

Upstream times each plugin call (``scheduler_plugin_execution_duration_seconds``) only in
the cycles it samples (``CycleState.record_plugin_metrics``). The framework cannot know
where metrics go (they belong to an outer layer), so whoever samples a cycle also writes a
:data:`PLUGIN_RECORDER` into its CycleState; :func:`call_timed` reports to it. Cycles not
sampled pay one attribute test in ``runtime._call``.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

from kubesched.framework.cycle_state import CycleState, StateKey
from kubesched.framework.status import Status

# (extension_point, result of the run_<point> method, seconds)
PointObserver = Callable[[str, Any, float], None]
F = TypeVar("F", bound=Callable[..., Any])


def timed_point(point: str) -> Callable[[F], F]:
    """Decorate a Framework ``run_<point>`` method: when the framework has an ``observer``,
    time the call and report it as upstream's extension point ``point``."""
    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def run(self: Any, *args: Any, **kw: Any) -> Any:
            observer = self.observer
            if observer is None:
                return fn(self, *args, **kw)
            started = time.perf_counter()
            out = fn(self, *args, **kw)
            observer(point, out, time.perf_counter() - started)
            return out
        return cast(F, run)
    return decorate


# (plugin, extension_point, status, seconds)
PluginRecorder = Callable[[str, str, str, float], None]
PLUGIN_RECORDER: StateKey[PluginRecorder] = StateKey("kubesched/pluginMetricsRecorder")

# our call names -> upstream's extension_point label values
_POINT = {"AddPod": "PreFilterExtensionAddPod", "RemovePod": "PreFilterExtensionRemovePod",
          "NormalizeScore": "ScoreExtensionNormalize"}


def status_label(result: Any) -> str:
    """Upstream's ``Code.String()`` of a plugin's or extension point's result."""
    if isinstance(result, Status):
        return result.code.name
    if isinstance(result, tuple):
        for item in result:
            if isinstance(item, Status):
                return item.code.name
    return "Success"


def call_timed(plugin: Any, what: str, fn: Callable[..., Any], state: CycleState, args: tuple[Any, ...]) -> Any:
    """Run ``fn(*args)``, reporting its duration to the cycle's recorder (if any)."""
    rec = state.get(PLUGIN_RECORDER)
    if rec is None:
        return fn(*args)
    started = time.perf_counter()
    out = fn(*args)
    rec(plugin.name, _POINT.get(what, what), status_label(out), time.perf_counter() - started)
    return out
