"""Scheduler extenders as the scheduling core sees them (upstream ``framework.Extender``).

The core does no I/O, so it only knows this protocol and the rules around it: which pods
an extender is interested in (``managedResources``), how its Filter verdicts become
statuses, how its scores are scaled. The HTTP client (``kubesched.cluster.extender``)
implements :class:`Extender` and is handed to the scheduler by simulate, serve and run.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kubesched.api.objects import Node, Pod
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo

log = logging.getLogger(__name__)

# upstream extender/v1 MaxExtenderPriority and framework MaxNodeScore
MAX_EXTENDER_PRIORITY = 10
MAX_NODE_SCORE = 100
EXTENDER_STAGE = "Extender"


class ExtenderError(Exception):
    """An extender call failed (transport, HTTP status, or a non-empty ``Error``); the
    message is upstream's error text for it."""


@dataclass
class ExtenderFilterResult:
    """Upstream ``ExtenderFilterResult`` after the client read it: ``nodes`` are the
    Node objects it returned (nodeCacheCapable false) or None; ``node_names`` the names
    (nodeCacheCapable true) or None."""

    nodes: list[Node] | None = None
    node_names: list[str] | None = None
    failed: dict[str, str] = field(default_factory=dict)
    failed_unresolvable: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Victims:
    """Upstream extender/v1 ``Victims``: the pods to evict on a node, and how many of
    those evictions violate a PodDisruptionBudget."""

    pods: tuple[Pod, ...]
    num_pdb_violations: int = 0


class Extender(Protocol):
    """One configured extender. ``name`` is its urlPrefix (upstream ``Name()``)."""

    @property
    def name(self) -> str: ...

    @property
    def weight(self) -> int: ...

    @property
    def ignorable(self) -> bool: ...

    @property
    def node_cache_capable(self) -> bool: ...

    @property
    def is_filter(self) -> bool: ...

    @property
    def is_prioritizer(self) -> bool: ...

    @property
    def is_binder(self) -> bool: ...

    def is_interested(self, pod: Pod) -> bool: ...

    def filter(self, pod: Pod, nodes: Sequence[Node]) -> ExtenderFilterResult: ...

    def prioritize(self, pod: Pod, nodes: Sequence[Node]) -> dict[str, int]: ...

    def bind(self, pod: Pod, node: str) -> None: ...

    @property
    def supports_preemption(self) -> bool: ...

    def process_preemption(self, pod: Pod, victims: Mapping[str, Victims],
                           node_info: Callable[[str], NodeInfo | None]) -> dict[str, Victims]: ...


def interested(managed: Iterable[str], pod: Pod) -> bool:
    """Upstream ``IsInterested``: no managed resources means every pod; otherwise a pod
    requesting or limiting one of them in a container or an init container."""
    names = set(managed)
    if not names:
        return True
    for c in (*pod.containers, *pod.init_containers):
        if names & set(c.requests) or names & set(c.limits):
            return True
    return False


def apply_filter_verdicts(statuses: dict[str, Status], ext: str, result: ExtenderFilterResult) -> None:
    """Upstream ``findNodesThatPassExtenders`` (v1.34, NodeToStatus.Set): each rejected
    node gets a status with the extender's message as its only reason; a node in both
    maps is unresolvable."""
    for node, msg in result.failed_unresolvable.items():
        statuses[node] = Status(Code.UnschedulableAndUnresolvable, (msg,), ext)
    for node, msg in result.failed.items():
        if node not in result.failed_unresolvable:
            statuses[node] = Status(Code.Unschedulable, (msg,), ext)


def run_extender_filters(extenders: Sequence[Extender], pod: Pod, feasible: list[NodeInfo],
                         statuses: dict[str, Status],
                         timings: dict[str, float] | None = None) -> list[NodeInfo]:
    """Upstream ``findNodesThatPassExtenders``: each interested filter extender, in
    config order, on the previous one's survivors. Nodes an extender returns as objects
    (nodeCacheCapable false) become fresh NodeInfos without pods, as upstream builds them;
    names (nodeCacheCapable true) map back to the given NodeInfos. Raises
    :class:`ExtenderError` for a failing extender that is not ignorable."""
    for ext in extenders:
        if not feasible:
            break
        if not ext.is_filter or not ext.is_interested(pod):
            continue
        started = time.perf_counter()
        try:
            result = ext.filter(pod, [ni.node for ni in feasible if ni.node is not None])
        except ExtenderError as exc:
            if ext.ignorable:
                log.warning("extender %s (ignorable) failed to filter pod %s, skipped: %s", ext.name, pod.key, exc)
                continue
            raise
        finally:
            if timings is not None:
                timings[f"{ext.name} filter"] = time.perf_counter() - started
        apply_filter_verdicts(statuses, ext.name, result)
        if result.node_names is not None and ext.node_cache_capable:
            by_name = {ni.name: ni for ni in feasible}
            feasible = [by_name[n] for n in result.node_names]
        else:
            feasible = [NodeInfo(n) for n in (result.nodes or [])]
    return feasible


def run_extender_prioritize(extenders: Sequence[Extender], pod: Pod, nodes: Sequence[Node],
                            timings: dict[str, float] | None = None) -> dict[str, dict[str, int]]:
    """Upstream prioritizeNodes' extender part: per extender name, the scaled score per
    host. A Prioritize error is ignored (upstream logs it and lets the others decide)."""
    out: dict[str, dict[str, int]] = {}
    for ext in extenders:
        if not ext.is_prioritizer or not ext.is_interested(pod):
            continue
        started = time.perf_counter()
        try:
            scores = ext.prioritize(pod, nodes)
        except ExtenderError as exc:
            log.warning("extender %s failed to prioritize pod %s, its scores left out: %s", ext.name, pod.key, exc)
            continue
        finally:
            if timings is not None:
                timings[f"{ext.name} prioritize"] = time.perf_counter() - started
        out[ext.name] = scaled_scores(scores, ext.weight)
    return out


def scaled_scores(scores: Mapping[str, int], weight: int) -> dict[str, int]:
    """Upstream prioritizeNodes: ``score × weight × (MaxNodeScore / MaxExtenderPriority)``."""
    factor = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
    return {host: s * weight * factor for host, s in scores.items()}


def run_extender_preemption(extenders: Sequence[Extender], pod: Pod, victims: dict[str, Victims],
                            node_info: Callable[[str], NodeInfo | None]) -> dict[str, Victims]:
    """Upstream ``Evaluator.callExtenders``: each interested preempt extender, in order,
    may drop candidate nodes or change their victims; a node left with no victims is an
    error (dropped for an ignorable extender). Raises :class:`ExtenderError`."""
    if not victims:
        return victims
    for ext in extenders:
        if not ext.supports_preemption or not ext.is_interested(pod):
            continue
        try:
            result = ext.process_preemption(pod, victims, node_info)
        except ExtenderError as exc:
            if ext.ignorable:
                log.warning("extender %s (ignorable) failed preemption for pod %s, skipped: %s", ext.name, pod.key, exc)
                continue
            raise
        for node in list(result):
            if not result[node].pods:
                if ext.ignorable:
                    del result[node]
                    continue
                raise ExtenderError(f'expected at least one victim pod on node "{node}"')
        victims = result
        if not victims:
            break
    return victims
