"""Node pools: the simulated nodes ``kubesched serve`` creates at start-up.

A pool is ``count`` nodes named ``<namePrefix>-01``... with the same capacity, labels and
taints; ``zones`` spreads them round-robin over ``zone-a``, ``zone-b``, ... in the
``topology.kubernetes.io/zone`` label. Pools come from flags (``--nodes 100 --node-cpu 32
--node-memory 128Gi --node-pods 110 --node-labels k=v,... --zones 3``) or from a YAML file
(``--node-pool FILE``)::

    - count: 10
      namePrefix: general
      capacity: {cpu: "32", memory: 128Gi, pods: "110"}
      labels: {tier: general}
      zones: 3
    - count: 2
      namePrefix: gpu
      capacity: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "8"}
      taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
      csiDrivers:
      - name: ebs.csi.aws.com
        topologyKeys: [topology.kubernetes.io/zone]
        allocatable: 25

``csiDrivers`` gives each node of the pool a CSINode (``storage.k8s.io/v1``) listing those
drivers, as a kubelet registers its CSI plugins: ``nodeID`` = the node's name, the
``topologyKeys`` (which the simulated provisioner turns into a volume's node affinity)
and ``allocatable`` = the driver's volume limit (``allocatable.count``, which
NodeVolumeLimits reads; omitted: no limit). The CSINode is owned by its Node.

``dra`` declares devices a simulated DRA driver publishes on each node of the pool, as
one ResourceSlice per node and driver (:mod:`kubesched.server.nodes.dradriver`)::

    dra: [{driver: gpu.example.com, devices: 8, attributes: {model: A100}, capacity: {memory: 80Gi}}]

Nodes are created only if absent, so a restart keeps them (and what kubectl changed on
them). Nodes applied with kubectl are simulated just the same: the node agent takes over
every Node object.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubesched.api.errors import DecodeError, KubeschedError
from kubesched.api.objects import TAINT_EFFECTS, Taint
from kubesched.api.quantity import parse_quantity
from kubesched.server.apiserver.bootstrap import NodeTemplate, node_names, node_object
from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.nodes.dradriver import SLICES, DraDevices, parse_dra, slice_object

log = logging.getLogger(__name__)

ZONE_LABEL = "topology.kubernetes.io/zone"
POOL_LABEL = "kubesched.io/node-pool"


@dataclass(frozen=True, slots=True)
class NodePool:
    count: int
    name_prefix: str = "node"
    capacity: Mapping[str, str] = field(default_factory=lambda: {"cpu": "8", "memory": "32Gi", "pods": "110"})
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Mapping[str, Any], ...] = ()
    zones: int = 0
    csi_drivers: tuple[Mapping[str, Any], ...] = ()
    dra: tuple[DraDevices, ...] = ()  # simulated DRA drivers: kubesched.server.nodes.dradriver


def zone_name(i: int) -> str:
    """zone-a ... zone-z, zone-aa ..."""
    letters = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        letters = chr(ord("a") + r) + letters
    return f"zone-{letters}"


def parse_labels(text: str, what: str = "--node-labels") -> dict[str, str]:
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key:
            raise KubeschedError(f"{what}: {part!r} is not key=value")
        out[key.strip()] = value.strip()
    return out


def _pool(raw: Any, path: str) -> NodePool:
    if not isinstance(raw, Mapping):
        raise KubeschedError(f"{path}: must be a mapping with count, namePrefix, capacity, labels, taints")
    unknown = set(raw) - {"count", "namePrefix", "capacity", "labels", "taints", "zones", "csiDrivers", "dra"}
    if unknown:
        raise KubeschedError(f"{path}: unknown field(s) {', '.join(sorted(unknown))}")
    count, zones = raw.get("count"), raw.get("zones", 0)
    for name, v in (("count", count), ("zones", zones)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise KubeschedError(f"{path}.{name}: must be a non-negative integer")
    prefix = str(raw.get("namePrefix") or "node")
    capacity = {str(k): str(v) for k, v in (raw.get("capacity") or {"cpu": "8", "memory": "32Gi",
                                                                     "pods": "110"}).items()}
    capacity.setdefault("pods", "110")
    for k, v in capacity.items():
        try:
            parse_quantity(v)
        except DecodeError as exc:
            raise KubeschedError(f"{path}.capacity.{k}: {exc.message}") from None
    labels = raw.get("labels") or {}
    if not isinstance(labels, Mapping):
        raise KubeschedError(f"{path}.labels: must be a mapping")
    taints = raw.get("taints") or []
    if not isinstance(taints, list):
        raise KubeschedError(f"{path}.taints: must be a list")
    for i, t in enumerate(taints):
        try:
            taint = Taint.parse(t, f"{path}.taints[{i}]")
        except DecodeError as exc:
            raise KubeschedError(str(exc)) from None
        if taint.effect not in TAINT_EFFECTS:
            raise KubeschedError(f'{path}.taints[{i}].effect: Unsupported value: "{taint.effect}": supported values: '
                                 '"NoSchedule", "PreferNoSchedule", "NoExecute"')
    return NodePool(int(count or 0), prefix, capacity, {str(k): str(v) for k, v in labels.items()},
                    tuple(dict(t) for t in taints), zones, _csi_drivers(raw.get("csiDrivers"), f"{path}.csiDrivers"),
                    parse_dra(raw.get("dra"), f"{path}.dra"))


def _csi_drivers(raw: Any, path: str) -> tuple[Mapping[str, Any], ...]:
    """The pool's ``csiDrivers`` as CSINode driver entries (without ``nodeID``)."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise KubeschedError(f"{path}: must be a list of {{name, topologyKeys, allocatable}}")
    out: list[dict[str, Any]] = []
    for i, d in enumerate(raw):
        where = f"{path}[{i}]"
        if not isinstance(d, Mapping) or not isinstance(d.get("name"), str) or not d["name"]:
            raise KubeschedError(f"{where}.name: Required value: a CSI driver name")
        unknown = set(d) - {"name", "topologyKeys", "allocatable"}
        if unknown:
            raise KubeschedError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
        keys = d.get("topologyKeys") or []
        if not isinstance(keys, list) or not all(isinstance(k, str) and k for k in keys):
            raise KubeschedError(f"{where}.topologyKeys: must be a list of label keys")
        entry: dict[str, Any] = {"name": d["name"], "topologyKeys": list(keys) or None}
        limit = d.get("allocatable")
        if limit is not None:
            if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
                raise KubeschedError(f"{where}.allocatable: must be a non-negative integer (the volume limit)")
            entry["allocatable"] = {"count": limit}
        if any(o["name"] == entry["name"] for o in out):
            raise KubeschedError(f'{where}.name: Duplicate value: "{entry["name"]}"')
        out.append(entry)
    return tuple(out)


