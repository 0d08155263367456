"""What PreFilter/Filter and PreScore/Score share: the internal constraint, how a pod's
constraints (or the default ones) are chosen, node inclusion policies, pod counting.

Upstream ``podtopologyspread/common.go`` plus ``plugins/helper/spread.go``.

matchLabelKeys: the API server (MatchLabelKeysInPodTopologySpreadSelectorMerge, on in
1.34) already ANDs ``key In (pod's value)`` into ``labelSelector`` for each key the pod
has, and ``TopologySpreadConstraint.parse`` does the same at decode time. The scheduler's
own merge (MatchLabelKeysInPodTopologySpread) adds the same requirements again, a no-op for
matching; with a nil selector both leave it matching nothing. So the decoded selector is
used as is.
"""

from __future__ import annotations

import logging
import math
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kubesched.api.objects import Node, Pod, Taint
from kubesched.api.selectors import LabelSelector, Requirement
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.types import NodeInfo
from kubesched.plugins.podtopologyspread.args import HONOR, LABEL_HOSTNAME, DefaultConstraint

log = logging.getLogger(__name__)

MAX_INT32 = 2**31 - 1
_HARD_TAINT_EFFECTS = ("NoSchedule", "NoExecute")


@dataclass(frozen=True, slots=True)
class Constraint:
    """Upstream's internal ``topologySpreadConstraint`` (selector parsed, defaults applied)."""

    max_skew: int
    topology_key: str
    selector: LabelSelector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = "Ignore"

    @property
    def is_hostname(self) -> bool:
        return self.topology_key == LABEL_HOSTNAME


def pod_constraints(pod: Pod, action: str) -> tuple[Constraint, ...]:
    """The pod's own constraints whose whenUnsatisfiable is ``action``."""
    return tuple(
        Constraint(c.max_skew, c.topology_key, c.selector,
                   1 if c.min_domains is None else c.min_domains,
                   c.node_affinity_policy, c.node_taints_policy)
        for c in pod.spread_constraints if c.when_unsatisfiable == action)


def default_constraints(defaults: Sequence[DefaultConstraint], action: str,
                        selector: LabelSelector) -> tuple[Constraint, ...]:
    """``buildDefaultConstraints``: the defaults for ``action``, all with ``selector``;
    none when the selector is empty (no Service/controller selects the pod)."""
    chosen = [c for c in defaults if c.when_unsatisfiable == action]
    if not chosen or selector.empty:
        return ()
    return tuple(Constraint(c.max_skew, c.topology_key, selector,
                            1 if c.min_domains is None else c.min_domains,
                            c.node_affinity_policy or HONOR, c.node_taints_policy or "Ignore")
                 for c in chosen)


def default_selector(pod: Pod, service_selectors: Iterable[Mapping[str, str] | None] = (),
                     owner_selector: LabelSelector | None = None) -> LabelSelector:
    """helper ``DefaultSelector``: the union of the selectors of the Services selecting the
    pod (``service_selectors``: each Service's ``spec.selector`` in the pod's namespace),
    plus the requirements of its controlling ReplicaSet/StatefulSet (or the label set of a
    ReplicationController) in ``owner_selector``. Empty when nothing selects the pod."""
    merged: dict[str, str] = {}
    for sel in service_selectors:
        if sel is None:  # a Service with a nil selector matches nothing
            continue
        if all(pod.labels.get(k) == v for k, v in sel.items()):
            merged.update(sel)
    reqs: list[Requirement] = [Requirement(k, "In", frozenset([v])) for k, v in sorted(merged.items())]
    if owner_selector is not None and not owner_selector.nothing:
        reqs.extend(owner_selector.requirements)
    return LabelSelector(tuple(reqs))


def node_has_all_keys(labels: Mapping[str, str], constraints: Sequence[Constraint]) -> bool:
    """``nodeLabelsMatchSpreadConstraints``."""
    for c in constraints:
        if c.topology_key not in labels:
            return False
    return True


def has_required_affinity(pod: Pod) -> bool:
    return bool(pod.node_selector) or (pod.affinity is not None and pod.affinity.node_required is not None)


def required_affinity_matches(pod: Pod, node: Node) -> bool:
    """``nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)``: nodeSelector and the
    required node affinity terms."""
    labels = node.labels
    for k, v in pod.node_selector.items():
        if labels.get(k) != v:
            return False
    aff = pod.affinity
    if aff is not None and aff.node_required is not None:
        return aff.node_required.matches(labels, node.name)
    return True


def has_untolerated_hard_taint(pod: Pod, node: Node) -> bool:
    """A NoSchedule/NoExecute taint the pod does not tolerate
    (``FindMatchingUntoleratedTaint`` with ``DoNotScheduleTaintsFilterFunc``)."""
    return taints_untolerated(pod, node.taints)


def taints_untolerated(pod: Pod, taints: Sequence[Taint]) -> bool:
    """``has_untolerated_hard_taint`` for a node's taint list."""
    for t in taints:
        if t.effect in _HARD_TAINT_EFFECTS and not any(tol.tolerates(t) for tol in pod.tolerations):
            return True
    return False


class NodeInclusion:
    """``matchNodeInclusionPolicies`` for one pod, node by node (each check computed at
    most once per node)."""

    __slots__ = ("pod", "check_affinity", "node", "_affinity", "_taints")

    def __init__(self, pod: Pod) -> None:
        self.pod = pod
        self.check_affinity = has_required_affinity(pod)
        self.node: Node | None = None
        self._affinity: bool | None = None
        self._taints: bool | None = None

    def at(self, node: Node) -> "NodeInclusion":
        self.node, self._affinity, self._taints = node, None, None
        return self

    def admits(self, c: Constraint) -> bool:
        node = self.node
        assert node is not None
        if c.node_affinity_policy == HONOR and self.check_affinity:
            if self._affinity is None:
                self._affinity = required_affinity_matches(self.pod, node)
            if not self._affinity:
                return False
        if c.node_taints_policy == HONOR and node.taints:
            if self._taints is None:
                self._taints = not has_untolerated_hard_taint(self.pod, node)
            if not self._taints:
                return False
        return True


