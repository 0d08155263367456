"""One profile's Filter and Score plugins answering extender/v1 requests (``kubesched extender``).

A stock kube-scheduler configured with an extender calls it after its own Filter plugins,
with an ``ExtenderArgs`` (the pod, and either full Node objects or, ``nodeCacheCapable``,
node names only). :class:`PluginExtender` runs the profile the way the scheduling cycle
does (PreFilter on every node it knows, Filter on the nodes asked about; PreFilter again,
then PreScore and Score, for Prioritize) through the same :class:`Framework`, and turns
the result into extender/v1 JSON:

* filter: ``Unschedulable`` → ``FailedNodes``, ``UnschedulableAndUnresolvable`` →
  ``FailedAndUnresolvableNodes`` (the status's reasons joined with ", "), a plugin error →
  ``Error``; the kept nodes as ``Nodes`` (the objects received) or ``NodeNames``, as asked.
* prioritize: the profile's weighted total ``T`` (each Score plugin's normalised 0..100
  score × its weight, summed) scaled to extender/v1's 0..``MaxExtenderPriority`` (10):
  ``round(T × 10 / (100 × W))``, ``W`` the sum of the Score plugins' weights, halves up.
  The caller multiplies it by its ``weight × 10`` again, so a plugin scoring in multiples
  of 10 with weight ``w`` counts the same through an extender of weight ``w`` as
  in-process; other scores lose their last digit.

Where the nodes and their pods come from:

* with a cache (``--kubeconfig``: a :class:`LiveScheduler` whose informers run, never its
  scheduling loop): the cache's nodes and pods, every node of the cluster for PreFilter;
  names-only requests need it. Full Node objects the cache does not know yet are added.
* without: only the Node objects in the request, **without pods** (nothing says which
  pods run where): resource fit, pod counts, ports, inter-pod affinity and topology
  spread see empty nodes, and PreFilter sees only the nodes sent.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.api.errors import KubeschedError
from kubesched.api.objects import Node, Pod
from kubesched.cache.cache import Cache
from kubesched.cache.snapshot import Snapshot
from kubesched.cluster.inprocess import InProcessCluster
from kubesched.config import SchedulerConfig
from kubesched.framework.clock import RealClock
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.errors import ProfileError
from kubesched.framework.extender import MAX_EXTENDER_PRIORITY, MAX_NODE_SCORE
from kubesched.framework.features import Features
from kubesched.framework.interface import PODS_TO_ACTIVATE
from kubesched.framework.registry import Registry
from kubesched.framework.runtime.framework import Framework
from kubesched.framework.status import Code, Status
from kubesched.live.scheduler import LiveScheduler
from kubesched.scheduler.factory import new_scheduler

log = logging.getLogger(__name__)

NOT_IN_CACHE = "node(s) not (yet) in the extender's cache"


class ArgsError(KubeschedError):
    """An ExtenderArgs the extender cannot use; the message names the field."""


class EvalError(KubeschedError):
    """A plugin failed (an ``Error`` status); the message is the runtime's text for it."""


@dataclass(frozen=True, slots=True)
class Args:
    pod: Pod
    nodes: list[Node] | None  # full objects (nodeCacheCapable false), in request order
    raw_nodes: list[dict[str, Any]] | None
    names: list[str]  # request order, duplicates dropped


def _get(obj: Mapping[str, Any], key: str) -> Any:
    """Go's JSON decoder matches field names case-insensitively."""
    if key in obj:
        return obj[key]
    low = key.lower()
    return next((v for k, v in obj.items() if isinstance(k, str) and k.lower() == low), None)


