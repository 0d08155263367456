"""Loading manifests: files and directories of YAML/JSON into a :class:`Manifest`.

This is the boundary where user input becomes objects: files are read (multi-document
YAML, JSON, ``kind: List`` and ``*List`` objects, directories recursively in name order),
every object is checked to be of a kind kubesched understands, named uniquely, defaulted
and admitted as kube-apiserver would (:mod:`kubesched.api.defaults`) and parsed
(:mod:`kubesched.api.objects`). Anything upstream would reject, and anything kubesched
cannot yet schedule faithfully (RuntimeClasses), is an error: one
line, ``FILE: KIND NAMESPACE/NAME: FIELD: message`` (``FILE: document N: ...`` before
the object has a name), raised as :class:`DecodeError`.

Text is read as kubectl reads it (:mod:`kubesched.api.documents`), and values are
type-checked against the kind's schema (:mod:`kubesched.api.schema`) before anything else
reads them, with the messages kube-apiserver's JSON decoding gives.
"""

from __future__ import annotations

import copy
import logging
import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubesched.api.defaults import (
    apply_priority_class_defaults, default_manifest, describe, generate_name, is_namespaced,
    validate_priority_class,
)
from kubesched.api.devicetaints import DEVICE_TAINT_RULE, DEVICE_TAINT_RULE_VERSIONS, DeviceTaintRule
from kubesched.api.dra import API_VERSION as DRA_API_VERSION
from kubesched.api.dra import DRA_KINDS, parse_dra_object
from kubesched.api.podclaims import check_container_claims
from kubesched.api.documents import documents
from kubesched.api.errors import DecodeError
from kubesched.api.kubeversion import SERVER_VERSION_API, SERVER_VERSION_KIND, from_version_info
from kubesched.api.objects import Node, Pod
from kubesched.api.policy import Namespace, PodDisruptionBudget, PriorityClass
from kubesched.api.storage import STORAGE_KINDS, StorageObject, decode_storage
from kubesched.api.workloads import WORKLOAD_KINDS, Workload
from kubesched.api.podgroup import PodGroup
from kubesched.api.schemas import check_object

log = logging.getLogger(__name__)

SUFFIXES = (".yaml", ".yml", ".json")
PROGRESS_EVERY = 1000  # objects between two progress reports

# Kinds kubesched schedules with, and the apiVersion upstream v1.34 serves them in.
SCHEDULED_KINDS: dict[str, str] = {
    "Pod": "v1", "Node": "v1", "Namespace": "v1",
    "PriorityClass": "scheduling.k8s.io/v1", "PodDisruptionBudget": "policy/v1",
    "PodGroup": "scheduling.x-k8s.io/v1alpha1",
    # storage (kubesched.api.storage), read by the volume plugins
    "PersistentVolume": "v1", "PersistentVolumeClaim": "v1", "StorageClass": "storage.k8s.io/v1",
    "CSINode": "storage.k8s.io/v1", "CSIDriver": "storage.k8s.io/v1", "CSIStorageCapacity": "storage.k8s.io/v1",
    "VolumeAttachment": "storage.k8s.io/v1",
    # DRA (kubesched.api.dra), read by DynamicResources
    **{k: DRA_API_VERSION for k in DRA_KINDS},
}
# Kinds accepted and kept as raw dictionaries (DaemonSets and CronJobs make pods through
# kubesched.sim.expand, when the offline commands load them).
OTHER_KINDS: dict[str, str] = {
    "ConfigMap": "v1", "Secret": "v1", "ServiceAccount": "v1",
    "DaemonSet": "apps/v1", "CronJob": "batch/v1",
}
# Kinds that would change scheduling through admission or plugins kubesched lacks.
UNSUPPORTED_KINDS: dict[str, str] = {
    "LimitRange": "LimitRanger admission (default requests and limits)",
    "ResourceQuota": "ResourceQuota admission",
    "RuntimeClass": "RuntimeClass admission (overhead, scheduling constraints)",
}

