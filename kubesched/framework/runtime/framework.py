"""``Framework``: runs the plugins of one profile at each extension point, in order.

Built once per profile: plugins are sorted into extension points by the protocols they
implement (and the profile's enabled lists), weights are checked, and a bad profile fails
fast (no QueueSort, no Bind, a Score plugin without weight), as upstream's NewFramework.

Filter and Score run over many nodes at once: a plugin with the batch form is called once
over NodeTable rows, a per-node plugin is called once per node. Nodes that have nominated
pods of equal or higher priority go through upstream's two-pass per-node filtering.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import numpy as np

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.errors import ProfileError
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, Resource
from kubesched.framework.interface import (
    MAX_NODE_SCORE, MIN_NODE_SCORE, BatchFilterPlugin, BatchScorePlugin, BindPlugin, FilterPlugin,
    PermitPlugin, PostBindPlugin, PostFilterPlugin, PostFilterResult, PreBindPlugin,
    PreEnqueuePlugin, PreFilterExtensions, PreFilterPlugin, PreFilterResult, PreScorePlugin,
    QueueSortPlugin, ReservePlugin, ScoreExtensions, ScorePlugin,
)
from kubesched.framework.runtime.metrics import PointObserver, timed_point
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.runtime.batchrun import BatchRunner, built_in
from kubesched.framework.runtime.bindpoints import BindingPoints
from kubesched.framework.runtime.outcome import CacheEntry, FilterOutcome, RowNames
from kubesched.framework.runtime.results import (
    as_post_filter, as_pre_filter, as_score, as_status, call as _call, error as _error,
    filter_error as _filter_error, score_error as _score_error,
)
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.framework.types import NodeInfo

log = logging.getLogger(__name__)

EXTENSION_POINTS: dict[str, type] = {
    "preEnqueue": PreEnqueuePlugin, "queueSort": QueueSortPlugin, "preFilter": PreFilterPlugin,
    "filter": FilterPlugin, "postFilter": PostFilterPlugin, "preScore": PreScorePlugin,
    "score": ScorePlugin, "reserve": ReservePlugin, "permit": PermitPlugin,
    "preBind": PreBindPlugin, "bind": BindPlugin, "postBind": PostBindPlugin,
}


class Framework(BindingPoints):
    def __init__(self, profile_name: str, plugins: Mapping[str, Sequence[Any]],
                 weights: Mapping[str, int], percentage_of_nodes_to_score: int | None = None) -> None:
        self.profile_name = profile_name
        self.points: dict[str, list[Any]] = {k: list(plugins.get(k, ())) for k in EXTENSION_POINTS}
        for point, proto in EXTENSION_POINTS.items():
            for pl in self.points[point]:
                if not isinstance(pl, proto):
                    raise ProfileError(f"plugin {pl.name!r} does not extend {point}",
                                       field=f"profiles[{profile_name}].plugins.{point}")
        if len(self.points["queueSort"]) != 1:
            raise ProfileError("exactly one queue sort plugin must be enabled",
                               field=f"profiles[{profile_name}].plugins.queueSort")
        if not self.points["bind"]:
            raise ProfileError("at least one bind plugin is needed",
                               field=f"profiles[{profile_name}].plugins.bind")
        self.weights = dict(weights)
        for pl in self.points["score"]:
            w = self.weights.get(pl.name)
            if w is None or w <= 0:
                raise ProfileError(f"score plugin {pl.name!r} needs a positive weight",
                                   field=f"profiles[{profile_name}].plugins.score")
        self.by_name = {pl.name: pl for pts in self.points.values() for pl in pts}
        # One typed list per extension point (upstream's preFilterPlugins, filterPlugins, ...),
        # so every call below is checked against its protocol.
        self.pre_enqueue_plugins: list[PreEnqueuePlugin] = cast("list[PreEnqueuePlugin]", self.points["preEnqueue"])
        self.queue_sort_plugins: list[QueueSortPlugin] = cast("list[QueueSortPlugin]", self.points["queueSort"])
        self.pre_filter_plugins: list[PreFilterPlugin] = cast("list[PreFilterPlugin]", self.points["preFilter"])
        self.filter_plugins: list[FilterPlugin] = cast("list[FilterPlugin]", self.points["filter"])
        self.post_filter_plugins: list[PostFilterPlugin] = cast("list[PostFilterPlugin]", self.points["postFilter"])
        self.pre_score_plugins: list[PreScorePlugin] = cast("list[PreScorePlugin]", self.points["preScore"])
        self.score_plugins: list[ScorePlugin] = cast("list[ScorePlugin]", self.points["score"])
        self.reserve_plugins: list[ReservePlugin] = cast("list[ReservePlugin]", self.points["reserve"])
        self.permit_plugins: list[PermitPlugin] = cast("list[PermitPlugin]", self.points["permit"])
        self.pre_bind_plugins: list[PreBindPlugin] = cast("list[PreBindPlugin]", self.points["preBind"])
        self.bind_plugins: list[BindPlugin] = cast("list[BindPlugin]", self.points["bind"])
        self.post_bind_plugins: list[PostBindPlugin] = cast("list[PostBindPlugin]", self.points["postBind"])
        # Protocol isinstance checks are slow: decide each plugin's form once.
        self._batch_filter = {pl.name for pl in self.points["filter"] if isinstance(pl, BatchFilterPlugin)}
        self._batch_score = {pl.name for pl in self.points["score"] if isinstance(pl, BatchScorePlugin)}
        self._normalizes = {pl.name for pl in self.points["score"] if hasattr(pl, "normalize_score")}
        self._extensions_list = [pl for pl in self.points["preFilter"] if isinstance(pl, PreFilterExtensions)]
        self._built_in = {pl.name for pts in self.points.values() for pl in pts if built_in(pl)}
        self._node_local = {pl.name for pts in (self.points["filter"], self.points["score"]) for pl in pts
                            if hasattr(pl, "signature")}  # the NodeLocalPlugin protocol
        self.batch = BatchRunner(self._node_local, self._built_in)
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.nominated_pods_for_node: Callable[[str], Sequence[Pod]] = lambda name: ()
        # node name -> nominated pods, for every node that has any (set by the scheduler)
        self.nominated_nodes: Callable[[], Mapping[str, Sequence[Pod]]] = lambda: {}
        # told of every run_<point> call (extension point, result, seconds): metrics
        self.observer: PointObserver | None = None
        # (plugin, extension point) -> plugin calls, per node for Filter and Score, as
        # upstream's scheduler_plugin_evaluation_total counts them (read by the metrics)
        self.evaluations: defaultdict[tuple[str, str], int] = defaultdict(int)

    # -- queue ------------------------------------------------------------------------
    @property
    def queue_sort(self) -> QueueSortPlugin:
        return self.queue_sort_plugins[0]

    def cluster_event_map(self) -> dict[str, list[ClusterEventWithHint]]:
        """The events that may make a pod rejected by each plugin schedulable (upstream's
        EnqueueExtensions of the profile): only plugins at PreEnqueue, PreFilter, Filter,
        Reserve or Permit count; one that does not register events gets every event of
        every resource (upstream ``UnrollWildCardResource``); an empty list means none."""
        points = (PreEnqueuePlugin, PreFilterPlugin, FilterPlugin, ReservePlugin, PermitPlugin)
        out: dict[str, list[ClusterEventWithHint]] = {}
        for name, pl in self.by_name.items():
            if not isinstance(pl, points):
                continue
            register = getattr(pl, "events_to_register", None)
            if register is not None:
                try:
                    out[name] = list(register())
                except Exception as exc:  # noqa: BLE001 - upstream NewFramework fails on an EventsToRegister error
                    raise ProfileError(f"plugin {name!r}: events_to_register failed: {type(exc).__name__}: {exc}",
                                       field=f"profiles[{self.profile_name}].plugins") from exc
                continue
            out[name] = [
                ClusterEventWithHint(ClusterEvent(r, ActionType.All))
                for r in (Resource.Pod, Resource.Node, Resource.PersistentVolumeClaim)]
        return out

    def run_pre_enqueue(self, pod: Pod) -> Status:
        for pl in self.pre_enqueue_plugins:
            st = as_status(_call(pl, "PreEnqueue", pl.pre_enqueue, pod), "pre_enqueue", pl.name)
            if not st.success:
                return st.with_plugin(pl.name)
        return SUCCESS

    # -- PreFilter --------------------------------------------------------------------
    @timed_point("PreFilter")
    def run_pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                       ) -> tuple[PreFilterResult | None, Status, set[str]]:
        """Upstream RunPreFilterPlugins: (merged result, status, plugins that narrowed nodes)."""
        result: PreFilterResult | None = None
        with_nodes: set[str] = set()
        ret = SUCCESS
        skip: set[str] = set()
        try:
            for pl in self.pre_filter_plugins:
                self.evaluations[(pl.name, "PreFilter")] += 1
                r, st = as_pre_filter(_call(pl, "PreFilter", pl.pre_filter, state, pod, nodes), pl.name)
                if st.code == Code.Skip:
                    skip.add(pl.name)
                    continue
                if not st.success:
                    st = st.with_plugin(pl.name)
                    if st.code == Code.UnschedulableAndUnresolvable:
                        return None, st, set()
                    if st.code == Code.Unschedulable:
                        ret = st
                        continue
                    return None, _error(f'running PreFilter plugin "{pl.name}": {st.message}', pl.name), set()
                if r is not None and not r.all_nodes():
                    with_nodes.add(pl.name)
                result = r if result is None else result.merge(r)
                if result is not None and not result.all_nodes() and not result.node_names:
                    names = sorted(with_nodes)
                    msg = (f"node(s) didn't satisfy plugin {names[0]}" if len(names) == 1 else
                           f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously")
                    return result, Status(Code.UnschedulableAndUnresolvable, (msg,)), with_nodes
            return result, ret, with_nodes
        finally:
            state.skip_filter_plugins = skip

    def _extensions(self) -> list[Any]:
        return self._extensions_list

    def run_pre_filter_add_pod(self, state: CycleState, pod: Pod, to_add: Pod, ni: NodeInfo) -> Status:
        for pl in self._extensions():
            if pl.name in state.skip_filter_plugins:
                continue
            st = as_status(_call(pl, "AddPod", pl.add_pod, state, pod, to_add, ni), "add_pod", pl.name)
            if not st.success:
                return _error(f'running AddPod on PreFilter plugin "{pl.name}": {st.message}', pl.name)
        return SUCCESS

    def run_pre_filter_remove_pod(self, state: CycleState, pod: Pod, to_remove: Pod, ni: NodeInfo) -> Status:
        for pl in self._extensions():
            if pl.name in state.skip_filter_plugins:
                continue
            st = as_status(_call(pl, "RemovePod", pl.remove_pod, state, pod, to_remove, ni), "remove_pod", pl.name)
            if not st.success:
                return _error(f'running RemovePod on PreFilter plugin "{pl.name}": {st.message}', pl.name)
        return SUCCESS

    # -- Filter -----------------------------------------------------------------------
    @property
    def has_filter_plugins(self) -> bool:
        return bool(self.filter_plugins)

    @property
    def has_score_plugins(self) -> bool:
        return bool(self.score_plugins)

    def run_filter(self, state: CycleState, pod: Pod, ni: NodeInfo) -> Status:
        """Upstream RunFilterPlugins: the first plugin that does not succeed decides."""
        for pl in self.filter_plugins:
            if pl.name in state.skip_filter_plugins:
                continue
            st = as_status(_call(pl, "Filter", pl.filter, state, pod, ni), "filter", pl.name)
            if not st.success:
                if not st.rejected:
                    return _filter_error(st, pl.name)
                return st.with_plugin(pl.name)
        return SUCCESS

    def _nominated_state(self, state: CycleState, pod: Pod, ni: NodeInfo,
                         ) -> tuple[bool, CycleState, NodeInfo] | Status:
        """addGENominatedPods: add nominated pods of >= priority to a copy of the node (an
        AddPod failure is returned: upstream's error)."""
        nominated = [p for p in self.nominated_pods_for_node(ni.name)
                     if p.priority >= pod.priority and p.uid != pod.uid]
        if not nominated:
            return False, state, ni
        ni_out = ni.clone()
        state_out = state.clone()
        for p in nominated:
            ni_out.add_pod(p)
            st = self.run_pre_filter_add_pod(state_out, pod, p, ni_out)
            if not st.success:
                return st
        return True, state_out, ni_out

    def nominated_state(self, state: CycleState, pod: Pod, ni: NodeInfo,
                        ) -> tuple[bool, CycleState, NodeInfo] | Status:
        """:meth:`_nominated_state` for explanations (kubesched.explanation.blockers)."""
        return self._nominated_state(state, pod, ni)

    def run_filter_with_nominated_pods(self, state: CycleState, pod: Pod, ni: NodeInfo) -> Status:
        """Upstream RunFilterPluginsWithNominatedPods (two passes when pods were added)."""
        nominated = self._nominated_state(state, pod, ni)
        if isinstance(nominated, Status):
            return nominated
        added, st_state, st_ni = nominated
        status = self.run_filter(st_state, pod, st_ni)
        if added and status.success:
            status = self.run_filter(state, pod, ni)
        return status

    def filter_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> FilterOutcome:
        """Filter rows ``idx``; feasible rows keep ``idx``'s order. Raises nothing: an Error
        status from a plugin is returned in ``statuses`` and stops at that row."""
        out = FilterOutcome()
        special: list[int] = []
        for name, pods in self.nominated_nodes().items():
            row = table.index.get(name)
            if row is not None and any(p.priority >= pod.priority and p.uid != pod.uid for p in pods):
                special.append(row)
        alive = idx
        if special:
            sp = np.array(special, dtype=np.intp)
            is_special = np.isin(idx, sp)
            special = idx[is_special].tolist()
            alive = idx[~is_special]
        for pl in self.filter_plugins:
            if pl.name in state.skip_filter_plugins or alive.size == 0:
                continue
            self.evaluations[(pl.name, "Filter")] += int(alive.size)
            if pl.name in self._batch_filter:
                bpl = cast(BatchFilterPlugin, pl)  # decided once, when the profile was built
                got = self.batch.cached(bpl, "Filter", bpl.filter_nodes, state, pod, table)
                if isinstance(got, CacheEntry) and got.nonzero == table.size:
                    continue  # every row passes: no gather, no pass
                if isinstance(got, CacheEntry) and alive is table.all:  # the verdicts split once
                    alive, rejected = got.split()
                    out.reject(rejected, pl.name)
                    continue
                res = self.batch.rows_of(bpl, "Filter", bpl.filter_nodes, state, pod, table, alive, got)
                if isinstance(res, Status):
                    out.error = _filter_error(res, pl.name)
                    alive = alive[:0]
                    break
                ok = np.asarray(res, dtype=bool)
                if not ok.all():  # else alive stays the same array (table.all: cheaper to score)
                    out.reject(alive[~ok], pl.name)
                    alive = alive[ok]
            else:
                keep = []
                for i in alive.tolist():
                    st = as_status(_call(pl, "Filter", pl.filter, state, pod, table.infos[i]), "filter", pl.name)
                    if st.success:
                        keep.append(i)
                    elif st.rejected:
                        out.failed_by[i] = pl.name
                        out.statuses[i] = st.with_plugin(pl.name)
                    else:
                        out.error = _filter_error(st, pl.name)
                        keep = []
                        break
                alive = np.array(keep, dtype=np.intp)
                if out.error is not None:
                    break
        for i in special if out.error is None else ():
            st = self.run_filter_with_nominated_pods(state, pod, table.infos[i])
            if st.code == Code.Error:
                out.error = st
                break
            if not st.success:
                out.failed_by[i] = st.plugin
                out.statuses[i] = st
        if out.error is not None:
            alive = alive[:0]
        elif special:
            ok_set = set(alive.tolist())
            ok_set.update(i for i in special if i not in out.failed_by)
            alive = np.array([i for i in idx.tolist() if i in ok_set], dtype=np.intp)
        out.feasible = alive
        return out

    def status_of(self, state: CycleState, pod: Pod, table: NodeTable, out: FilterOutcome, i: int) -> Status:
        """The status of rejected row ``i``, from the rejecting plugin's per-node form."""
        st = out.statuses.get(i)
        if st is None:
            pl = self.by_name[out.failed_by[i]]
            st = as_status(_call(pl, "Filter", pl.filter, state, pod, table.infos[i]), "filter", pl.name)
            if st.success:  # both forms must agree; report the disagreement loudly
                st = Status(Code.Error, (f"plugin {pl.name} batch and per-node forms disagree",))
            st = st.with_plugin(pl.name) if st.rejected else _filter_error(st, pl.name)
            out.statuses[i] = st
        return st

    # -- PostFilter -------------------------------------------------------------------
    @timed_point("PostFilter")
    def run_post_filter(self, state: CycleState, pod: Pod, filtered: Mapping[str, Status],
                        ) -> tuple[PostFilterResult | None, Status]:
        """Upstream RunPostFilterPlugins: first success wins; messages of rejections joined."""
        reasons: list[str] = []
        rejector = ""
        result: PostFilterResult | None = None
        for pl in self.post_filter_plugins:
            out = _call(pl, "PostFilter", pl.post_filter, state, pod, filtered)
            r, st = as_post_filter(out, pl.name)
            if st.code == Code.Error and not isinstance(out, tuple):
                # raised, or returned a bare error: name the plugin (upstream passes a returned
                # error on unwrapped; a Go plugin cannot raise)
                return None, _error(f'running PostFilter plugin "{pl.name}": {st.message}', pl.name)
            if st.success:
                return r, st.with_plugin(pl.name)
            if st.code == Code.UnschedulableAndUnresolvable:
                return r, st.with_plugin(pl.name)
            if not st.rejected:
                return None, st.with_plugin(pl.name)
            if r is not None:
                result = r  # e.g. an empty nomination: clear the pod's nominated node
            reasons.extend(st.reasons)
            rejector = rejector or pl.name
        return result, Status(Code.Unschedulable, tuple(reasons), rejector)

    # -- Score ------------------------------------------------------------------------
    @timed_point("PreScore")
    def run_pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        skip: set[str] = set()
        try:
            for pl in self.pre_score_plugins:
                self.evaluations[(pl.name, "PreScore")] += 1
                st = as_status(_call(pl, "PreScore", pl.pre_score, state, pod, nodes), "pre_score", pl.name)
                if st.code == Code.Skip:
                    skip.add(pl.name)
                    continue
                if not st.success:
                    return _error(f'running PreScore plugin "{pl.name}": {st.message}', pl.name)
            return SUCCESS
        finally:
            state.skip_score_plugins = skip

    @timed_point("Score")
    def run_score(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray,
                  detail: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
                  ) -> tuple[dict[str, np.ndarray], np.ndarray] | Status:
        """Weighted, normalised score per plugin over rows ``idx``, and the totals.
        ``detail`` (explain): filled with each plugin's (raw, normalised) scores. Without it,
        the built-in node-local plugins' cached scores are added through the maintained sums
        (:mod:`.scoresum`; in range by construction, so not checked again) and are left out
        of the per-plugin map (read only by explain, which passes ``detail``)."""
        per_plugin: dict[str, np.ndarray] = {}
        names = RowNames(table.names, idx)
        summed: list[tuple[CacheEntry, int]] = []
        others: list[np.ndarray] = []
        const = 0  # normalised plugins whose raw scores are all 0 (one value for every row)
        for pl in self.score_plugins:
            if pl.name in state.skip_score_plugins:
                continue
            self.evaluations[(pl.name, "Score")] += int(idx.size)
            w = self.weights[pl.name]
            if pl.name in self._batch_score:
                bpl = cast(BatchScorePlugin, pl)  # decided once, when the profile was built
                got = self.batch.cached(bpl, "Score", bpl.score_nodes, state, pod, table)
                if isinstance(got, CacheEntry) and detail is None and idx.size and pl.name in self._built_in:
                    if pl.name not in self._normalizes:
                        summed.append((got, w))
                        continue
                    if got.nonzero == 0:  # the in-tree normalisations map equal scores to one value
                        one = np.zeros(1, np.int64)
                        normalize = cast(ScoreExtensions, pl).normalize_score
                        st = as_status(_call(pl, "NormalizeScore", normalize, state, pod,
                                             RowNames(table.names, idx[:1]), one), "normalize_score", pl.name)
                        if not st.success:
                            return _score_error("running Normalize on Score plugins", st, pl.name)
                        const += int(one[0]) * w
                        continue
                res = self.batch.rows_of(bpl, "Score", bpl.score_nodes, state, pod, table, idx, got)
                if isinstance(res, Status):
                    return _score_error("running Score plugins", res, pl.name)
                # NormalizeScore writes into the array: give it a copy of the plugin's
                scores = (np.array(res, dtype=np.int64) if pl.name in self._normalizes
                          else np.asarray(res, dtype=np.int64))
            else:
                vals = []
                for i in idx.tolist():
                    s = as_score(_call(pl, "Score", pl.score, state, pod, table.infos[i]), pl.name)
                    if isinstance(s, Status):
                        return _score_error("running Score plugins", s, pl.name)
                    vals.append(s)
                scores = np.array(vals, dtype=np.int64)
            raw = scores.copy() if detail is not None else scores
            if pl.name in self._normalizes:  # the ScoreExtensions protocol
                st = as_status(_call(pl, "NormalizeScore", cast(ScoreExtensions, pl).normalize_score, state, pod,
                                     names, scores),
                               "normalize_score", pl.name)
                if not st.success:
                    return _score_error("running Normalize on Score plugins", st, pl.name)
            if scores.size and (scores.max() > MAX_NODE_SCORE or scores.min() < MIN_NODE_SCORE):
                bad = int(scores[(scores > MAX_NODE_SCORE) | (scores < MIN_NODE_SCORE)][0])
                return _error(f'applying score defaultWeights on Score plugins: plugin "{pl.name}" returns an '
                              f"invalid score {bad}, it should in the range of [{MIN_NODE_SCORE}, "
                              f"{MAX_NODE_SCORE}] after normalizing", pl.name)
            if detail is not None:  # explain reads these after later cycles: never a plugin cache's array
                detail[pl.name] = (raw, scores if pl.name in self._normalizes else raw)
                weighted = scores * w
            else:
                weighted = scores * w if w != 1 else scores
            per_plugin[pl.name] = weighted
            others.append(weighted)
        return per_plugin, self.batch.totals(table, idx, summed, others, const)

    def best_rows(self, rows: np.ndarray, totals: np.ndarray) -> np.ndarray:
        """``rows[totals == totals.max()]`` for the totals of the last :meth:`run_score` over ``rows``."""
        return self.batch.best_rows(rows, totals)
