"""DefaultPreemption: the PostFilter plugin that makes room for a pod by evicting
lower-priority pods (upstream ``plugins/defaultpreemption``).

The plugin evicts the victims and clears the nominations of lower-priority pods nominated
to the chosen node through its handle, and returns that node and the victims in a
PostFilterResult; the scheduler nominates the pod. The machinery lives in
:mod:`kubesched.plugins.preemption`. Asynchronous preemption (and so PreEnqueue and
events to register) is not implemented: with it off upstream's PreEnqueue always admits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.api.objects import Pod
from kubesched.api.policy import PodDisruptionBudget
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import PostFilterResult
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names
from kubesched.plugins.preemption import args as preemption_args
from kubesched.plugins.preemption.args import DefaultPreemptionArgs
from kubesched.plugins.preemption.evaluator import Evaluator, PreemptionExplanation
from kubesched.plugins.preemption.ordering import StartTimes
from kubesched.plugins.preemption.pdb import disruptions_allowed
from kubesched.plugins.preemption.victims import select_victims_on_node as _select_victims

__all__ = ["DefaultPreemption", "DefaultPreemptionArgs", "PreemptionExplanation",
           "select_victims_on_node"]


class DefaultPreemption:
    name = names.DEFAULT_PREEMPTION

    def __init__(self, args: DefaultPreemptionArgs | Mapping[str, Any] | None, handle: Any) -> None:
        if not isinstance(args, DefaultPreemptionArgs):
            args = preemption_args.parse_args(args, "")
        else:
            preemption_args.validate(args)
        self.args = args
        self.handle = handle
        self.evaluator = Evaluator(handle, args)

    @staticmethod
    def parse_args(raw: Mapping[str, Any] | None, path: str) -> DefaultPreemptionArgs:
        return preemption_args.parse_args(raw, path)

    def post_filter(self, state: CycleState, pod: Pod,
                    filtered: Mapping[str, Status]) -> tuple[PostFilterResult | None, Status]:
        result, status = self.evaluator.preempt(state, pod, filtered)
        if status.message:
            status = Status(status.code, (f"preemption: {status.message}",), status.plugin)
        return result, status

    def pod_eligible_to_preempt_others(self, pod: Pod, nominated_status: Status | None = None,
                                       ) -> tuple[bool, str]:
        return self.evaluator.pod_eligible_to_preempt_others(pod, nominated_status)

    def calculate_num_candidates(self, num_nodes: int) -> int:
        return self.evaluator.calculate_num_candidates(num_nodes)

    def select_victims_on_node(self, state: CycleState, pod: Pod, node_info: NodeInfo,
                               pdbs: Sequence[PodDisruptionBudget] = ()) -> tuple[list[Pod], int, Status]:
        """Upstream's SelectVictimsOnNode on copies of ``state`` and ``node_info``."""
        return select_victims_on_node(self.handle, state, pod, node_info, pdbs)


def select_victims_on_node(handle: Any, state: CycleState, pod: Pod, node_info: NodeInfo,
                           pdbs: Sequence[PodDisruptionBudget] = ()) -> tuple[list[Pod], int, Status]:
    """Victims on one node (most important first), their number of PDB violations and the
    status, as upstream's SelectVictimsOnNode, working on copies of ``state`` and
    ``node_info`` through ``handle.framework``. PDBs without a status get their budget
    computed from the snapshot's pods (see :mod:`kubesched.plugins.preemption.pdb`)."""
    bound = [p for ni in handle.snapshot.node_infos for p in ni.pods]
    allowed = [disruptions_allowed(pdb, bound) for pdb in pdbs]
    return _select_victims(handle.framework, state.clone(), pod, node_info.clone(), pdbs, allowed,
                           StartTimes())
