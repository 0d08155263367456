"""A simulated CSI external provisioner, one for every StorageClass provisioner.

A real cluster runs one ``external-provisioner`` sidecar per CSI driver; it creates a
volume for each claim the PV controller handed to it (annotation
``volume.kubernetes.io/storage-provisioner`` = its name) and writes the PV. Here one
controller plays every driver (any provisioner except ``kubernetes.io/no-provisioner``):

* WaitForFirstConsumer: nothing until the scheduler wrote the claim's
  ``volume.kubernetes.io/selected-node``; the volume is then accessible from the
  selected node's topology: for each topology key the driver registered in that node's
  CSINode, ``key In [the node's label value]``; ``kubernetes.io/hostname In [node]`` when
  the driver has no topology keys there (or the node has no CSINode);
* Immediate: at once; accessible where the class's ``allowedTopologies`` allow (no
  node affinity without them).

The PV is what the sidecar writes: named ``pvc-<claim uid>``, capacity = the request,
the claim's access modes and volume mode, the class's name, reclaim policy and mount
options, a CSI source (driver = provisioner, volumeHandle), ``pv.kubernetes.io/
provisioned-by`` and a ``claimRef`` to the claim with its uid; the PV controller then
completes the binding. A claim whose selected node does not exist gets a
``ProvisioningFailed`` event and is retried.
"""

from __future__ import annotations

import logging
from typing import Any

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import Controller
from kubesched.server.controllers.events import NORMAL, WARNING, EventRecorder
from kubesched.server.controllers.informer import Informer, Key, Obj
from kubesched.server.controllers.volumeutil import (
    ANN_PROVISIONED_BY, ANN_SELECTED_NODE, ANN_STORAGE_PROVISIONER, NO_PROVISIONER, WAIT_FOR_FIRST_CONSUMER,
    annotations_of, claim_class, claim_ref, meta, node_affinity_terms, spec,
)

log = logging.getLogger(__name__)

HOSTNAME_LABEL = "kubernetes.io/hostname"


def volume_topology(driver: str, node: Obj, csinode: Obj | None) -> list[tuple[str, list[str]]]:
    """The requirements a volume provisioned for ``node`` gets (its accessible topology)."""
    name = str(meta(node).get("name"))
    labels = dict(meta(node).get("labels") or {})
    keys: list[str] = []
    for d in spec(csinode or {}).get("drivers") or []:
        if isinstance(d, dict) and d.get("name") == driver:
            keys = [str(k) for k in d.get("topologyKeys") or []]
    if not keys:
        return [(HOSTNAME_LABEL, [name])]
    return [(k, [str(labels[k])]) for k in keys if k in labels]


def allowed_topology(cls: Obj) -> dict[str, Any] | None:
    terms = []
    for term in cls.get("allowedTopologies") or []:
        exprs = [{"key": e["key"], "operator": "In", "values": list(e.get("values") or [])}
                 for e in (term or {}).get("matchLabelExpressions") or [] if isinstance(e, dict) and e.get("key")]
        if exprs:
            terms.append({"matchExpressions": exprs})
    return {"required": {"nodeSelectorTerms": terms}} if terms else None


class Provisioner(Controller[Key]):
    name = "csi-provisioner"

    def __init__(self, registry: Registry, claims: Informer, classes: Informer, nodes: Informer,
                 csinodes: Informer, recorder: EventRecorder, *, workers: int = 1) -> None:
        super().__init__(workers)
        self.registry = registry
        self.claims = claims
        self.classes = classes
        self.nodes = nodes
        self.csinodes = csinodes
        self.recorder = recorder
        claims.add_handler(self._on_claim)

    def _on_claim(self, old: Obj | None, new: Obj | None) -> None:
        if new is not None and ANN_STORAGE_PROVISIONER in annotations_of(new) and not spec(new).get("volumeName"):
            self.queue.add((str(meta(new).get("namespace") or ""), str(meta(new).get("name"))))

    def sync(self, key: Key) -> None:
        pvc = self.claims.get(*key)
        if pvc is None or spec(pvc).get("volumeName") or meta(pvc).get("deletionTimestamp"):
            return
        cls = self.classes.get("", claim_class(pvc))
        provisioner = annotations_of(pvc).get(ANN_STORAGE_PROVISIONER)
        if cls is None or not provisioner or cls.get("provisioner") != provisioner or provisioner == NO_PROVISIONER:
            return
        affinity: dict[str, Any] | None
        if cls.get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER:
            node_name = annotations_of(pvc).get(ANN_SELECTED_NODE)
            if not node_name:
                return
            node = self.nodes.get("", node_name)
            if node is None:
                self.recorder.event(pvc, WARNING, "ProvisioningFailed",
                                    f'failed to get target node: node "{node_name}" not found')
                self.queue.add_after(key, 5.0)
                return
            affinity = node_affinity_terms(volume_topology(provisioner, node, self.csinodes.get("", node_name)))
        else:
            affinity = allowed_topology(cls)
        self._create(pvc, cls, provisioner, affinity)

    def _create(self, pvc: Obj, cls: Obj, provisioner: str, affinity: dict[str, Any] | None) -> None:
        m = meta(pvc)
        name = f"pvc-{m.get('uid')}"
        ns_name = f"{m.get('namespace')}/{m.get('name')}"
        self.recorder.event(pvc, NORMAL, "Provisioning", f'External provisioner is provisioning volume for claim '
                                                         f'"{ns_name}"')
        pv_spec: dict[str, Any] = {
            "capacity": {"storage": ((spec(pvc).get("resources") or {}).get("requests") or {}).get("storage")},
            "accessModes": list(spec(pvc).get("accessModes") or []),
            "volumeMode": spec(pvc).get("volumeMode") or "Filesystem",
            "persistentVolumeReclaimPolicy": cls.get("reclaimPolicy") or "Delete",
            "storageClassName": meta(cls).get("name"),
            "claimRef": claim_ref(pvc),
            "csi": {"driver": provisioner, "volumeHandle": name, "fsType": "ext4"},
        }
        if cls.get("mountOptions"):
            pv_spec["mountOptions"] = list(cls["mountOptions"])
        if affinity is not None:
            pv_spec["nodeAffinity"] = affinity
        pv = {"apiVersion": "v1", "kind": "PersistentVolume",
              "metadata": {"name": name, "annotations": {ANN_PROVISIONED_BY: provisioner}}, "spec": pv_spec}
        try:
            self.registry.create("persistentvolumes", None, pv)
        except ApiError as exc:
            if exc.reason == "AlreadyExists":
                return
            self.recorder.event(pvc, WARNING, "ProvisioningFailed", f"failed to provision volume: {exc.message}")
            raise
        log.info("provisioned %s for claim %s", name, ns_name)
        self.recorder.event(pvc, NORMAL, "ProvisioningSucceeded", f"Successfully provisioned volume {name}")
