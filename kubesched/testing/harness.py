"""Run one plugin the way the framework does, in both forms, for plugin tests.

``filter_all`` runs PreFilter then Filter on every node (per-node form) and returns each
node's Status; ``filter_all_batch`` does the same through ``filter_nodes``. ``score_all``
runs PreScore, Score and NormalizeScore (unweighted) in either form. A plugin test asserts
upstream's expected values on one form and the property tests check the forms agree.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import (
    BatchFilterPlugin, BatchScorePlugin, PreFilterPlugin, PreScorePlugin, ScoreExtensions,
)
from kubesched.framework.status import SUCCESS, Code, Status


def pre_filter(plugin: Any, pod: Pod, handle: Any, state: CycleState) -> Status | None:
    """Run PreFilter; returns a non-success status to apply to every node, or None."""
    if isinstance(plugin, PreFilterPlugin):
        result, st = plugin.pre_filter(state, pod, handle.snapshot.node_infos)
        if st.code == Code.Skip:
            return SUCCESS
        if not st.success:
            return st.with_plugin(plugin.name)
    return None


def filter_all(plugin: Any, pod: Pod, handle: Any, batch: bool = False) -> dict[str, Status]:
    state = CycleState()
    pre = pre_filter(plugin, pod, handle, state)
    infos = handle.snapshot.node_infos
    if pre is not None:
        return {ni.name: pre for ni in infos}
    if batch:
        assert isinstance(plugin, BatchFilterPlugin), f"{plugin.name} has no batch form"
        table = handle.snapshot.table
        ok = plugin.filter_nodes(state, pod, table, table.all)
        out = {}
        for i, ni in enumerate(infos):
            out[ni.name] = SUCCESS if ok[i] else plugin.filter(state, pod, ni).with_plugin(plugin.name)  # type: ignore[attr-defined]
        return out
    return {ni.name: (st if st.success else st.with_plugin(plugin.name))
            for ni in infos for st in [plugin.filter(state, pod, ni)]}


def score_all(plugin: Any, pod: Pod, handle: Any, batch: bool = False,
              nodes: list[str] | None = None) -> dict[str, int] | Status:
    """Scores after NormalizeScore (unweighted) for ``nodes`` (default: all), or the
    PreScore status when it is not Success (e.g. Skip)."""
    state = CycleState()
    pre = pre_filter(plugin, pod, handle, state)
    if pre is not None and not pre.success:
        return pre
    snap = handle.snapshot
    names = nodes if nodes is not None else [ni.name for ni in snap.node_infos]
    infos = [snap.get(n) for n in names]
    if isinstance(plugin, PreScorePlugin):
        st = plugin.pre_score(state, pod, infos)
        if not st.success:
            return st
    if batch:
        assert isinstance(plugin, BatchScorePlugin), f"{plugin.name} has no batch form"
        table = snap.table
        idx = np.array([table.index[n] for n in names], dtype=np.intp)
        scores = np.asarray(plugin.score_nodes(state, pod, table, idx), dtype=np.int64)
    else:
        scores = np.array([plugin.score(state, pod, ni) for ni in infos], dtype=np.int64)
    if isinstance(plugin, ScoreExtensions):
        plugin.normalize_score(state, pod, names, scores)
    return {n: int(s) for n, s in zip(names, scores)}
