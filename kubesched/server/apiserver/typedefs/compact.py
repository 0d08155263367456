"""OpenAPI definitions derived from the declared types (:mod:`kubesched.api.types`) into the
DSL (:mod:`.dsl`), so every served kind is described field by field from one place:
``kubectl explain`` shows real fields and ``fieldValidation=Strict`` flags unknown ones in
Services, StatefulSets, PDBs, RBAC, storage and DRA kinds alike.

Hand-written definitions win: a declared type only fills a name that is undefined or open,
and the types marked ``OPENAPI_ELSEWHERE`` are left to the hand-written ones. Descriptions
are short phrases made from the field names, plus a sentence of our own for each kind.
Type notation: :mod:`kubesched.api.types.grammar`.
"""

from __future__ import annotations

import re

from kubesched.api.types import TYPES, Message
from kubesched.server.apiserver.typedefs.dsl import (
    ANY, BOOL, DEFS, INT32, INT64, INT_OR_STRING, MICROTIME, NUMBER, QUANTITY, STRING, TIME, Opts, T, atomic,
    define, listmap, mapof, ref,
)

PREFIX = {"core": "io.k8s.api.core.v1.", "apps": "io.k8s.api.apps.v1.", "batch": "io.k8s.api.batch.v1.",
          "policy": "io.k8s.api.policy.v1.", "rbac": "io.k8s.api.rbac.v1.", "storage": "io.k8s.api.storage.v1.",
          "resource": "io.k8s.api.resource.v1.", "events": "io.k8s.api.events.v1.",
          "meta": "io.k8s.apimachinery.pkg.apis.meta.v1."}
GROUP = {"core": "", "apps": "apps", "batch": "batch", "policy": "policy", "rbac": "rbac.authorization.k8s.io",
         "storage": "storage.k8s.io", "resource": "resource.k8s.io", "events": "events.k8s.io"}
SCALARS = {"s": STRING, "b": BOOL, "i32": INT32, "i64": INT64, "f64": NUMBER, "q": QUANTITY, "t": TIME,
           "mt": MICROTIME, "x": INT_OR_STRING, "y": T("string", "byte"), "any": ANY}
KINDS = {
    "core:Service": "A stable name and virtual IP in front of a set of pods.",
    "core:ReplicationController": "Keeps a number of pods running; the predecessor of ReplicaSet.",
    "core:PersistentVolume": "A piece of storage in the cluster.",
    "core:PersistentVolumeClaim": "A request for storage that binds to a PersistentVolume.",
    "core:Event": "A report of something that happened to an object.",
    "apps:StatefulSet": "Pods with stable names and storage, created and updated in order.",
    "apps:DaemonSet": "One pod on each eligible node.",
    "apps:ControllerRevision": "An immutable snapshot of a controller's pod template, for rollbacks.",
    "batch:CronJob": "Creates Jobs on a schedule.",
    "policy:PodDisruptionBudget": "Limits how many pods of a set voluntary disruptions may take down at once.",
    "rbac:Role": "Permissions within one namespace.",
    "rbac:ClusterRole": "Permissions across the cluster, or a set RoleBindings reuse.",
    "rbac:RoleBinding": "Grants a role's permissions to subjects within a namespace.",
    "rbac:ClusterRoleBinding": "Grants a cluster role's permissions to subjects everywhere.",
    "storage:StorageClass": "A kind of storage that volumes are provisioned from.",
    "storage:CSINode": "The CSI drivers installed on a node.",
    "storage:CSIDriver": "How the cluster uses a CSI driver.",
    "storage:CSIStorageCapacity": "Capacity a CSI driver reports for a topology segment.",
    "storage:VolumeAttachment": "A request to attach a volume to a node.",
    "resource:DeviceClass": "Selectors and configuration shared by claims for a kind of device.",
    "resource:ResourceSlice": "Devices a driver publishes for one pool.",
    "resource:ResourceClaim": "A request for devices a pod uses.",
    "resource:ResourceClaimTemplate": "A template from which a ResourceClaim is made for each pod.",
    "events:Event": "A report of something that happened to an object (events.k8s.io).",
}
_WORDS = re.compile(r"[A-Z]{2,}s(?![a-z])|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def phrase(name: str) -> str:
    """``minAvailable`` -> ``Min available.``; ``podCIDRs`` -> ``Pod CIDRs.``"""
    words = [w if sum(c.isupper() for c in w) > 1 else w.lower() for w in _WORDS.findall(name)]
    text = " ".join(words) or name
    return text[0].upper() + text[1:] + "."


def _full(short: str) -> str:
    group, name = short.split(":")
    return PREFIX[group] + name


def parse_type(spec: str) -> T:
    if spec.startswith("{}"):
        return mapof(parse_type(spec[2:]))
    if spec.startswith("["):
        kind, rest = spec[1:].split("]", 1)
        item = parse_type(rest)
        if kind.startswith("map="):
            return listmap(item, *kind[4:].split(","))
        if kind == "atomic":
            return atomic(item)
        return T("array", item=item, list_type=kind)
    if spec.startswith("@"):
        return ref(_full(spec[1:]))
    return SCALARS[spec]


def _register(m: Message) -> None:
    name = PREFIX[m.group] + m.name
    if name in DEFS and not DEFS[name].open:
        return
    members = [f for f in m.fields if not f.embedded]  # an embedded struct's members are listed in m
    fields = {f.json: parse_type(f.type)(phrase(f.json)) for f in members}
    required = tuple(f.json for f in members if f.required)
    short = f"{m.group}:{m.name}"
    top = short in KINDS
    desc = KINDS.get(short) or phrase(m.name)
    gvk = (GROUP[m.group], "v1", m.name) if top else None
    define(name, desc, Opts(required, gvk=gvk), **fields)


def load() -> None:
    for m in TYPES.values():
        if not m.openapi_elsewhere:
            _register(m)