@dataclass(slots=True)
class Manifest:
    """The objects of a set of manifests, each list in file order, all defaulted."""

    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    priority_classes: list[PriorityClass] = field(default_factory=list)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    namespaces: list[Namespace] = field(default_factory=list)
    pod_groups: list[PodGroup] = field(default_factory=list)
    storage: list[StorageObject] = field(default_factory=list)  # kubesched.api.storage kinds, in file order
    # Services, ReplicationControllers, ReplicaSets, StatefulSets, Deployments, Jobs
    # (read by PodTopologySpread's default constraints).
    workloads: list[Workload] = field(default_factory=list)
    # DeviceClass, ResourceSlice, ResourceClaim(Template), DeviceTaintRule
    dra: list[Any] = field(default_factory=list)
    others: list[dict[str, Any]] = field(default_factory=list)
    # Filled when workloads are turned into pods (kubesched.sim.expand): pod key -> the key of
    # the pod it is created after (a StatefulSet's OrderedReady ordinals), and the workload
    # ("Deployment default/web") -> the keys of the pods it made or adopted, in order.
    after: dict[str, str] = field(default_factory=dict)
    owners: dict[str, list[str]] = field(default_factory=dict)
    # the cluster's /version as a snapshot recorded it (kind ServerVersion), and its file
    server_version: dict[str, Any] | None = None
    server_version_file: str = ""

    @property
    def kubernetes_version(self) -> str | None:
        """The minor release the manifests recorded (``"1.35"``), None when they recorded
        none; VersionError naming the file when kubesched does not support it."""
        if self.server_version is None:
            return None
        return from_version_info(self.server_version, f"{self.server_version_file}: {SERVER_VERSION_KIND}")


@dataclass(slots=True)
class _Doc:
    """One object and where it came from: file, document number, List item path."""

    file: str
    doc: int
    item: str  # "" or "items[2]" (or "items[2].items[0]")
    raw: dict[str, Any]
    duplicates: tuple[str, ...] = ()  # paths of fields named twice (when reading checks them)

    @property
    def where(self) -> str:
        return f"document {self.doc}" + (f", {self.item}" if self.item else "")

    def error(self, message: str, fld: str) -> DecodeError:
        path = ".".join(p for p in (self.item, fld) if p)
        return DecodeError(message, field=path, obj=f"document {self.doc}", file=self.file)


Doc = _Doc


@dataclass(frozen=True, slots=True, kw_only=True)
class Hooks:
    """What the offline commands add to reading (:mod:`kubesched.sim.loading`), handed in
    because this layer cannot import them: ``check`` sees each object as read (strict field
    validation; ``duplicates`` asks the reader to note fields named twice), ``expand``
    returns the objects the workload controllers would create from the (named) objects,
    ``progress`` hears (what, done, total): objects read (total 0: unknown), bytes of the
    files read, then objects decoded."""

    check: Callable[[Doc], None] | None = None
    duplicates: bool = False
    expand: Callable[[list[Doc]], list[Doc]] | None = None
    progress: Callable[[str, int, int], None] | None = None


def read_documents(paths: list[str], hooks: Hooks = Hooks(), objects: Sequence[Any] = (),
                   source: str = "<objects>") -> list[Doc]:
    """The objects of the files in ``paths`` (directories walked), then ``objects`` (manifest
    documents already in memory, named ``source`` in errors), checked by ``hooks.check``."""
    files = list(_expand(paths))
    sizes = [_size(f) for f in files]
    total, done = sum(sizes), 0
    docs: list[Doc] = []
    for f, size in zip(files, sizes):
        for d in _read(f, hooks.duplicates):
            if hooks.check is not None:
                hooks.check(d)
            docs.append(d)
            if hooks.progress is not None and len(docs) % PROGRESS_EVERY == 0:
                hooks.progress("reading objects", len(docs), 0)
        done += size
        if hooks.progress is not None:
            hooks.progress("reading files (bytes)", done, total)
    for n, obj in enumerate(objects, 1):
        for d in _items(source, n, "", copy.deepcopy(obj)):
            if hooks.check is not None:
                hooks.check(d)
            docs.append(d)
    return docs


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def load_manifests(paths: list[str], hooks: Hooks = Hooks(), objects: Sequence[Any] = (),
                   source: str = "<objects>") -> Manifest:
    """Read, check, default and parse the manifests in ``paths`` (files or directories),
    then ``objects`` (documents already in memory, named ``source`` in errors)."""
    docs = read_documents(paths, hooks, objects, source)
    versions = [d for d in docs if d.raw["kind"] == SERVER_VERSION_KIND]
    docs = [d for d in docs if d.raw["kind"] != SERVER_VERSION_KIND]
    _name_and_dedupe(docs)
    if hooks.expand is not None:
        made = hooks.expand(docs)
        if made:
            docs = docs + made
            _name_and_dedupe(docs)
    classes: dict[str, PriorityClass] = {}
    for d in docs:
        if d.raw["kind"] == "PriorityClass":
            try:
                pc = PriorityClass.from_dict(apply_priority_class_defaults(d.raw))
                validate_priority_class(pc, classes.values())
            except DecodeError as exc:
                raise exc.at(obj=describe(d.raw), file=d.file) from None
            classes[pc.name] = pc
    if hooks.progress is not None:
        hooks.progress("defaulting objects", 0, len(docs))
    raws = default_manifest([d.raw for d in docs], classes, files=[d.file for d in docs])
    m = Manifest(priority_classes=list(classes.values()))
    if versions:  # the last one recorded wins, as a later file overrides an earlier one
        m.server_version, m.server_version_file = dict(versions[-1].raw), versions[-1].file
    pod_files: list[str] = []
    for i, (d, raw) in enumerate(zip(docs, raws)):
        if hooks.progress is not None and i % PROGRESS_EVERY == 0:
            hooks.progress("decoding objects", i, len(docs))
        try:
            _add(m, raw, pod_files, d.file)
        except DecodeError as exc:
            raise exc.at(obj=describe(raw), file=d.file) from None
    nodes = {n.name for n in m.nodes}
    for pod, file in zip(m.pods, pod_files):
        # A finished pod may name a node that is gone: the scheduler never sees it anyway.
        if pod.node_name and pod.node_name not in nodes and pod.phase not in ("Succeeded", "Failed"):
            raise DecodeError(f'node "{pod.node_name}" not found in the manifests', field="spec.nodeName",
                              obj=describe(pod.raw), file=file)
    kept = Counter(str(o.get("kind")) for o in m.others)
    if kept:
        log.info("kept but not scheduled: %s", ", ".join(f"{n} {k}" for k, n in sorted(kept.items())))
    return m


