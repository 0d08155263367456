"""The controller manager: workload, storage, DRA and Job controllers and the garbage collector, as one
:class:`~kubesched.server.apiserver.server.Component` of ``kubesched serve``.

Like kube-controller-manager it shares one set of informers between its controllers
(deployments, replicasets, pods), starts the workers once the caches are synced, and
writes through the API (here the in-process registry: same defaulting, validation,
watches and resourceVersions as any client sees). ``--controller-seed`` seeds the one
:class:`random.Random` that names generated pods.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.controllers.base import Controller
from kubesched.server.controllers.clusterroleaggregation import ClusterRoleAggregationController
from kubesched.server.controllers.cronjob import JOBS, CronJobController
from kubesched.server.controllers.daemonset import DaemonSetController
from kubesched.server.controllers.deployment import DeploymentController
from kubesched.server.controllers.disruption import DisruptionController
from kubesched.server.controllers.dra import dra_controllers
from kubesched.server.controllers.events import EventRecorder
from kubesched.server.controllers.garbagecollector import GarbageCollector
from kubesched.server.controllers.history import RESOURCE as REVISIONS, History
from kubesched.server.controllers.informer import Informer, by_namespace, wait_synced
from kubesched.server.controllers.podgroup import PodGroupController
from kubesched.server.controllers.serviceaccounts import ServiceAccountsController
from kubesched.server.controllers.replicaset import ReplicaSetController
from kubesched.server.controllers.storage import storage_controllers

if TYPE_CHECKING:
    from kubesched.server.apiserver.server import ApiServer

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ControllerOptions:
    seed: int | None = None
    workers: int = 2
    garbage_collector: bool = True


class ControllerManager:
    name = "controller-manager"

    def __init__(self, options: ControllerOptions = ControllerOptions()) -> None:
        self.options = options
        self._informers: list[Informer] = []
        self._controllers: list[Controller[Any]] = []

    def start(self, server: "ApiServer") -> None:
        reg = server.registry
        rng = random.Random(self.options.seed)
        pods = Informer(reg, "pods")
        pods.add_index("namespace", by_namespace)
        rss = Informer(reg, "replicasets.apps")
        deps = Informer(reg, "deployments.apps")
        self._informers = [pods, rss, deps]
        workers = self.options.workers
        self._controllers = [
            ReplicaSetController(reg, rss, pods, rng, EventRecorder(reg, "replicaset-controller"), workers=workers),
            DeploymentController(reg, deps, rss, pods, EventRecorder(reg, "deployment-controller"), workers=workers),
        ]
        pdbs = Informer(reg, "poddisruptionbudgets.policy")
        dss, nodes = Informer(reg, "daemonsets.apps"), Informer(reg, "nodes")
        groups = Informer(reg, "podgroups.scheduling.x-k8s.io")
        namespaces, accounts = Informer(reg, "namespaces"), Informer(reg, "serviceaccounts")
        cluster_roles = Informer(reg, "clusterroles.rbac.authorization.k8s.io")
        revisions = Informer(reg, REVISIONS)  # ControllerRevisions of DaemonSets and StatefulSets
        history = History(reg, revisions)
        self._informers += [pdbs, dss, nodes, groups, namespaces, accounts, cluster_roles, revisions]
        self._controllers += [
            DisruptionController(reg, pdbs, pods, EventRecorder(reg, "controllermanager"), workers=workers),
            DaemonSetController(reg, dss, pods, nodes, EventRecorder(reg, "daemonset-controller"), workers=workers,
                                history=history),
            PodGroupController(reg, groups, pods, workers=workers),
            ServiceAccountsController(reg, namespaces, accounts),
            ClusterRoleAggregationController(reg, cluster_roles),
        ]
        jobs = Informer(reg, JOBS)  # one Job informer for the Job and CronJob controllers
        self._informers.append(jobs)
        try:
            reg.resource(JOBS)
        except ApiError:
            log.warning("the server does not serve %s: the CronJob controller is not started", JOBS)
        else:
            cjs = Informer(reg, "cronjobs.batch")
            self._informers.append(cjs)
            self._controllers.append(CronJobController(reg, cjs, jobs, EventRecorder(reg, "cronjob-controller"),
                                                       workers=workers))
        storage_informers, storage = storage_controllers(reg, pods, workers=workers, history=history)
        self._informers += storage_informers
        self._controllers += storage
        dra_informers, dra = dra_controllers(reg, pods, jobs, rng, workers=workers)
        self._informers += dra_informers
        self._controllers += dra
        if self.options.garbage_collector:
            self._controllers.append(GarbageCollector(reg, workers=workers))
        for inf in self._informers:
            inf.start()
        if not wait_synced(self._informers):
            log.warning("controller caches did not sync")
        for c in self._controllers:
            c.start()
        log.info("controller manager started: %s", ", ".join(c.name for c in self._controllers))

    def stop(self) -> None:
        for c in self._controllers:
            c.stop()
        for inf in self._informers:
            inf.stop()
