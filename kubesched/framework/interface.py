"""One small Protocol per extension point (upstream ``framework/interface.go``).

A plugin is any object with a ``name`` and the methods of the extension points it serves;
the runtime sorts plugins into extension points once, when a profile is built, by which
of these protocols they implement. Optional abilities (score normalisation, PreFilter
AddPod/RemovePod, events to re-queue on, the batch form) are separate protocols.

Status codes per extension point (as upstream):

- PreEnqueue: Success, or UnschedulableAndUnresolvable to keep the pod gated.
- PreFilter: Success; Skip (the plugin's Filter is skipped for this pod); Unschedulable /
  UnschedulableAndUnresolvable reject the pod on every node; Error aborts the cycle.
- Filter: Success, Unschedulable (preemption may help), UnschedulableAndUnresolvable
  (it cannot), Error. Must not modify the NodeInfo; must be idempotent.
- PostFilter: Success with a nominated node, or Unschedulable.
- PreScore: Success, Skip (the plugin's Score is skipped), Error.
- Score: an integer; NormalizeScore must bring scores into [0, MAX_NODE_SCORE].
- Reserve: Success or any failure (then every Reserve plugin's Unreserve runs in reverse
  order). Unreserve must be idempotent and never fail.
- Permit: Success, Wait (with a timeout), or a rejection.
- PreBind/Bind: Success, Skip (Bind only: try the next binder), or failure.

``None`` is accepted wherever a Status is returned and means Success (Go's nil
``*Status``). What else a plugin may return, and how a raised exception or a wrong value
becomes an Error naming the plugin, is in :mod:`kubesched.framework.runtime.results`.
"""

from __future__ import annotations

import random

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.api.policy import Namespace, PodDisruptionBudget, PriorityClass
from kubesched.api.podgroup import PodGroup
from kubesched.api.workloads import Workload
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo

if TYPE_CHECKING:
    from kubesched.framework.dra import DraLister, DraWriter
    from kubesched.framework.events import ClusterEventWithHint
    from kubesched.framework.nodetable import NodeTable
    from kubesched.framework.storage import StorageLister, StorageWriter
    from kubesched.framework.runtime.waiting import WaitingPod

from kubesched.framework.cycle_state import StateKey

# Pods a plugin wants moved to activeQ when this cycle ends (upstream PodsToActivateKey).
PODS_TO_ACTIVATE: StateKey[dict[str, Pod]] = StateKey("kubernetes.io/pods-to-activate")

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = 2**63 - 1


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """Nodes a PreFilter narrowed the pod to; ``None`` means all nodes."""

    node_names: frozenset[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: "PreFilterResult | None") -> "PreFilterResult":
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    """The node to nominate the pod to (empty: clear its nomination), the pods evicted to
    make room there, and what the plugin found, for explanations (DefaultPreemption: its
    candidates, :class:`~kubesched.plugins.preemption.evaluator.PreemptionExplanation`)."""

    nominated_node_name: str = ""
    victims: tuple[Pod, ...] = ()
    explanation: Any = field(default=None, compare=False)  # read by explain only


@dataclass(slots=True)
class QueuedPodInfo:
    """A pod in the scheduling queue, with its attempt bookkeeping."""

    pod: Pod
    timestamp: float = 0.0  # when it was (re-)added to the queue
    initial_attempt_timestamp: float | None = None
    attempts: int = 0
    unschedulable_count: int = 0
    consecutive_errors: int = 0
    backoff_expiration: float = 0.0
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gating_plugin: str = ""
    gated: bool = False


class Plugin(Protocol):
    name: str


@runtime_checkable
class PreEnqueuePlugin(Protocol):
    name: str

    def pre_enqueue(self, pod: Pod) -> Status: ...


@runtime_checkable
class QueueSortPlugin(Protocol):
    """Orders the activeQ. ``sort_key`` must agree with ``less`` (the heap uses the key)."""

    name: str

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...

    def sort_key(self, p: QueuedPodInfo) -> Any: ...


@runtime_checkable
class PreFilterPlugin(Protocol):
    name: str

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]: ...


@runtime_checkable
class PreFilterExtensions(Protocol):
    """AddPod/RemovePod: update PreFilter state as if a pod were added to / removed from a node."""

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status: ...

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod,
                   node_info: NodeInfo) -> Status: ...


@runtime_checkable
class FilterPlugin(Protocol):
    name: str

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status: ...


@runtime_checkable
class BatchFilterPlugin(Protocol):
    """Batch form of Filter over rows ``idx`` of the NodeTable.

    Returns a boolean array aligned with ``idx``: True where the node passes. Reasons for
    failing nodes come from the per-node ``filter`` (called only when a diagnosis is
    needed), so both forms must agree exactly.
    """

    name: str

    def filter_nodes(self, state: CycleState, pod: Pod, table: "NodeTable",
                     idx: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class NodeLocalPlugin(Protocol):
    """Optional, for batch plugins whose Filter/Score result for a node depends only on
    that node's NodeTable row (and node-count-wide constants) and on the pod's
    ``signature``: pods with equal signatures get equal results. The framework then keeps
    each signature's results for every row and recomputes only rows that changed since
    (upstream's opportunistic batching idea). Return None for "do not cache this pod"."""

    def signature(self, pod: Pod) -> Hashable | None: ...


@runtime_checkable
class PostFilterPlugin(Protocol):
    name: str

    def post_filter(self, state: CycleState, pod: Pod,
                    filtered: Mapping[str, Status]) -> tuple[PostFilterResult | None, Status]: ...


@runtime_checkable
class PreScorePlugin(Protocol):
    name: str

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status: ...


@runtime_checkable
class ScorePlugin(Protocol):
    name: str

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int: ...


@runtime_checkable
class BatchScorePlugin(Protocol):
    """Batch form of Score: int64 scores for rows ``idx`` of the NodeTable."""

    name: str

    def score_nodes(self, state: CycleState, pod: Pod, table: "NodeTable",
                    idx: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class ScoreExtensions(Protocol):
    """NormalizeScore: rewrite ``scores`` (aligned with ``names``) in place into [0, 100]."""

    def normalize_score(self, state: CycleState, pod: Pod, names: Sequence[str],
                        scores: np.ndarray) -> Status: ...


@runtime_checkable
class ReservePlugin(Protocol):
    name: str

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Protocol):
    """Returns (status, timeout seconds); the timeout matters only with ``Wait``."""

    name: str

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]: ...


