"""Sampled per-plugin timing, the framework's half of the scheduler's metrics.

Upstream times each plugin call (``scheduler_plugin_execution_duration_seconds``) only in
the cycles it samples (``CycleState.record_plugin_metrics``). The framework cannot know
where metrics go (they belong to an outer layer), so whoever samples a cycle also writes a
:data:`PLUGIN_RECORDER` into its CycleState; :func:`call_timed` reports to it. Cycles not
sampled pay one attribute test in ``runtime._call``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from kubesched.framework.cycle_state import CycleState, StateKey
from kubesched.framework.status import Status

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