def decode_args(body: Any) -> Args:
    """``ExtenderArgs {Pod, Nodes, NodeNames}``; raises :class:`ArgsError`."""
    if not isinstance(body, dict):
        raise ArgsError("ExtenderArgs: expected a JSON object")
    raw_pod = _get(body, "Pod")
    if not isinstance(raw_pod, dict):
        raise ArgsError("ExtenderArgs.Pod: expected a v1.Pod object")
    try:
        pod = Pod.from_dict(raw_pod, validate=False)
    except (KubeschedError, TypeError, ValueError, AttributeError) as exc:
        raise ArgsError(f"ExtenderArgs.Pod: {exc}") from None
    node_list = _get(body, "Nodes")
    if node_list is not None:
        if not isinstance(node_list, dict):
            raise ArgsError("ExtenderArgs.Nodes: expected a v1.NodeList object")
        items = _get(node_list, "items")
        if not isinstance(items, list) and items is not None:
            raise ArgsError("ExtenderArgs.Nodes.items: expected an array of v1.Node")
        nodes, raws, seen = [], [], set()
        for i, raw in enumerate(items or []):
            try:
                node = Node.from_dict(dict(raw), validate=False)
            except (KubeschedError, TypeError, ValueError, AttributeError) as exc:
                raise ArgsError(f"ExtenderArgs.Nodes.items[{i}]: {exc}") from None
            if not node.name:
                raise ArgsError(f"ExtenderArgs.Nodes.items[{i}].metadata.name: required")
            if node.name not in seen:
                seen.add(node.name)
                nodes.append(node)
                raws.append(raw)
        return Args(pod, nodes, raws, [n.name for n in nodes])
    names = _get(body, "NodeNames")
    if names is None:
        raise ArgsError("ExtenderArgs: neither Nodes nor NodeNames is set")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ArgsError("ExtenderArgs.NodeNames: expected an array of strings")
    return Args(pod, None, None, list(dict.fromkeys(names)))