@runtime_checkable
class PreBindPlugin(Protocol):
    name: str

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...


@runtime_checkable
class BindPlugin(Protocol):
    name: str

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...


@runtime_checkable
class PostBindPlugin(Protocol):
    name: str

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class EnqueueExtensions(Protocol):
    """The cluster events that may make a pod rejected by this plugin schedulable."""

    def events_to_register(self) -> list["ClusterEventWithHint"]: ...


class SharedLister(Protocol):
    """Read access to the scheduling snapshot (upstream ``SharedLister``)."""

    node_infos: list[NodeInfo]
    have_pods_with_affinity: list[NodeInfo]
    have_pods_with_required_anti_affinity: list[NodeInfo]

    def get(self, name: str) -> NodeInfo | None: ...

    @property
    def table(self) -> "NodeTable": ...


class ClusterSink(Protocol):
    """Where decisions go: the in-process cluster, the embedded API server, or a real one."""

    def bind(self, pod: Pod, node_name: str) -> Status: ...

    def delete_pod(self, pod: Pod, reason: str, message: str) -> Status: ...

    def set_nominated_node(self, pod: Pod, node_name: str) -> None: ...

    def set_pod_scheduled_condition(self, pod: Pod, status: str, reason: str, message: str) -> None:
        """The pod's PodScheduled condition (upstream sets False/Unschedulable with the message)."""
        ...

    def record_event(self, obj: Pod, type_: str, reason: str, message: str) -> None: ...


class WorkloadLister(Protocol):
    """Services, ReplicationControllers, ReplicaSets, StatefulSets (and Deployments, Jobs)
    by kind (``"Service"``, ...), namespace and name: upstream's informer listers, which
    PodTopologySpread's default selector reads (``helper.DefaultSelector``)."""

    def get(self, kind: str, namespace: str, name: str) -> Workload | None: ...

    def list(self, kind: str, namespace: str) -> Sequence[Workload]: ...


class ClusterObjects(Protocol):
    """Objects other than nodes and pods that plugins read."""

    def workloads(self) -> WorkloadLister: ...

    def namespace(self, name: str) -> Namespace | None: ...

    def pdbs(self) -> Sequence[PodDisruptionBudget]: ...

    def priority_class(self, name: str) -> PriorityClass | None: ...

    def pod_group(self, namespace: str, name: str) -> PodGroup | None: ...

    def all_pods(self) -> Sequence[Pod]:
        """Every pod the scheduler knows of, bound or pending (for gang accounting)."""
        ...


class Handle(Protocol):
    """What a plugin may use of the scheduler that runs it (upstream ``framework.Handle``).

    ``snapshot`` is the snapshot of the current cycle (the same object across cycles,
    updated in place); ``framework`` is the profile's Framework (preemption runs the
    filters through it); ``nominated_pods_for_node`` is the nominator's view.
    """

    @property
    def snapshot(self) -> SharedLister: ...

    @property
    def objects(self) -> ClusterObjects: ...

    @property
    def framework(self) -> Any: ...

    @property
    def sink(self) -> ClusterSink: ...

    @property
    def rng(self) -> random.Random: ...

    @property
    def tie_break_by_name(self) -> bool: ...

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]: ...

    def get_waiting_pod(self, uid: str) -> "WaitingPod | None": ...

    def iterate_waiting_pods(self) -> "list[WaitingPod]": ...

    def now(self) -> float: ...

    def preempt_pod(self, preemptor: Pod, victim: Pod, node: str, plugin: str) -> None:
        """Evict ``victim`` for ``preemptor`` (upstream ``PreemptPod``): a victim waiting at
        Permit is rejected, any other deleted. Nothing happens in a dry run."""
        ...

    def clear_nominated_node(self, pod: Pod) -> None:
        """Clear ``pod``'s nominated node (upstream ``ClearNominatedNodeName``)."""
        ...

    @property
    def storage(self) -> "StorageLister":
        """Storage objects (PVs, PVCs, classes, CSI objects): :mod:`kubesched.framework.storage`."""
        ...

    @property
    def storage_writer(self) -> "StorageWriter":
        """Where VolumeBinding's PreBind writes (PV claimRef, PVC selected-node) and waits."""
        ...

    @property
    def dra(self) -> "DraLister":
        """DRA objects (classes, slices, claims): :mod:`kubesched.framework.dra`."""
        ...

    @property
    def dra_writer(self) -> "DraWriter":
        """Where DynamicResources' PreBind writes claims (allocation, reservedFor)."""
        ...


PluginFactory = Callable[[Mapping[str, Any], Handle], Any]
NodeFilter = Callable[[Node], bool]
