"""DaemonSet rolling updates with ``maxSurge`` (upstream ``pkg/controller/daemon/update.go``
``rollingUpdate``'s surge branch and ``podsShouldBeOnNode``): a new pod is started beside
an available old one, on at most ``maxSurge`` nodes at once (nodes whose old pod is not
available get theirs at once, without counting), and the old pod is deleted once the new
one is available. Of two pods on one node, the pair (oldest new, oldest old) is kept only
while the new one is not yet available and the old one is ready. Pure functions over the
pods of one node; :mod:`.daemonset` applies their answers.
"""

from __future__ import annotations

from collections.abc import Callable

from kubesched.server.controllers.base import meta
from kubesched.server.controllers.daemonutil import REVISION_LABEL
from kubesched.server.controllers.informer import Obj

Avail = Callable[[Obj], bool]


def _is_new(pod: Obj, revision: str) -> bool:
    return (meta(pod).get("labels") or {}).get(REVISION_LABEL) == revision


def excess(pods: list[Obj], revision: str, surge: bool, ready: Avail, avail: Avail) -> list[Obj]:
    """Which of a node's running daemon pods (oldest first) to delete."""
    if len(pods) < 2:
        return []
    if not surge:
        return pods[1:]
    oldest_new = next((p for p in pods if _is_new(p, revision)), None)
    oldest_old = next((p for p in pods if not _is_new(p, revision)), None)
    out = [p for p in pods if p is not oldest_new and p is not oldest_old]
    if oldest_new is not None and oldest_old is not None and (not ready(oldest_old) or avail(oldest_new)):
        out.append(oldest_old)
    return out


def surge_plan(nodes: dict[str, list[Obj]], revision: str, max_surge: int,
               avail: Avail) -> tuple[list[Obj], list[str]]:
    """(old pods to delete, nodes to create a new pod on) for one surge step; ``nodes``:
    the running daemon pods of each node that should run one, oldest first."""
    delete: list[Obj] = []
    allowed: list[str] = []
    candidates: list[str] = []
    surging = 0
    for node, pods in sorted(nodes.items()):
        new = next((p for p in pods if _is_new(p, revision)), None)
        old = next((p for p in pods if not _is_new(p, revision)), None)
        if len(pods) > 2 or (len(pods) == 2 and (new is None or old is None)):
            surging += 1  # the manage step cleans this node up first
        elif old is None:
            continue
        elif new is None:
            if not avail(old):
                allowed.append(node)
            elif surging < max_surge:
                candidates.append(node)
        elif not avail(new):
            surging += 1
        else:
            delete.append(old)
    remaining = min(max(0, max_surge - surging), len(candidates))
    return delete, allowed + candidates[:remaining]
