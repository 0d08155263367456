"""The preemption Evaluator (upstream ``framework/preemption.Evaluator.Preempt``): it
decides the node to nominate and the victims, then evicts them and clears the nominations
of lower-priority pods on that node through the handle (``prepareCandidate``); the
scheduler nominates the pod.

    eligible?  ──no──▶ Unschedulable "not eligible due to ..."
       │
    nodes whose Filter status is Unschedulable (UnschedulableAndUnresolvable ones are
    "Preemption is not helpful for scheduling")
       │
    dry run from an offset (0 with --tie-break name, else random) until enough
    candidates: numCandidates, at least one of them violating no PDB
       │
    no candidate ──▶ Unschedulable "0/N nodes are available: <reasons>." (a FitError)
       │
    best candidate (pickOneNodeForPreemption) ──▶ victims evicted ──▶ Success, nominate

The candidates and the final tie set travel in the PostFilterResult
(:class:`PreemptionExplanation`), for ``explain``. The handle's writes do nothing in a
dry run (``explain --fix``'s what-ifs, the shadow), so the same code serves both.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api.objects import Pod
from kubesched.api.policy import PodDisruptionBudget
from kubesched.framework.extender import ExtenderError, Victims, run_extender_preemption
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import PostFilterResult
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names
from kubesched.plugins.preemption.args import DefaultPreemptionArgs
from kubesched.plugins.preemption.ordering import Candidate, StartTimes, choose_from_ties, pick_tie_set
from kubesched.plugins.preemption.pdb import disruptions_allowed
from kubesched.plugins.preemption.victims import preemption_allowed, select_victims_on_node

log = logging.getLogger(__name__)

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NEVER = "not eligible due to preemptionPolicy=Never."
TERMINATING = "not eligible due to a terminating pod on the nominated node."
_ABSENT = Status(Code.UnschedulableAndUnresolvable)


@dataclass(frozen=True, slots=True)
class PreemptionExplanation:
    """What the dry run found: every candidate, and the nodes tied after all criteria."""

    candidates: tuple[Candidate, ...]
    tie_set: tuple[str, ...]



def terminating_by_preemption(p: Pod) -> bool:
    """Being deleted, with the DisruptionTarget condition the scheduler sets on victims."""
    if p.deletion_timestamp is None:
        return False
    for cond in ((p.raw.get("status") or {}).get("conditions") or ()):
        if isinstance(cond, Mapping) and cond.get("type") == "DisruptionTarget":
            return cond.get("status") == "True" and cond.get("reason") == "PreemptionByScheduler"
    return False


def fit_error_message(num_all_nodes: int, statuses: Mapping[str, Status]) -> str:
    """``FitError.Error()`` with absent nodes counted as "Preemption is not helpful"."""
    counts: dict[str, int] = {}
    for st in statuses.values():
        for r in st.reasons:
            counts[r] = counts.get(r, 0) + 1
    if len(statuses) < num_all_nodes:
        counts[NOT_HELPFUL] = counts.get(NOT_HELPFUL, 0) + num_all_nodes - len(statuses)
    msg = f"0/{num_all_nodes} nodes are available:"
    histogram = sorted(f"{n} {r}" for r, n in counts.items())
    if histogram:
        msg += f" {', '.join(histogram)}."
    return msg


def _aggregate(errors: Sequence[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: duplicates dropped, brackets if many."""
    seen: list[str] = []
    for e in errors:
        if e not in seen:
            seen.append(e)
    return seen[0] if len(seen) == 1 else f"[{', '.join(seen)}]"