def count_matching(pods: Iterable[Pod], selector: LabelSelector, namespace: str) -> int:
    """``countPodsMatchSelector``: same namespace, not terminating, labels match; an empty
    selector counts nothing."""
    if selector.empty or selector.nothing:
        return 0
    n = 0
    for p in pods:
        if p.deletion_timestamp is not None or p.namespace != namespace:
            continue
        if selector.matches(p.labels):
            n += 1
    return n


class MatchCounter:
    """``count_matching`` per node, memoised by (namespace, selector) and the NodeInfo's
    generation (which changes whenever the node's pods change), so successive cycles for
    pods of one workload do not re-match every pod in the cluster. Keeps the most recently
    used ``capacity`` selectors."""

    def __init__(self, capacity: int = 64) -> None:
        self.capacity = capacity
        self._memo: OrderedDict[tuple[str, LabelSelector], dict[str, tuple[int, int]]] = OrderedDict()
        # Per (namespace, selector): the counts of every NodeTable row, with the table
        # (weakly) and its version when they were last brought up to date.
        self._arrays: dict[tuple[str, LabelSelector],
                           tuple[weakref.ref[NodeTable], int, np.ndarray]] = {}

    def table(self, namespace: str, selector: LabelSelector) -> dict[str, tuple[int, int]]:
        key = (namespace, selector)
        t = self._memo.get(key)
        if t is None:
            t = self._memo[key] = {}
            if len(self._memo) > self.capacity:
                old, _ = self._memo.popitem(last=False)
                self._arrays.pop(old, None)
        else:
            self._memo.move_to_end(key)
        return t

    def table_for(self, namespace: str, selector: LabelSelector) -> dict[str, tuple[int, int]]:
        """``table``, but a throw-away one for selectors that count nothing."""
        if selector.empty or selector.nothing:
            return {}
        return self.table(namespace, selector)

    @staticmethod
    def count_in(table: dict[str, tuple[int, int]], ni: NodeInfo, selector: LabelSelector,
                 namespace: str) -> int:
        hit = table.get(ni.name)
        if hit is not None and hit[0] == ni.generation:
            return hit[1]
        n = count_matching(ni.pods, selector, namespace)
        table[ni.name] = (ni.generation, n)
        return n

    def counts_array(self, table: NodeTable, namespace: str, selector: LabelSelector) -> np.ndarray:
        """``count`` for every row of ``table`` (int64, read-only for callers). Kept per
        selector and brought up to date from the rows the table rewrote since last time."""
        if selector.empty or selector.nothing:
            return np.zeros(table.size, dtype=np.int64)
        key = (namespace, selector)
        memo = self.table(namespace, selector)
        infos = table.infos
        entry = self._arrays.get(key)
        if entry is not None and entry[0]() is table and entry[2].size == table.size:
            changed = table.changed_since(entry[1])
            if changed is not None:
                arr = entry[2]
                for j in changed.tolist():
                    arr[j] = self.count_in(memo, infos[j], selector, namespace)
                self._arrays[key] = (entry[0], table.version, arr)
                return arr
        cold = self._cold_counts(table, namespace, selector)
        arr = cold if cold is not None else np.fromiter(
            (self.count_in(memo, ni, selector, namespace) for ni in infos), dtype=np.int64, count=table.size)
        self._arrays[key] = (weakref.ref(table), table.version, arr)
        return arr

    @staticmethod
    def _cold_counts(table: NodeTable, namespace: str, selector: LabelSelector) -> np.ndarray | None:
        """Counts for a selector never counted on this table, from the table's pod label
        index: only the pods that could match are looked at (None: no ``In`` requirement)."""
        cands = table.pod_index().candidates(selector)
        if cands is None:
            return None
        arr = np.zeros(table.size, dtype=np.int64)
        for row, pods in cands.items():
            n = count_matching(pods, selector, namespace)
            if n:
                arr[row] = n
        return arr

    def count(self, ni: NodeInfo, selector: LabelSelector, namespace: str) -> int:
        if selector.empty or selector.nothing:
            return 0
        return self.count_in(self.table(namespace, selector), ni, selector, namespace)


def go_round(x: float) -> float:
    """Go's ``math.Round``: half away from zero."""
    t = float(math.trunc(x))
    if abs(x - t) >= 0.5:
        t += math.copysign(1.0, x)
    return t


_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_LG = (6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
       2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
       1.479819860511658591e-01)


def go_log(x: float) -> float:
    """Go's ``math.Log`` for finite x > 0, bit for bit (the fdlibm reduction Go uses on
    amd64); the C library's log differs in the last bit for some integers (3, 14, ...)."""
    f1, ki = math.frexp(x)
    if f1 < math.sqrt(2) / 2:
        f1 *= 2
        ki -= 1
    f = f1 - 1
    k = float(ki)
    s = f / (2 + f)
    s2 = s * s
    s4 = s2 * s2
    t1 = s2 * (_LG[0] + s4 * (_LG[2] + s4 * (_LG[4] + s4 * _LG[6])))
    t2 = s4 * (_LG[1] + s4 * (_LG[3] + s4 * _LG[5]))
    r = t1 + t2
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)
