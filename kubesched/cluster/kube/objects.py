"""``KubeObjects``: what plugins read besides nodes and pods (``ClusterObjects``), served
from informer stores: namespaces, PodDisruptionBudgets, PriorityClasses, PodGroups,
Services and controllers (for default spreading), and every pod the pod informer holds
(for gang accounting)."""

from __future__ import annotations

from collections.abc import Sequence

from kubesched.api.objects import Pod
from kubesched.api.policy import Namespace, PodDisruptionBudget, PriorityClass
from kubesched.api.podgroup import PodGroup
from kubesched.api.workloads import WorkloadIndex
from kubesched.cluster.kube.informer import Informer


class KubeObjects:
    def __init__(self, *, pods: Informer[Pod], namespaces: Informer[Namespace],
                 pdbs: Informer[PodDisruptionBudget], priority_classes: Informer[PriorityClass],
                 pod_groups: Informer[PodGroup],
                 workloads: WorkloadIndex | None = None) -> None:
        """``workloads``: Services and controllers, kept current by their informers'
        callbacks (see LiveScheduler)."""
        self._pods = pods
        self._namespaces = namespaces
        self._pdbs = pdbs
        self._priority_classes = priority_classes
        self._pod_groups = pod_groups
        self._workloads = workloads if workloads is not None else WorkloadIndex()

    def namespace(self, name: str) -> Namespace | None:
        """None when the informer has not seen it (plugins then use empty labels, as upstream)."""
        return self._namespaces.get(name)

    def pdbs(self) -> Sequence[PodDisruptionBudget]:
        return self._pdbs.values()

    def priority_class(self, name: str) -> PriorityClass | None:
        return self._priority_classes.get(name)

    def pod_group(self, namespace: str, name: str) -> PodGroup | None:
        return self._pod_groups.get_namespaced(namespace, name)

    def workloads(self) -> WorkloadIndex:
        return self._workloads

    def all_pods(self) -> Sequence[Pod]:
        return self._pods.values()

    def pod(self, namespace: str, name: str) -> Pod | None:
        return self._pods.get_namespaced(namespace, name)

    def current_pod(self, pod: Pod) -> Pod | None:
        """The informer's version of ``pod`` (same uid), or None if it is gone."""
        cur = self._pods.get_namespaced(pod.namespace, pod.name)
        return cur if cur is not None and cur.uid == pod.uid else None

    def pod_by_uid(self, uid: str) -> Pod | None:
        for p in self._pods.values():
            if p.uid == uid:
                return p
        return None
