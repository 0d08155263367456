"""kube-scheduler-simulator's result annotations, from one :class:`Attempt`.

KSS (kubernetes-sigs/kube-scheduler-simulator, ``simulator/scheduler/plugin/annotation`` and
``resultstore``) writes each pod's scheduling result as annotations; tools built for it and
plain ``kubectl get pod -o yaml`` read them. The keys and JSON value shapes, as KSS writes them:

    prefilter-result-status   {plugin: "success" | message}
    prefilter-result          {plugin: [node names]}            (PreFilterResult.NodeNames)
    filter-result             {node: {plugin: "passed" | reason}} (plugins up to the rejecting one)
    postfilter-result         {node: {plugin: "preemption victim"}} (the nominated node; others {})
    prescore-result           {plugin: "success" | message}
    score-result              {node: {plugin: "raw score"}}
    finalscore-result         {node: {plugin: "normalised score x weight"}}
    reserve-result, permit-result, prebind-result, bind-result   {plugin: "success" | message}
    permit-result-timeout     {plugin: "timeout"}
    selected-node             the node name
    result-history            [ {key: value, ...} per earlier attempt ]

Bounded: Kubernetes rejects an object whose annotations (keys plus values) exceed 256 KiB
(``TotalAnnotationSizeLimitB``). With 5,000 nodes the full filter and score maps are larger,
so over :data:`SMALL` nodes, or past ``budget`` bytes, the per-node maps are summarised: the selected node, the top-K nodes
by final score and a sample of rejected nodes per distinct reason stay; the rest is counted in
:data:`SUMMARY_KEY` (``{"summarised": true, "nodes": N, "shown": K, "rejectedByReason":
{"Plugin: reason": count}}``); the history keeps as many recent entries as fit.

What kubesched does not record per plugin it derives: PreFilter, PreScore, Reserve, Permit,
PreBind and Bind plugins that ran and did not reject are ``success``; a rejection names its
plugin with the attempt's message; points after a failure are absent (``{}``), as in KSS.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.explanation.attempt import NOT_EVALUATED, Attempt

PREFIX = "kube-scheduler-simulator.sigs.k8s.io/"
PREFILTER_STATUS = PREFIX + "prefilter-result-status"
PREFILTER = PREFIX + "prefilter-result"
FILTER = PREFIX + "filter-result"
POSTFILTER = PREFIX + "postfilter-result"
PRESCORE = PREFIX + "prescore-result"
SCORE = PREFIX + "score-result"
FINALSCORE = PREFIX + "finalscore-result"
RESERVE = PREFIX + "reserve-result"
PERMIT = PREFIX + "permit-result"
PERMIT_TIMEOUT = PREFIX + "permit-result-timeout"
PREBIND = PREFIX + "prebind-result"
BIND = PREFIX + "bind-result"
SELECTED_NODE = PREFIX + "selected-node"
HISTORY = PREFIX + "result-history"
SUMMARY_KEY = "kubesched.io/result-summary"  # ours: what a summary left out

TOTAL_ANNOTATION_LIMIT = 256 * 1024  # apimachinery TotalAnnotationSizeLimitB
DEFAULT_BUDGET = 200 * 1024  # ours, leaving room for the pod's own annotations
PASSED, SUCCESS, VICTIM = "passed", "success", "preemption victim"
TOP_K = 20
PER_REASON = 3
SMALL = 300  # nodes: above this, an attempt is summarised straight away
MAX_REASONS = 100  # distinct rejection reasons listed in a summary; the rest are "(other reasons)"


@dataclass(frozen=True, slots=True)
class ProfilePlugins:
    """The plugin names of one profile per extension point, in order."""

    pre_filter: tuple[str, ...] = ()
    filter: tuple[str, ...] = ()
    post_filter: tuple[str, ...] = ()
    pre_score: tuple[str, ...] = ()
    reserve: tuple[str, ...] = ()
    permit: tuple[str, ...] = ()
    pre_bind: tuple[str, ...] = ()
    bind: tuple[str, ...] = ()

    @classmethod
    def of(cls, points: Mapping[str, Sequence[Any]]) -> "ProfilePlugins":
        def names(point: str) -> tuple[str, ...]:
            return tuple(str(getattr(p, "name", p)) for p in points.get(point, ()))
        return cls(names("preFilter"), names("filter"), names("postFilter"), names("preScore"),
                   names("reserve"), names("permit"), names("preBind"), names("bind"))


def _dumps(v: Any) -> str:
    return json.dumps(v, separators=(",", ":"), sort_keys=True)


def _filter_map(verdict: Any, plugins: Sequence[str]) -> dict[str, str] | None:
    if verdict == "ok":
        return dict.fromkeys(plugins, PASSED)
    if verdict == NOT_EVALUATED or not isinstance(verdict, dict):
        return None
    failing = verdict.get("plugin")
    msg = ", ".join(verdict.get("reasons") or ()) or str(verdict.get("code"))
    out: dict[str, str] = {}
    for p in plugins:
        if p == failing:
            break
        out[p] = PASSED
    out[str(failing or "PreFilter")] = msg
    return out


def _point(plugins: Sequence[str], reached: bool, failing: str | None, message: str) -> dict[str, str]:
    if not reached:
        return {}
    out: dict[str, str] = {}
    for p in plugins:
        if p == failing:
            out[p] = message
            break
        out[p] = SUCCESS
    return out


class _Scores:
    """The attempt's scores per node: from the per-node maps of a small attempt, or straight
    from the score arrays (a large one), so that only the nodes kept are turned into maps."""

    def __init__(self, att: Attempt, small: bool) -> None:
        d = att.score_detail
        self.detail = None if small or d is None or d.totals is None else d
        if self.detail is None:
            doc = att.to_json()
            self.raw: dict[str, dict[str, int]] = doc.get("rawScores") or {}
            self.final: dict[str, dict[str, int]] = doc.get("scores") or {}
            self.totals: Mapping[str, int] = doc.get("totals") or {}
        else:
            self.index = {n: j for j, n in enumerate(self.detail.nodes)}

    def any(self) -> bool:
        return bool(self.final) if self.detail is None else bool(self.detail.nodes)

    def top(self, k: int) -> list[str]:
        if self.detail is None:
            return sorted(self.totals, key=lambda n: (-self.totals[n], n))[:k]
        d = self.detail
        assert d.totals is not None
        order = sorted(range(len(d.nodes)), key=lambda j: (-int(d.totals[j]), d.nodes[j]))  # type: ignore[index]
        return [d.nodes[j] for j in order[:k]]

    def maps(self, nodes: Sequence[str] | None) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
        """(score-result, finalscore-result) for ``nodes`` (None: every scored node)."""
        if self.detail is None:
            keep = None if nodes is None else set(nodes)
            return ({n: {p: str(v) for p, v in s.items()} for n, s in self.raw.items() if keep is None or n in keep},
                    {n: {p: str(v) for p, v in s.items()} for n, s in self.final.items()
                     if keep is None or n in keep})
        d = self.detail
        rows = [(n, self.index[n]) for n in (d.nodes if nodes is None else nodes) if n in self.index]
        raw = {n: {p: str(int(a[j])) for p, a in d.raw.items()} for n, j in rows}
        final = {n: {p: str(int(a[j])) for p, a in d.weighted.items()} for n, j in rows}
        return raw, final


def result_annotations(att: Attempt, plugins: ProfilePlugins, history: Sequence[Mapping[str, str]] = (),
                       budget: int = DEFAULT_BUDGET, top_k: int = TOP_K) -> dict[str, str]:
    """KSS's annotations for ``att`` (``history``: earlier results, oldest first), at most
    ``budget`` bytes of keys and values in all. Attempts over more than ``SMALL`` nodes are
    summarised at once (their full maps cannot fit), without building the full maps."""
    filt: dict[str, Any] = att.filter
    small = len(filt) <= SMALL
    scores = _Scores(att, small)
    failing = next(iter(sorted(att.unschedulable_plugins)), None)
    pre_status: dict[str, str] = {}
    if filt and all(isinstance(v, dict) and v.get("plugin") in (None, "") for v in filt.values()):
        pre_status = _point(plugins.pre_filter, True, failing, att.message or "")  # PreFilter rejected
    elif filt:
        pre_status = dict.fromkeys(plugins.pre_filter, SUCCESS)
    chosen = att.chosen or ""
    after_filter = bool(chosen)
    bound = att.result == "Scheduled"
    late_fail = att.result in ("Unschedulable", "Error") and not chosen and failing in (
        set(plugins.reserve) | set(plugins.permit) | set(plugins.pre_bind) | set(plugins.bind))
    msg = att.message or ""
    post: dict[str, dict[str, str]] = {}
    for c in (att.preemption or {}).get("candidates") or ():
        post[c["node"]] = {}
    if att.nominated_node:
        post.setdefault(att.nominated_node, {})[plugins.post_filter[0] if plugins.post_filter
                                                else "DefaultPreemption"] = VICTIM
    filter_maps = {n: m for n, v in filt.items() if (m := _filter_map(v, plugins.filter)) is not None}
    out = {
        PREFILTER_STATUS: _dumps(pre_status),
        PREFILTER: _dumps({}),
        POSTFILTER: _dumps(post),
        PRESCORE: _dumps(dict.fromkeys(plugins.pre_score, SUCCESS) if scores.any() else {}),
        RESERVE: _dumps(_point(plugins.reserve, after_filter or late_fail, failing if late_fail else None, msg)),
        PERMIT: _dumps(_point(plugins.permit, bound or (late_fail and failing not in plugins.reserve),
                              failing if late_fail else None, msg)),
        PERMIT_TIMEOUT: _dumps({}),
        PREBIND: _dumps(_point(plugins.pre_bind, bound, None, msg)),
        BIND: _dumps(_point(plugins.bind, bound, None, msg)),
        SELECTED_NODE: chosen,
    }
    full: dict[str, str] = {}
    if small:
        raw, final = scores.maps(None)
        full = {**out, FILTER: _dumps(filter_maps), SCORE: _dumps(raw), FINALSCORE: _dumps(final)}
    if not small or _size(full) > budget:
        full = {**out, **_summarised(filter_maps, scores, chosen, top_k)}
    return _with_history(full, history, budget)


def _size(ann: Mapping[str, str]) -> int:
    return sum(len(k.encode()) + len(v.encode()) for k, v in ann.items())


def _summarised(filter_maps: dict[str, dict[str, str]], scores: _Scores, chosen: str,
                top_k: int) -> dict[str, str]:
    """The per-node maps cut down to the chosen node, the top-K by total and a few rejected
    nodes per reason; the summary says what was left out."""
    keep = set(scores.top(top_k)) | ({chosen} if chosen else set())
    by_reason: dict[str, int] = {}
    sample: dict[str, int] = {}
    for node, m in filter_maps.items():
        if len(m) == 0:
            continue
        last_plugin, last = next(reversed(m.items()))
        if last == PASSED:
            continue
        key = f"{last_plugin}: {last}"
        if key not in by_reason and len(by_reason) >= MAX_REASONS:
            key = "(other reasons)"
        by_reason[key] = by_reason.get(key, 0) + 1
        if sample.get(key, 0) < PER_REASON:
            sample[key] = sample.get(key, 0) + 1
            keep.add(node)
    raw, final = scores.maps(sorted(keep))
    summary = {"summarised": True, "nodes": len(filter_maps), "shown": len(keep & set(filter_maps)),
               "scoresShown": f"top {top_k} by final score", "rejectedByReason": by_reason}
    return {
        FILTER: _dumps({n: m for n, m in filter_maps.items() if n in keep}),
        SCORE: _dumps(raw),
        FINALSCORE: _dumps(final),
        SUMMARY_KEY: _dumps(summary),
    }


def _with_history(ann: dict[str, str], history: Sequence[Mapping[str, str]], budget: int) -> dict[str, str]:
    """``result-history``: the earlier results then this one, oldest dropped to fit."""
    entries = [dict(h) for h in history] + [{k: v for k, v in ann.items() if k != HISTORY}]
    while entries:
        ann[HISTORY] = _dumps(entries)
        if _size(ann) <= budget or len(entries) == 1:
            break
        entries.pop(0)
    if _size(ann) > budget:  # even one entry is too much: the history repeats the result, drop it
        ann[HISTORY] = _dumps([])
    return ann
