"""Every blocker of a pod, node by node: all the plugins that reject each node, not only the first.

Upstream's Filter stops at the first plugin that rejects a node (``RunFilterPlugins``), so
its message names one reason per node: a pod kept off a zone by both ``Insufficient cpu``
and its spread constraint shows only the first, and adding cpu there does not help. Here
every PreFilter plugin and every Filter plugin of the pod's profile runs on its own over
every node of the snapshot, and each rejection comes with its evidence
(:mod:`.evidence`). Per node, ``upstream`` is the verdict upstream gives (the first
rejection in profile order: the one that decides and the one in the message); the
others are marked ``beyondUpstream``.

This runs outside the scheduling cycle, when an explanation is asked for (``explain``,
``/debug/explain``), on the scheduler's current snapshot, with a cycle state of its own:
it changes no decision and costs the scheduling loop nothing otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.explanation.evidence import EvidenceContext, evidence
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.dra import DraLister
from kubesched.framework.interface import PODS_TO_ACTIVATE, ClusterObjects
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.runtime.framework import Framework
from kubesched.framework.runtime.results import as_pre_filter, as_status, call
from kubesched.framework.status import Code, Status
from kubesched.framework.storage import StorageLister
from kubesched.framework.types import NodeInfo

PREFILTER = "PreFilter"
FILTER = "Filter"


@dataclass(frozen=True, slots=True)
class Blocker:
    """One plugin rejecting one node (or, at PreFilter, every node)."""

    plugin: str
    code: str
    reasons: tuple[str, ...]
    stage: str = FILTER
    upstream: bool = False  # the verdict upstream gives for this node
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"plugin": self.plugin, "stage": self.stage, "code": self.code,
                               "reasons": list(self.reasons)}
        if not self.upstream:
            doc["beyondUpstream"] = True
        if self.evidence:
            doc["evidence"] = self.evidence
        return doc


@dataclass
class Blockers:
    """Per blocked node its blockers, in profile order (the first is upstream's verdict);
    ``fits``: the nodes no plugin rejects; ``errors``: plugins that failed with Error."""

    pod: str
    nodes: dict[str, list[Blocker]] = field(default_factory=dict)
    fits: list[str] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)

    def plugins(self) -> dict[str, int]:
        """How many nodes each plugin rejects (upstream counts only the first per node)."""
        out: dict[str, int] = {}
        for bs in self.nodes.values():
            for b in bs:
                out[b.plugin] = out.get(b.plugin, 0) + 1
        return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))

    def only(self, plugin: str) -> list[str]:
        """The nodes ``plugin`` alone rejects: removing that one blocker would free them."""
        return [n for n, bs in self.nodes.items() if len(bs) == 1 and bs[0].plugin == plugin]

    def rejecting(self, plugin: str) -> list[str]:
        return [n for n, bs in self.nodes.items() if any(b.plugin == plugin for b in bs)]

    def to_json(self, max_nodes: int | None = None) -> dict[str, Any]:
        """The document; with ``max_nodes``, only that many blocked nodes are listed, those
        with the fewest blockers (the closest to fitting) first (``nodesOmitted`` counts the rest)."""
        beyond = sum(1 for bs in self.nodes.values() for b in bs if not b.upstream)
        names = list(self.nodes)
        if max_nodes is not None and len(names) > max_nodes:
            names = sorted(names, key=lambda n: (len(self.nodes[n]), n))[:max_nodes]
        doc: dict[str, Any] = {
            "pod": self.pod, "feasibleNodes": self.fits, "blockedNodes": len(self.nodes),
            "rejectionsBeyondUpstream": beyond, "byPlugin": self.plugins(),
            "nodes": {n: [b.to_json() for b in self.nodes[n]] for n in names}}
        if len(names) < len(self.nodes):
            doc["nodesOmitted"] = len(self.nodes) - len(names)
        if self.errors:
            doc["errors"] = self.errors
        return doc


def _pre_filter(fw: Framework, state: CycleState, pod: Pod, table: NodeTable,
                out: Blockers) -> tuple[list[Blocker], dict[str, set[str]], set[str]]:
    """Every PreFilter plugin on its own: (rejections of every node, plugin -> the nodes its
    PreFilterResult keeps, plugins whose Filter must not run)."""
    rejected: list[Blocker] = []
    narrowed: dict[str, set[str]] = {}
    skip: set[str] = set()
    for pl in fw.pre_filter_plugins:
        r, st = as_pre_filter(call(pl, "PreFilter", pl.pre_filter, state, pod, table.infos), pl.name)
        if st.code == Code.Skip:
            skip.add(pl.name)
        elif st.rejected:
            rejected.append(Blocker(pl.name, st.code.name, st.reasons, PREFILTER))
            skip.add(pl.name)  # its Filter has no state to read
        elif not st.success:
            out.errors.append({"plugin": pl.name, "stage": PREFILTER, "message": st.message})
            skip.add(pl.name)
        elif r is not None and not r.all_nodes():
            narrowed[pl.name] = set(r.node_names or ())
    state.skip_filter_plugins = skip
    # upstream stops at the first UnschedulableAndUnresolvable PreFilter, else reports the last rejection
    decisive = next((b for b in rejected if b.code == Code.UnschedulableAndUnresolvable.name),
                    rejected[-1] if rejected else None)
    if decisive is not None:
        rejected = [decisive, *(b for b in rejected if b is not decisive)]
    return rejected, narrowed, skip


def _filter_rows(pl: Any, state: CycleState, pod: Pod, table: NodeTable,
                 nominated: dict[int, tuple[CycleState, NodeInfo]]) -> dict[int, Status]:
    """The rows ``pl`` rejects, with its per-node status (the batch form picks the rows).
    Rows in ``nominated`` are judged as upstream's RunFilterPluginsWithNominatedPods does:
    with the nominated pods of at least the pod's priority added, then without them."""
    rows: Sequence[int]
    if hasattr(pl, "filter_nodes"):
        mask = call(pl, "Filter", pl.filter_nodes, state, pod, table, table.all)
        rows = (np.nonzero(~np.asarray(mask, dtype=bool))[0].tolist() if not isinstance(mask, Status)
                else range(table.size))
    else:
        rows = range(table.size)
    out: dict[int, Status] = {}
    for i in sorted({*rows, *nominated}):
        st_state, ni = nominated.get(i, (state, table.infos[i]))
        st = as_status(call(pl, "Filter", pl.filter, st_state, pod, ni), "filter", pl.name)
        if st.success and i in nominated:
            st = as_status(call(pl, "Filter", pl.filter, state, pod, table.infos[i]), "filter", pl.name)
        if not st.success:
            out[i] = st.with_plugin(pl.name)
    return out


def _with_nominated(fw: Framework, state: CycleState, pod: Pod, table: NodeTable,
                    ) -> dict[int, tuple[CycleState, NodeInfo]]:
    """Per row holding nominated pods of at least the pod's priority: the state and node
    with them added (upstream addGENominatedPods)."""
    out: dict[int, tuple[CycleState, NodeInfo]] = {}
    for name, pods in fw.nominated_nodes().items():
        i = table.index.get(name)
        if i is None or not any(p.priority >= pod.priority and p.uid != pod.uid for p in pods):
            continue
        got = fw.nominated_state(state, pod, table.infos[i])
        if not isinstance(got, Status):
            out[i] = (got[1], got[2])
    return out


def find_blockers(fw: Framework, table: NodeTable, objects: ClusterObjects, pod: Pod,
                  storage: StorageLister | None = None, dra: DraLister | None = None) -> Blockers:
    """Every plugin's rejections of ``pod`` over ``table`` (the scheduler's snapshot table);
    ``storage``, ``dra``: what the volume plugins and DynamicResources read, for their evidence."""
    out = Blockers(pod.key)
    state = CycleState()
    state.write(PODS_TO_ACTIVATE, {})
    pre, narrowed, skip = _pre_filter(fw, state, pod, table, out)
    per_row: dict[int, list[Blocker]] = {}
    for name, keep in narrowed.items():
        reason = f"node(s) didn't satisfy plugin(s) [{name}]"
        for i, n in enumerate(table.names):
            if n not in keep:
                per_row.setdefault(i, []).append(Blocker(name, Code.UnschedulableAndUnresolvable.name,
                                                         (reason,), PREFILTER))
    ctx = EvidenceContext(pod, state, table.infos, objects, storage, dra)
    nominated = _with_nominated(fw, state, pod, table)
    for pl in fw.filter_plugins:
        if pl.name in skip:
            continue
        for i, st in _filter_rows(pl, state, pod, table, nominated).items():
            if st.code == Code.Error:
                out.errors.append({"plugin": pl.name, "stage": FILTER, "node": table.names[i],
                                   "message": st.message})
                continue
            ev = evidence(pl.name, ctx, nominated[i][1] if i in nominated else table.infos[i])
            if st.detail:  # a plugin's own account (DynamicResources: which request failed and why)
                ev = {**ev, "detail": st.detail}
            per_row.setdefault(i, []).append(Blocker(pl.name, st.code.name, st.reasons, FILTER, evidence=ev))
    for i, name in enumerate(table.names):
        bs = [*pre, *per_row.get(i, [])]
        if not bs:
            out.fits.append(name)
            continue
        first = bs[0]
        out.nodes[name] = [Blocker(first.plugin, first.code, first.reasons, first.stage, True, first.evidence),
                           *bs[1:]]
    return out
