"""PodDisruptionBudget accounting for preemption (upstream
``defaultpreemption.filterPodsWithPDBViolation``), and a stand-in for the disruption
controller's ``status.disruptionsAllowed``.

Upstream reads ``status.disruptionsAllowed``, which the disruption controller keeps
current. kubesched runs no disruption controller, so for a PDB given without a status
:func:`disruptions_allowed` computes it the way the controller does
(``pkg/controller/disruption``) from the pods it is given. The plugin gives it the bound
pods of the current snapshot; a driver that wants the budget fixed once from the initial
pods (as the fidelity harness ran upstream) fills ``disruptions_allowed`` at load time
with this same function. The rules:

- the PDB's pods are the pods of its namespace its selector matches (a nil selector
  matches nothing, an empty one every pod, as the controller's pod lister does);
- currentHealthy counts those pods that are not being deleted (every bound pod counts
  as Ready: kubesched has no kubelet);
- with an integer ``minAvailable``: desiredHealthy = minAvailable, expectedPods = number
  of pods; with a percentage ``minAvailable`` or any ``maxUnavailable``, expectedPods is
  the summed scale of the pods' controllers upstream, for which kubesched uses the number
  of pods; percentages round up (``GetScaledValueFromIntOrPercent(..., true)``) and
  desiredHealthy = expectedPods - maxUnavailable, floored at 0; with neither set,
  expectedPods = desiredHealthy = 0;
- disruptionsAllowed = currentHealthy - desiredHealthy, or 0 when that is negative or
  when expectedPods <= 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kubesched.api.objects import Pod
from kubesched.api.policy import PodDisruptionBudget


def _scaled(value: int | str, total: int) -> int:
    """``intstr.GetScaledValueFromIntOrPercent`` with rounding up."""
    if isinstance(value, int):
        return value
    pct = int(value[:-1])
    return -(-pct * total // 100)  # ceil for non-negative operands


def pdb_pods(pdb: PodDisruptionBudget, pods: Iterable[Pod]) -> list[Pod]:
    """The pods the disruption controller would count for ``pdb``."""
    return [p for p in pods if p.namespace == pdb.namespace and pdb.selector.matches(p.labels)]


def disruptions_allowed(pdb: PodDisruptionBudget, pods: Iterable[Pod]) -> int:
    """``status.disruptionsAllowed`` when given, otherwise computed as the controller does."""
    if pdb.disruptions_allowed is not None:
        return pdb.disruptions_allowed
    matched = pdb_pods(pdb, pods)
    healthy = sum(1 for p in matched if p.deletion_timestamp is None)
    if pdb.max_unavailable is not None:
        expected = len(matched)
        desired = max(expected - _scaled(pdb.max_unavailable, expected), 0)
    elif pdb.min_available is not None:
        expected = len(matched)
        desired = _scaled(pdb.min_available, expected)
    else:
        expected = desired = 0
    allowed = healthy - desired
    if expected <= 0 or allowed <= 0:
        return 0
    return allowed


def _selects(pdb: PodDisruptionBudget, pod: Pod) -> bool:
    """Preemption's matching: same namespace, and a nil or empty selector matches nothing."""
    if pdb.namespace != pod.namespace:
        return False
    sel = pdb.selector
    if sel.nothing or sel.empty:
        return False
    return sel.matches(pod.labels)


def filter_pods_with_pdb_violation(pods: Sequence[Pod], pdbs: Sequence[PodDisruptionBudget],
                                   allowed: Sequence[int]) -> tuple[list[Pod], list[Pod]]:
    """Split ``pods`` (kept in order) into those whose eviction would take a matching
    PDB's remaining budget below zero and the others. ``allowed[i]`` is ``pdbs[i]``'s
    disruptionsAllowed; each matching pod uses one unit of every PDB it matches, except
    a pod the PDB already lists in ``status.disruptedPods``."""
    budget = list(allowed)
    violating: list[Pod] = []
    non_violating: list[Pod] = []
    for pod in pods:
        violated = False
        if pod.labels:  # a pod without labels matches no PDB
            for i, pdb in enumerate(pdbs):
                if not _selects(pdb, pod) or pod.name in _disrupted_pods(pdb):
                    continue
                budget[i] -= 1
                if budget[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pod)
    return violating, non_violating


def _disrupted_pods(pdb: PodDisruptionBudget) -> frozenset[str]:
    """Names in ``status.disruptedPods`` (already being evicted: they use no budget).
    Read defensively: the PodDisruptionBudget object may not carry them."""
    names = getattr(pdb, "disrupted_pods", None)
    return frozenset(names) if names else frozenset()
