"""What one run of the scheduling algorithm returns, as values (upstream ``schedule_one.go``
``ScheduleResult`` and ``framework/types.go`` ``FitError``/``Diagnosis``/``NodeToStatus``).

:meth:`~kubesched.scheduler.schedule_one.SchedulingCycle.schedule_pod` returns a
:class:`ScheduleResult`, or raises :class:`FitError` (no node fits: the diagnosis says why,
node by node) or :class:`CycleError` (a plugin or extender failed: the attempt is an
error). The scheduling cycle turns these into the pod's next state; recording
(``explain``, metrics) reads them and never writes into them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kubesched.api.objects import Pod
from kubesched.framework.status import Status
from kubesched.scheduler.fiterror import fit_error_message


@dataclass(frozen=True, slots=True, kw_only=True)
class ScheduleResult:
    """The node chosen for a pod, how many nodes were evaluated and how many passed."""

    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int


@dataclass(slots=True)
class NodeToStatus:
    """Upstream ``NodeToStatus``: the rejecting status of each evaluated node, and the one
    status every node a PreFilter ruled out (``absent_names``) shares."""

    statuses: dict[str, Status] = field(default_factory=dict)
    absent_status: Status | None = None
    absent_names: Sequence[str] = ()

    def all(self) -> dict[str, Status]:
        """Every node's status, the absent nodes' included (what PostFilter reads)."""
        full = dict(self.statuses)
        if self.absent_status is not None:
            for n in self.absent_names:
                full.setdefault(n, self.absent_status)
        return full

    def __len__(self) -> int:
        return len(self.statuses)


@dataclass(slots=True)
class Diagnosis:
    """Why no node fits (upstream ``framework.Diagnosis``): the statuses, the plugins that
    rejected (they decide which cluster events requeue the pod), those that asked to wait
    (``Pending``), and the PreFilter and PostFilter messages."""

    node_to_status: NodeToStatus = field(default_factory=NodeToStatus)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""


class FitError(Exception):
    """No node fits the pod (upstream ``framework.FitError``); the message is upstream's
    ``0/N nodes are available: …`` and includes PostFilter's once it ran."""

    def __init__(self, pod: Pod, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__(pod.key)
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def __str__(self) -> str:
        d = self.diagnosis
        nts = d.node_to_status
        return fit_error_message(self.num_all_nodes, nts.statuses, nts.absent_status, len(nts.absent_names),
                                 d.pre_filter_msg, d.post_filter_msg)


class CycleError(Exception):
    """The algorithm failed for this pod: a plugin returned Error, an extender failed, or
    there is no node at all (upstream's errors other than FitError). The attempt ends as an
    error and the pod is retried after backoff."""