def csinode_object(pool: NodePool, node: Mapping[str, Any]) -> dict[str, Any]:
    """The CSINode a kubelet of ``pool`` registers for ``node`` (a created Node)."""
    meta = node["metadata"]
    drivers = [{k: v for k, v in {**d, "nodeID": meta["name"]}.items() if v is not None} for d in pool.csi_drivers]
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
            "metadata": {"name": meta["name"], "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": meta["name"], "uid": meta.get("uid")}]},
            "spec": {"drivers": drivers}}


def load_pool_file(path: str | Path) -> list[NodePool]:
    try:
        doc = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise KubeschedError(f"--node-pool {path}: {exc}") from None
    if isinstance(doc, Mapping) and "pools" in doc:
        doc = doc["pools"]
    if not isinstance(doc, list):
        raise KubeschedError(f"--node-pool {path}: expected a list of pools")
    pools = [_pool(p, f"{path}: pools[{i}]") for i, p in enumerate(doc)]
    prefixes = [p.name_prefix for p in pools]
    if len(set(prefixes)) != len(prefixes):
        raise KubeschedError(f"--node-pool {path}: namePrefix must differ between pools")
    return pools


def template_pool(count: int, cpu: str, memory: str, pods: int, labels: str = "", zones: int = 0) -> NodePool:
    return _pool({"count": count, "capacity": {"cpu": cpu, "memory": memory, "pods": str(pods)},
                  "labels": parse_labels(labels), "zones": zones}, "--nodes")


def pool_node(pool: NodePool, name: str, i: int, index: int, now: float) -> dict[str, Any]:
    """The Node object for the ``i``-th node of ``pool`` (``index``: over all pools)."""
    cap = dict(pool.capacity)
    obj = node_object(name, index, NodeTemplate(cap.get("cpu", "0"), cap.get("memory", "0"),
                                                int(cap.get("pods", "110")), pool.name_prefix), now)
    obj["status"]["capacity"] = cap
    obj["status"]["allocatable"] = dict(cap)
    labels = obj["metadata"]["labels"]
    labels.update(pool.labels)
    if pool.zones:
        labels[ZONE_LABEL] = zone_name(i % pool.zones)
    if pool.taints:
        obj["spec"]["taints"] = [dict(t) for t in pool.taints]
    return obj


def _publish_slices(registry: Registry, pool: NodePool, node: Mapping[str, Any]) -> None:
    """The simulated DRA driver's ResourceSlices of ``node`` (:mod:`.dradriver`)."""
    for dev in pool.dra:
        try:
            registry.create(SLICES, None, slice_object(dev, node))
        except ApiError as exc:
            if exc.reason != "AlreadyExists":
                raise


def ensure_pools(registry: Registry, pools: list[NodePool]) -> list[str]:
    """Create the pools' nodes that do not exist yet; return the names created."""
    created, index = [], 0
    for pool in pools:
        for i, name in enumerate(node_names(pool.count, pool.name_prefix)):
            index += 1
            try:
                _publish_slices(registry, pool, registry.get("nodes", None, name))  # restart: only if missing
                continue
            except ApiError as exc:
                if exc.code != 404:
                    raise
            node = registry.create("nodes", None, pool_node(pool, name, i, index, registry.clock()))
            _publish_slices(registry, pool, node)
            if pool.csi_drivers:
                try:
                    registry.create("csinodes.storage.k8s.io", None, csinode_object(pool, node))
                except ApiError as exc:
                    if exc.reason != "AlreadyExists":
                        raise
            created.append(name)
    if created:
        log.info("created %d node(s)", len(created))
    return created