class Evaluator:
    def __init__(self, handle: Any, args: DefaultPreemptionArgs) -> None:
        self.handle = handle
        self.args = args

    # -- eligibility ---------------------------------------------------------------
    def pod_eligible_to_preempt_others(self, pod: Pod, nominated_status: Status | None) -> tuple[bool, str]:
        """``PodEligibleToPreemptOthers``: (eligible, reason when not)."""
        if pod.preemption_policy == "Never":
            return False, NEVER
        nom = pod.nominated_node_name
        if nom:
            if nominated_status is not None and nominated_status.code == Code.UnschedulableAndUnresolvable:
                return True, ""
            ni = self.handle.snapshot.get(nom)
            if ni is not None:
                for p in ni.pods:
                    if preemption_allowed(p, pod) and terminating_by_preemption(p):
                        return False, TERMINATING
        return True, ""

    # -- candidates ----------------------------------------------------------------
    def calculate_num_candidates(self, num_nodes: int) -> int:
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        n = max(n, self.args.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        offset = 0 if self.handle.tie_break_by_name else self.handle.rng.randrange(num_nodes)
        return offset, self.calculate_num_candidates(num_nodes)

    def pdbs_with_budgets(self) -> tuple[list[PodDisruptionBudget], list[int]]:
        pdbs = list(self.handle.objects.pdbs())
        bound: list[Pod] | None = None
        allowed = []
        for pdb in pdbs:
            if pdb.disruptions_allowed is None and bound is None:
                bound = [p for ni in self.handle.snapshot.node_infos for p in ni.pods]
            allowed.append(disruptions_allowed(pdb, bound or ()))
        return pdbs, allowed

    def dry_run_preemption(self, state: CycleState, pod: Pod, potential: Sequence[NodeInfo],
                           pdbs: Sequence[PodDisruptionBudget], allowed: Sequence[int],
                           offset: int, num_candidates: int, times: StartTimes,
                           ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """``DryRunPreemption``, sequentially: (candidates, non-violating first; status
        per node that yielded none; error messages)."""
        fw = self.handle.framework
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses: dict[str, Status] = {}
        errors: list[str] = []
        n = len(potential)
        for i in range(n):
            ni = potential[(offset + i) % n].clone()
            victims, num_viol, st = select_victims_on_node(fw, state.clone(), pod, ni, pdbs, allowed, times)
            if st.success and victims:
                target = non_violating if num_viol == 0 else violating
                if len(target) < num_candidates:  # upstream's candidate lists are fixed-size
                    target.append(Candidate(ni.name, tuple(victims), num_viol))
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if st.success:
                st = Status(Code.Error, (f'expected at least one victim pod on node "{ni.name}"',))
            if st.code == Code.Error:
                errors.append(st.message)
            statuses[ni.name] = st
        return non_violating + violating, statuses, errors

    def select_candidate(self, candidates: Sequence[Candidate], times: StartTimes,
                         ) -> tuple[Candidate | None, list[str]]:
        """``SelectCandidate``: the best candidate and the nodes tied for it."""
        if not candidates:
            return None, []
        if len(candidates) == 1:
            return candidates[0], [candidates[0].name]
        ties = pick_tie_set(candidates, times)
        name = choose_from_ties(ties, self.handle.tie_break_by_name, self.handle.rng)
        by_name = {c.name: c for c in candidates}
        return by_name.get(name, candidates[0]), ties

    # -- the whole thing -----------------------------------------------------------
    def _call_extenders(self, extenders: Sequence[Any], pod: Pod, candidates: list[Candidate]) -> list[Candidate]:
        """Upstream ``callExtenders``: the candidates as a victims map, offered to every
        preempt extender; what they return is the new candidate list."""
        victims = {c.name: Victims(tuple(c.victims), c.num_pdb_violations) for c in candidates}
        result = run_extender_preemption(extenders, pod, victims, self.handle.snapshot.get)
        return [Candidate(name, v.pods, v.num_pdb_violations) for name, v in result.items()]

    def preempt(self, state: CycleState, pod: Pod, filtered: Mapping[str, Status],
                ) -> tuple[PostFilterResult | None, Status]:
        """``Evaluator.Preempt`` without the API calls. Messages lack the "preemption: "
        prefix, which the plugin adds."""
        ok, why = self.pod_eligible_to_preempt_others(
            pod, filtered.get(pod.nominated_node_name, _ABSENT))
        if not ok:
            return None, Status(Code.Unschedulable, (why,))
        all_nodes = self.handle.snapshot.node_infos
        if not all_nodes:
            return None, Status(Code.Error, ("no nodes available",))
        times = StartTimes()
        potential = [ni for ni in all_nodes if filtered.get(ni.name, _ABSENT).code == Code.Unschedulable]
        candidates: list[Candidate] = []
        statuses: dict[str, Status] = {}
        if potential:
            pdbs, allowed = self.pdbs_with_budgets()
            offset, num = self.offset_and_num_candidates(len(potential))
            candidates, statuses, errors = self.dry_run_preemption(
                state, pod, potential, pdbs, allowed, offset, num, times)
            if errors and not candidates:
                return None, Status(Code.Error, (_aggregate(errors),))
        else:
            log.debug("preemption will not help schedule pod %s on any node", pod.key)
        if not candidates:
            return (PostFilterResult("", explanation=PreemptionExplanation((), ())),
                    Status(Code.Unschedulable, (fit_error_message(len(all_nodes), statuses),)))
        extenders = getattr(self.handle, "extenders", ())
        if extenders:
            try:
                candidates = self._call_extenders(extenders, pod, candidates)
            except ExtenderError as exc:
                return None, Status(Code.Error, (str(exc),))
            if not candidates:
                return None, Status(Code.Unschedulable, ("no candidate node for preemption",))
        best, ties = self.select_candidate(candidates, times)
        if best is None or not best.name:
            return None, Status(Code.Unschedulable, ("no candidate node for preemption",))
        log.debug("the target node for the preemption of %s is %s", pod.key, best.name)
        self.prepare_candidate(best, pod)
        return (PostFilterResult(best.name, best.victims,
                                 explanation=PreemptionExplanation(tuple(candidates), tuple(ties))), SUCCESS)

    def prepare_candidate(self, best: Candidate, pod: Pod) -> None:
        """Upstream ``prepareCandidate``: evict the victims, then clear the nominations of
        the lower-priority pods nominated to the node (they would not fit any more)."""
        for victim in best.victims:
            self.handle.preempt_pod(pod, victim, best.name, names.DEFAULT_PREEMPTION)
        for p in self.handle.nominated_pods_for_node(best.name):
            if p.priority < pod.priority and p.uid != pod.uid:
                self.handle.clear_nominated_node(p)