def check_supported_pod(raw: Mapping[str, Any]) -> None:
    """Reject what kubesched cannot schedule faithfully yet, rather than ignore it."""
    spec = raw.get("spec")
    if not isinstance(spec, Mapping):
        return
    check_container_claims(raw)  # also validates spec.resourceClaims
    if spec.get("runtimeClassName"):
        raise DecodeError("RuntimeClass admission (overhead, scheduling constraints) is not "
                          "supported by kubesched yet", field="spec.runtimeClassName")


def _add(m: Manifest, raw: dict[str, Any], pod_files: list[str], file: str) -> None:
    kind = raw["kind"]
    if kind == "Pod":
        check_supported_pod(raw)
        # Requests of extended resources without limits are let through: the upstream
        # decision corpus (tests/fidelity) has them (see validation.PodParts).
        pod = Pod.from_dict(raw, require_limits=False)
        pod.seq = len(m.pods)
        m.pods.append(pod)
        pod_files.append(file)
    elif kind == "Node":
        m.nodes.append(Node.from_dict(raw))
    elif kind == "PodDisruptionBudget":
        m.pdbs.append(PodDisruptionBudget.from_dict(raw))
    elif kind == "Namespace":
        m.namespaces.append(Namespace.from_dict(raw))
    elif kind == "PodGroup":
        m.pod_groups.append(PodGroup.from_dict(raw))
    elif kind in STORAGE_KINDS:
        m.storage.append(decode_storage(raw))
    elif kind in WORKLOAD_KINDS:
        m.workloads.append(Workload.from_dict(raw))
    elif kind in DRA_KINDS:
        m.dra.append(parse_dra_object(raw))
    elif kind == DEVICE_TAINT_RULE:
        m.dra.append(DeviceTaintRule.from_dict(raw))
    elif kind != "PriorityClass":
        m.others.append(raw)


# -- reading ------------------------------------------------------------------------------
def _expand(paths: list[str]) -> Iterator[str]:
    for path in paths:
        if os.path.isdir(path):
            found: list[str] = []
            for root, dirs, files in os.walk(path):
                dirs.sort()
                found.extend(os.path.join(root, f) for f in files if f.endswith(SUFFIXES))
            if not found:
                raise DecodeError("no manifests in this directory (no .yaml, .yml or .json file)", file=path)
            yield from sorted(found, key=lambda f: Path(os.path.relpath(f, path)).parts)
        elif os.path.exists(path):
            if not path.endswith(SUFFIXES):
                raise DecodeError("unsupported file type: expected .yaml, .yml or .json", file=path)
            yield path
        else:
            raise DecodeError("no such file or directory", file=path)


def _read(path: str, duplicates: bool = False) -> Iterator[_Doc]:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError as exc:
        raise DecodeError(f"not UTF-8 text: {exc.reason} at byte {exc.start}", file=path) from None
    except OSError as exc:
        raise DecodeError(exc.strerror or str(exc), file=path) from None
    twice: dict[int, list[str]] | None = {} if duplicates else None
    for n, obj in documents(path, text, twice):
        if obj is not None:
            for d in _items(path, n, "", obj):
                if twice and n in twice:
                    d.duplicates = tuple(_within(twice[n], d.item))
                yield d


