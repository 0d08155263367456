"""The simulated DRA driver: one ResourceSlice per node and driver, from ``--node-pool``.

A pool's ``dra`` list declares the devices a DRA driver (a kubelet plugin in a real
cluster) publishes on each node of the pool::

    - count: 4
      namePrefix: gpu
      capacity: {cpu: "64", memory: 512Gi}
      dra:
      - driver: gpu.example.com     # required, a DNS subdomain
        devices: 8                  # required, devices per node: gpu-0 ... gpu-7
        deviceNamePrefix: gpu       # optional, default: the driver's first label
        attributes: {model: A100, cuda: true, sm: 80}   # string / bool / int attributes
        capacity: {memory: 80Gi}    # quantities (device.capacity[...] in CEL)

Every device of a driver on a node has the same attributes and capacity, plus the int
attribute ``index`` (its number) unless ``attributes`` sets one. The slice is named
``<node>-<driver>``, has ``nodeName`` = the node, a pool of the node's name with
``generation: 1`` and ``resourceSliceCount: 1``, and is owned by the Node (deleted with
it). It is published when the pool's node is created, and again at start-up if it is
missing; it never changes afterwards (a real driver would republish on device changes).
Mistakes are one line naming the file, the pool and the field, before anything starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.dra import API_VERSION, ResourceSlice
from kubesched.api.errors import DecodeError, KubeschedError
from kubesched.api.quantity import parse_quantity

SLICES = "resourceslices.resource.k8s.io"
_FIELDS = {"driver", "devices", "deviceNamePrefix", "attributes", "capacity"}


@dataclass(frozen=True, slots=True)
class DraDevices:
    """One driver's devices on every node of a pool."""

    driver: str
    devices: int
    name_prefix: str
    attributes: Mapping[str, Any]  # name -> {"string"|"int"|"bool": value}
    capacity: Mapping[str, Any]  # name -> {"value": quantity}


def _attribute(value: Any, where: str) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, str):
        return {"string": value}
    raise KubeschedError(f"{where}: must be a string, an integer or a boolean")


def parse_dra(raw: Any, path: str) -> tuple[DraDevices, ...]:
    """A pool's ``dra`` list; ``path`` names the file and pool (``f.yaml: pools[0].dra``)."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise KubeschedError(f"{path}: must be a list of {{driver, devices, attributes, capacity}}")
    out: list[DraDevices] = []
    for i, d in enumerate(raw):
        where = f"{path}[{i}]"
        if not isinstance(d, Mapping):
            raise KubeschedError(f"{where}: must be a mapping with driver, devices, attributes, capacity")
        unknown = set(d) - _FIELDS
        if unknown:
            raise KubeschedError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
        driver = d.get("driver")
        if not isinstance(driver, str) or not driver:
            raise KubeschedError(f"{where}.driver: Required value: a DRA driver name such as gpu.example.com")
        count = d.get("devices")
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 128:
            raise KubeschedError(f"{where}.devices: must be an integer from 1 to 128 (devices per node)")
        prefix = d.get("deviceNamePrefix", driver.split(".")[0])
        if not isinstance(prefix, str) or not prefix:
            raise KubeschedError(f"{where}.deviceNamePrefix: must be a non-empty string")
        attrs_raw, cap_raw = d.get("attributes") or {}, d.get("capacity") or {}
        if not isinstance(attrs_raw, Mapping):
            raise KubeschedError(f"{where}.attributes: must be a mapping of name to value")
        if not isinstance(cap_raw, Mapping):
            raise KubeschedError(f"{where}.capacity: must be a mapping of name to quantity")
        attrs = {str(k): _attribute(v, f"{where}.attributes.{k}") for k, v in attrs_raw.items()}
        cap: dict[str, Any] = {}
        for k, v in cap_raw.items():
            try:
                parse_quantity(str(v))
            except DecodeError as exc:
                raise KubeschedError(f"{where}.capacity.{k}: {exc.message}") from None
            cap[str(k)] = {"value": str(v)}
        if any(o.driver == driver for o in out):
            raise KubeschedError(f'{where}.driver: Duplicate value: "{driver}"')
        entry = DraDevices(driver, count, prefix, attrs, cap)
        try:  # what the API server and the scheduler will check, said here with the pool's path
            ResourceSlice.from_dict(slice_object(entry, {"metadata": {"name": "node", "uid": ""}}))
        except DecodeError as exc:
            raise KubeschedError(f"{where}: {exc.field}: {exc.message}" if exc.field else f"{where}: {exc.message}"
                                 ) from None
        out.append(entry)
    return tuple(out)


def slice_name(node: str, driver: str) -> str:
    return f"{node}-{driver}"


def slice_object(dev: DraDevices, node: Mapping[str, Any]) -> dict[str, Any]:
    """The ResourceSlice the driver publishes for ``node`` (a created Node)."""
    meta = node["metadata"]
    devices = []
    for i in range(dev.devices):
        attrs = {"index": {"int": i}, **dev.attributes}
        entry: dict[str, Any] = {"name": f"{dev.name_prefix}-{i}", "attributes": attrs}
        if dev.capacity:
            entry["capacity"] = dict(dev.capacity)
        devices.append(entry)
    return {"apiVersion": API_VERSION, "kind": "ResourceSlice",
            "metadata": {"name": slice_name(meta["name"], dev.driver), "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": meta["name"], "uid": meta.get("uid")}]},
            "spec": {"driver": dev.driver, "nodeName": meta["name"],
                     "pool": {"name": meta["name"], "generation": 1, "resourceSliceCount": 1},
                     "devices": devices}}