class PluginExtender:
    """Answers filter and prioritize for one profile. Thread-safe: one evaluation at a
    time (the scheduler's lock, which the informers also take)."""

    def __init__(self, config: SchedulerConfig, registry: Registry, profile: str | None = None,
                 live: LiveScheduler | None = None, features: Features | None = None) -> None:
        self.live = live
        self._live_snapshot = Snapshot()
        if live is not None:
            self.sched = live.sched
        else:
            cluster = InProcessCluster(RealClock().now)
            self.sched = new_scheduler(config, cache=Cache(), sink=cluster, objects=cluster, now=cluster.now,
                                       rng=random.Random(0), registry=registry, features=features)
        profiles = self.sched.profiles
        name = profile or config.profiles[0].scheduler_name
        if name not in profiles:
            raise ProfileError(f'no profile with schedulerName "{name}" (profiles: {", ".join(profiles)})',
                               field="profiles")
        self.profile = name
        self.fw: Framework = profiles[name]
        self.total_weight = sum(self.fw.weights[pl.name] for pl in self.fw.points["score"])

    @property
    def has_cache(self) -> bool:
        return self.live is not None

    def synced(self) -> bool:
        return self.live is None or all(i.has_synced for i in self.live.informers)

    # -- the snapshot a request is evaluated on ---------------------------------------------
    def _snapshot(self, args: Args) -> tuple[Snapshot, list[str]]:
        """Set the scheduler's snapshot for this request (plugins read it through their
        handle); returns it and the requested names not in it. Call with the lock held."""
        if self.live is None:
            if args.nodes is None:
                raise ArgsError("ExtenderArgs.NodeNames: this extender has no node cache (start it with "
                                "--kubeconfig), so the caller must send full Nodes (nodeCacheCapable: false)")
            cache = Cache()
            for n in args.nodes:
                cache.add_node(n)
            snap = Snapshot()
            cache.update_snapshot(snap)
        else:
            live = self.live.cache
            missing = [n for n in args.nodes or () if getattr(live.nodes.get(n.name), "node", None) is None]
            if missing:  # nodes the informers have not delivered yet: the request's objects, no pods
                cache = Cache()
                for ni in live.nodes.values():
                    if ni.node is not None:
                        cache.add_node(ni.node)
                for n in missing:
                    cache.add_node(n)
                for p in live.pods():
                    if p.node_name and p.node_name in cache.nodes:
                        cache.add_pod(p)
                snap = Snapshot()
                cache.update_snapshot(snap)
            else:  # the cache's own snapshot, brought up to date incrementally
                snap = self._live_snapshot
                live.update_snapshot(snap)
        self.sched.snapshot = snap
        return snap, [n for n in args.names if n not in snap.node_map]

    # -- filter ------------------------------------------------------------------------------
    def filter(self, args: Args) -> dict[str, Any]:
        """ExtenderFilterResult for ``args`` (an evaluation error in its ``Error``)."""
        failed: dict[str, str] = {}
        unresolvable: dict[str, str] = {}
        try:
            with self.sched.lock:
                kept = self._filter(args, failed, unresolvable)
        except ArgsError as exc:
            return filter_result(None, None, {}, {}, f"filter: {exc}")
        except EvalError as exc:
            return filter_result(None, None, {}, {}, str(exc))
        if args.nodes is None:
            return filter_result(None, kept, failed, unresolvable, "")
        assert args.raw_nodes is not None
        raw = {n.name: r for n, r in zip(args.nodes, args.raw_nodes)}
        return filter_result([raw[n] for n in kept], None, failed, unresolvable, "")

    def _filter(self, args: Args, failed: dict[str, str], unresolvable: dict[str, str]) -> list[str]:
        snap, unknown = self._snapshot(args)
        for n in unknown:
            failed[n] = NOT_IN_CACHE
        table = snap.table
        asked = [table.index[n] for n in args.names if n in table.index]
        if not asked:
            return []
        fw, pod = self.fw, args.pod
        state = CycleState()
        state.write(PODS_TO_ACTIVATE, {})
        pre_res, st, with_nodes = fw.run_pre_filter(state, pod, snap.node_infos)
        if not st.success:
            if not st.rejected:
                raise EvalError(st.message)
            for i in asked:
                _verdict(failed, unresolvable, table.names[i], st)
            return []
        idx = np.array(asked, np.intp)
        if pre_res is not None and pre_res.node_names is not None:
            allowed = pre_res.node_names
            absent = Status(Code.UnschedulableAndUnresolvable,
                            (f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(with_nodes))}]",))
            for i in asked:
                if table.names[i] not in allowed:
                    _verdict(failed, unresolvable, table.names[i], absent)
            idx = np.array([i for i in asked if table.names[i] in allowed], np.intp)
        out = fw.filter_nodes(state, pod, table, idx)
        if out.error is not None:
            raise EvalError(out.error.message)
        for i in out.failed_by:
            vst = fw.status_of(state, pod, table, out, i)
            if vst.code == Code.Error:
                raise EvalError(f'running "{vst.plugin}" filter plugin: {vst.message}')
            _verdict(failed, unresolvable, table.names[i], vst)
        return [table.names[i] for i in out.feasible.tolist()]

    # -- prioritize --------------------------------------------------------------------------
    def prioritize(self, args: Args) -> list[dict[str, Any]]:
        """HostPriorityList for the requested nodes. Raises :class:`ArgsError` or
        :class:`EvalError` (the HTTP layer answers 400 / 500: a HostPriorityList has no
        error field, and upstream ignores a failed Prioritize)."""
        with self.sched.lock:
            snap, unknown = self._snapshot(args)
            table = snap.table
            rows = np.array([table.index[n] for n in args.names if n in table.index], np.intp)
            totals = self._totals(args.pod, snap, rows)
        scores = {table.names[i]: scale(int(t), self.total_weight) for i, t in zip(rows.tolist(), totals.tolist())}
        return [{"Host": n, "Score": scores.get(n, 0)} for n in args.names]

    def _totals(self, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        fw = self.fw
        if not rows.size or not fw.points["score"]:
            return np.zeros(rows.size, np.int64)
        state = CycleState()
        state.write(PODS_TO_ACTIVATE, {})
        _, st, _ = fw.run_pre_filter(state, pod, snap.node_infos)  # Score plugins may read its state
        if not st.success and not st.rejected:
            raise EvalError(st.message)
        table = snap.table
        st = fw.run_pre_score(state, pod, [table.infos[i] for i in rows.tolist()])
        if not st.success:
            raise EvalError(st.message)
        res = fw.run_score(state, pod, table, rows)
        if isinstance(res, Status):
            raise EvalError(res.message)
        return res[1]


def scale(total: int, total_weight: int) -> int:
    """A weighted total (0..100 × ``total_weight``) on extender/v1's 0..10 scale, rounded
    half up: ``round(total × MaxExtenderPriority / (MaxNodeScore × total_weight))``."""
    if total_weight <= 0:
        return 0
    den = MAX_NODE_SCORE * total_weight
    return min(MAX_EXTENDER_PRIORITY, max(0, (total * MAX_EXTENDER_PRIORITY * 2 + den) // (2 * den)))


def _verdict(failed: dict[str, str], unresolvable: dict[str, str], node: str, st: Status) -> None:
    if st.code == Code.UnschedulableAndUnresolvable:
        unresolvable[node] = st.message
    else:
        failed[node] = st.message


def filter_result(nodes: Sequence[dict[str, Any]] | None, names: list[str] | None, failed: dict[str, str],
                  unresolvable: dict[str, str], error: str) -> dict[str, Any]:
    """extender/v1 ``ExtenderFilterResult`` (Go field names)."""
    return {"Nodes": None if nodes is None else {"metadata": {}, "items": list(nodes)},
            "NodeNames": names, "FailedNodes": failed, "FailedAndUnresolvableNodes": unresolvable,
            "Error": error}
