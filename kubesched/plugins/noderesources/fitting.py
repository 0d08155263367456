"""Does a pod's request fit a node? (upstream ``fitsRequest`` in ``noderesources/fit.go``).

Shared by NodeResourcesFit's Filter (per node and batch) and its queueing hints. The
checks, in upstream's order: the pod count ("Too many pods"), then cpu, memory and
ephemeral-storage (only when requested), then each non-zero scalar request not ignored
by ``ignoredResources``/``ignoredResourceGroups`` (only extended resources can be ignored).
A shortage is UnschedulableAndUnresolvable when the request exceeds the node's whole
allocatable (preemption cannot help), Unschedulable otherwise; "Too many pods" is always
Unschedulable. Scalar resources are checked in name order (upstream iterates a Go map,
so its order is unspecified).

With DRAExtendedResource, a request in ``to_dra`` (a DeviceClass maps it) is not checked on
a node whose allocatable has none of it: DynamicResources allocates devices for it there
(upstream ``shouldDelegateResourceToDRA``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from kubesched.api.objects import Pod
from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.framework.types import NodeInfo
from kubesched.plugins.noderesources.validation import is_extended_resource_name

TOO_MANY_PODS = "Too many pods"
_NATIVE = (CPU, MEMORY, EPHEMERAL_STORAGE)


@dataclass(frozen=True, slots=True)
class PodRequest:
    """The pod's request as upstream's preFilterState (``framework.Resource``)."""

    milli_cpu: int
    memory: int
    ephemeral_storage: int
    scalars: tuple[tuple[str, int], ...]  # every scalar resource, zero-valued ones included
    checks: tuple[tuple[str, int], ...]  # what fitsRequest compares, in order
    to_dra: frozenset[str] = frozenset()  # checks left to DRA where the node has none

    def clone(self) -> "PodRequest":
        return self

    @property
    def empty(self) -> bool:
        return not (self.milli_cpu or self.memory or self.ephemeral_storage or self.scalars)


def compute_pod_request(pod: Pod, ignored: Iterable[str] = (),
                        ignored_groups: Iterable[str] = ()) -> PodRequest:
    """``computePodResourceRequest`` plus the list of checks after the ignore rules."""
    r = pod.requests
    ignored = frozenset(ignored)
    groups = frozenset(ignored_groups)
    scalars = tuple(sorted((n, v) for n, v in r.items() if n not in _NATIVE and n != PODS))
    checks: list[tuple[str, int]] = [(n, r.get(n, 0)) for n in _NATIVE if r.get(n, 0) > 0]
    for name, q in scalars:
        if q == 0:
            continue
        if is_extended_resource_name(name) and (
                name in ignored or (groups and name.split("/")[0] in groups)):
            continue
        checks.append((name, q))
    return PodRequest(r.get(CPU, 0), r.get(MEMORY, 0), r.get(EPHEMERAL_STORAGE, 0), scalars, tuple(checks))


def insufficient(req: PodRequest, ni: NodeInfo) -> tuple[list[str], bool]:
    """The failure reasons in upstream's order, and whether any is unresolvable."""
    alloc = ni.allocatable
    used = ni.requested
    reasons: list[str] = []
    unresolvable = False
    if len(ni.pods) + 1 > alloc.get(PODS, 0):
        reasons.append(TOO_MANY_PODS)
    for name, q in req.checks:
        a = alloc.get(name, 0)
        if a <= 0 and name in req.to_dra:
            continue
        if q > a - used.get(name, 0):
            reasons.append(f"Insufficient {name}")
            unresolvable = unresolvable or q > a
    return reasons, unresolvable


def fits_status(req: PodRequest, ni: NodeInfo) -> Status:
    reasons, unresolvable = insufficient(req, ni)
    if not reasons:
        return SUCCESS
    code = Code.UnschedulableAndUnresolvable if unresolvable else Code.Unschedulable
    return Status(code, tuple(reasons))


def fits_nodes(req: PodRequest, table: NodeTable, idx: np.ndarray) -> np.ndarray:
    """Batch form: True where the pod fits, for rows ``idx``."""
    ok: np.ndarray = np.asarray(table.pod_count[idx] + 1 <= table.allocatable(PODS)[idx])
    for name, q in req.checks:
        alloc = table.alloc.get(name)
        used = table.req.get(name)
        cap = alloc[idx] if alloc is not None else np.zeros(idx.size, dtype=np.int64)
        free = cap - (used[idx] if used is not None else 0)
        if name in req.to_dra:
            ok &= (q <= free) | (cap <= 0)
        else:
            ok &= q <= free
    return ok
