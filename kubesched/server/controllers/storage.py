"""The storage controllers of ``kubesched serve`` and the informers they share: the PV
controller, the simulated CSI provisioner, the ephemeral-volume controller, the
StatefulSet controller (which creates claims from ``volumeClaimTemplates``) and the
PVC/PV in-use protection controller.

In a real cluster the first, third and fourth run in kube-controller-manager and the
provisioner as one sidecar per CSI driver; here they all run in the controller manager.
"""

from __future__ import annotations

from typing import Any

from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import Controller
from kubesched.server.controllers.ephemeral import EphemeralVolumeController
from kubesched.server.controllers.events import EventRecorder
from kubesched.server.controllers.informer import Informer
from kubesched.server.controllers.persistentvolume import PersistentVolumeController
from kubesched.server.controllers.protection import ProtectionController
from kubesched.server.controllers.provisioner import Provisioner
from kubesched.server.controllers.history import History
from kubesched.server.controllers.statefulset import StatefulSetController


def storage_controllers(reg: Registry, pods: Informer, *, workers: int = 1, history: History | None = None
                        ) -> tuple[list[Informer], list[Controller[Any]]]:
    """New informers (not started) and the controllers over them; ``pods`` is the
    manager's pod informer (indexed by namespace)."""
    pvs = Informer(reg, "persistentvolumes")
    pvcs = Informer(reg, "persistentvolumeclaims")
    classes = Informer(reg, "storageclasses.storage.k8s.io")
    nodes = Informer(reg, "nodes")
    csinodes = Informer(reg, "csinodes.storage.k8s.io")
    sets = Informer(reg, "statefulsets.apps")
    controllers: list[Controller[Any]] = [
        PersistentVolumeController(reg, pvs, pvcs, classes, EventRecorder(reg, "persistentvolume-controller")),
        Provisioner(reg, pvcs, classes, nodes, csinodes, EventRecorder(reg, "csi-provisioner-simulated")),
        EphemeralVolumeController(reg, pods, pvcs, EventRecorder(reg, "ephemeral_volume")),
        StatefulSetController(reg, sets, pods, pvcs, EventRecorder(reg, "statefulset-controller"),
                              workers=workers, history=history),
        ProtectionController(reg, pvcs, pvs, pods),
    ]
    return [pvs, pvcs, classes, nodes, csinodes, sets], controllers
