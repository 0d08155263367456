"""What the fix search asks of a scheduler: "where would this pod land if ...?".

The search (:mod:`.fixes`) proposes changes; every one is checked by the real scheduler,
never estimated. This module states what that needs, as a Protocol the scheduler layer
implements (:mod:`kubesched.scheduler.whatif`): a dry scheduling cycle of a (possibly
changed) pod on the current state, every blocker of a pod, and temporary changes of the
scheduler's cache (nodes added or changed, pods removed or added) undone on exit.

It also holds the JSON patches the fixes are written as (RFC 6902, what
``kubectl patch --type=json`` takes) and the pod a patch makes.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from kubesched.api.errors import DecodeError
from kubesched.api.objects import Node, Pod
from kubesched.api.policy import PriorityClass
from kubesched.explanation.blockers import Blockers
from kubesched.framework.interface import ClusterObjects
from kubesched.framework.types import NodeInfo

Patch = list[dict[str, Any]]  # JSON patch operations


@dataclass(frozen=True, slots=True)
class Landing:
    """A dry cycle's outcome: the node the pod lands on (None: none), or with preemption
    the node it would be nominated to and the victims; the scheduler's message."""

    node: str | None
    nominated: str | None = None
    victims: tuple[Pod, ...] = ()
    message: str = ""


class WhatIf(Protocol):
    """A scheduler the fix search may question (see the module docstring)."""

    objects: ClusterObjects
    priority_classes: Sequence[PriorityClass]

    def try_pod(self, pod: Pod, *, preempt: bool = False) -> Landing: ...

    def blockers(self, pod: Pod) -> Blockers: ...

    def node_infos(self) -> Sequence[NodeInfo]: ...

    def pending(self) -> Sequence[Pod]: ...

    def changed(self, *, add_nodes: Sequence[Node] = (), set_nodes: Sequence[Node] = (),
                remove_pods: Sequence[Pod] = (), add_pods: Sequence[Pod] = ()) -> AbstractContextManager[None]: ...


def _pointer(path: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]


def apply_patch(doc: dict[str, Any], ops: Patch) -> dict[str, Any]:
    """``doc`` with the JSON patch ``ops`` applied (add, remove, replace), as a new object."""
    out = copy.deepcopy(doc)
    for op in ops:
        *parents, last = _pointer(op["path"])
        cur: Any = out
        for p in parents:
            cur = cur[int(p)] if isinstance(cur, list) else cur.setdefault(p, {})
        kind = op["op"]
        if isinstance(cur, list):
            i = len(cur) if last == "-" else int(last)
            if kind == "add":
                cur.insert(i, copy.deepcopy(op["value"]))
            elif kind == "remove":
                del cur[i]
            else:
                cur[i] = copy.deepcopy(op["value"])
        elif kind == "remove":
            del cur[last]
        else:
            cur[last] = copy.deepcopy(op["value"])
    return out


def patched_pod(pod: Pod, ops: Patch) -> Pod | None:
    """``pod`` with ``ops`` applied, decoded and validated as a new pod would be (same uid
    and arrival order); None when the result is not a valid pod."""
    raw = apply_patch(pod.raw, ops)
    status = raw.get("status")
    if isinstance(status, dict):
        status.pop("nominatedNodeName", None)
    try:
        new = Pod.from_dict(raw, require_limits=False)
    except DecodeError:
        return None
    return dataclasses.replace(new, seq=pod.seq)


def unbound(pod: Pod) -> Pod:
    """``pod`` as the pending pod its controller would recreate (no node, no status)."""
    raw = copy.deepcopy(pod.raw)
    (raw.get("spec") or {}).pop("nodeName", None)
    raw["status"] = {"phase": "Pending"}
    return dataclasses.replace(pod, raw=raw, node_name="", start_time="", phase="Pending",
                               nominated_node_name="", extra={})


def bound(pod: Pod, node: str) -> Pod:
    """``pod`` bound to ``node``, as the cache holds a bound pod."""
    raw = copy.deepcopy(pod.raw)
    raw.setdefault("spec", {})["nodeName"] = node
    return dataclasses.replace(pod, raw=raw, node_name=node, nominated_node_name="", extra={})