def _within(paths: list[str], item: str) -> Iterator[str]:
    """The duplicate-field paths of one object of a document (``item``: its List path)."""
    if not item:
        yield from paths
        return
    for p in paths:
        if p.startswith(item + "."):
            yield p[len(item) + 1:]


def _items(path: str, n: int, item: str, obj: Any) -> Iterator[_Doc]:
    """Yield the objects of one document, flattening ``List`` and ``*List`` kinds."""
    doc = _Doc(path, n, item, {})
    if not isinstance(obj, dict):
        raise doc.error(f"must be an object with apiVersion and kind, got {_type_name(obj)}", "")
    kind = obj.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and "items" in obj:
        items = obj.get("items") or []
        if not isinstance(items, list):
            raise doc.error("must be a list", "items")
        element = kind[:-4]
        for i, sub in enumerate(items):
            sub_path = f"{item}.items[{i}]" if item else f"items[{i}]"
            if element and isinstance(sub, dict) and not sub.get("kind"):
                # A typed list from the API (PodList) leaves kind/apiVersion off its items.
                sub = {"kind": element, "apiVersion": obj.get("apiVersion"), **sub}
            yield from _items(path, n, sub_path, sub)
        return
    doc.raw = obj
    _check_kind(doc)
    try:
        doc.raw = check_object(obj)
    except DecodeError as exc:
        meta = obj.get("metadata")
        name, ns = (meta.get("name"), meta.get("namespace")) if isinstance(meta, dict) else (None, None)
        if isinstance(name, str) and name and isinstance(ns, (str, type(None))) and \
                not exc.field.startswith(("metadata.name", "metadata.namespace")):
            raise exc.at(obj=describe(obj), file=path) from None
        raise doc.error(exc.message, exc.field) from None
    meta = doc.raw.get("metadata")
    if meta is not None and not isinstance(meta, dict):  # a kind without a schema
        raise doc.error("must be an object", "metadata")
    yield doc


def _type_name(obj: Any) -> str:
    if isinstance(obj, list):
        return "a list"
    if isinstance(obj, str):
        return "a string"
    if isinstance(obj, bool):
        return "a boolean"
    if isinstance(obj, (int, float)):
        return "a number"
    return type(obj).__name__


# -- checks -------------------------------------------------------------------------------
def _check_kind(d: _Doc) -> None:
    kind, api = d.raw.get("kind"), d.raw.get("apiVersion")
    if not kind or not isinstance(kind, str):
        raise d.error("kind is required", "kind")
    if not api or not isinstance(api, str):
        raise d.error("apiVersion is required", "apiVersion")
    if kind in UNSUPPORTED_KINDS:
        raise d.error(f"{kind}: {UNSUPPORTED_KINDS[kind]} is not supported by kubesched yet", "kind")
    if kind == DEVICE_TAINT_RULE and api in DEVICE_TAINT_RULE_VERSIONS:
        return  # served in a different version per release
    want = (SCHEDULED_KINDS.get(kind) or WORKLOAD_KINDS.get(kind) or OTHER_KINDS.get(kind)
            or (SERVER_VERSION_API if kind == SERVER_VERSION_KIND else None))
    if want is None:
        if kind == DEVICE_TAINT_RULE:
            want = " or ".join(DEVICE_TAINT_RULE_VERSIONS)
        else:
            raise d.error(f'unknown kind "{kind}" (apiVersion {api})', "kind")
    if api != want:
        raise d.error(f'no matches for kind "{kind}" in version "{api}" (kubesched reads {want})',
                      "apiVersion")


def _name_and_dedupe(docs: list[_Doc]) -> None:
    """Name objects that only have ``generateName``; reject duplicate kind/namespace/name."""
    seen: dict[tuple[str, str, str], _Doc] = {}
    generated: Counter[tuple[str, str, str]] = Counter()
    for d in docs:
        kind = d.raw["kind"]
        meta = d.raw.get("metadata") or {}
        ns = str(meta.get("namespace") or "default") if is_namespaced(kind) else ""
        name = meta.get("name")
        if not name:
            base = meta.get("generateName")
            if not base or not isinstance(base, str):
                raise d.error("name or generateName is required", "metadata.name")
            generated[(kind, ns, base)] += 1
            name = generate_name(base, f"{kind}/{ns}/{base}/{generated[(kind, ns, base)]}")
            d.raw = {**d.raw, "metadata": {**meta, "name": name}}
        if not isinstance(name, str):
            raise d.error(f"must be a string, got {name!r}", "metadata.name")
        first = seen.setdefault((kind, ns, name), d)
        if first is not d:
            raise DecodeError(f'Duplicate value: "{name}": first defined in {first.file}, {first.where}; '
                              f"again in {d.where}", field="metadata.name", obj=describe(d.raw),
                              file=d.file)
