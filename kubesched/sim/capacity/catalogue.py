"""The catalogue of node shapes ``kubesched capacity plan`` may add, and the nodes it makes.

A catalogue is YAML or JSON: a mapping with ``shapes`` (or a bare list of shapes). A shape:

.. code-block:: yaml

    shapes:
    - name: gpu-large          # required, a DNS label: nodes are named <name>-new-<k>
      cpu: "16"                # allocatable cpu (required)
      memory: 64Gi             # allocatable memory (required)
      pods: 110                # allocatable pods (default 110, the kubelet's default)
      resources:               # extended resources: GPUs and the like
        nvidia.com/gpu: 4
      labels: {node.kubernetes.io/instance-type: g4}
      taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
      price: 3.2               # per node; required by --objective price
      max: 5                   # at most this many nodes of the shape (default: no limit)

A node made from a shape carries the shape's labels plus ``kubernetes.io/hostname`` (its
name), as a kubelet registers, and is decoded and validated as any Node of a manifest.
Errors name the catalogue file, the shape and the field.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.defaults import apply_node_defaults
from kubesched.api.documents import documents
from kubesched.api.errors import DecodeError
from kubesched.api.objects import Node

SHAPE_KEYS = {"name", "cpu", "memory", "pods", "resources", "labels", "taints", "price", "max"}
HOSTNAME = "kubernetes.io/hostname"
NODE_FIELDS = (("status.capacity.cpu", "cpu"), ("status.capacity.memory", "memory"),
               ("status.capacity.pods", "pods"), ("status.capacity", "resources"),
               ("metadata.labels", "labels"), ("metadata.name", "name"), ("spec.taints", "taints"),
               ("metadata.taints", "taints"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Shape:
    name: str
    capacity: dict[str, Any]
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[dict[str, Any], ...] = ()
    price: float | None = None
    max: int | None = None
    template: Node | None = None  # a node of the shape, validated once

    def node(self, name: str) -> Node:
        """A node of this shape named ``name``."""
        return Node.from_dict(_node_raw(self, name))

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "capacity": self.capacity, "labels": self.labels,
                "taints": list(self.taints), "price": self.price, "max": self.max}


def _node_raw(shape: Shape, name: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"taints": list(shape.taints)} if shape.taints else {}
    return apply_node_defaults({"apiVersion": "v1", "kind": "Node",
                                "metadata": {"name": name, "labels": {**shape.labels, HOSTNAME: name}},
                                "spec": spec, "status": {"capacity": dict(shape.capacity)}})


def _field(node_field: str) -> str:
    """The catalogue field a Node field came from."""
    for prefix, ours in NODE_FIELDS:
        if node_field == prefix or node_field.startswith(prefix + ".") or node_field.startswith(prefix + "["):
            return ours + node_field[len(prefix):]
    return node_field


def load_catalogue(path: str) -> list[Shape]:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise DecodeError(exc.strerror or str(exc), file=path) from None
    except UnicodeDecodeError as exc:
        raise DecodeError(f"not UTF-8 text: {exc.reason} at byte {exc.start}", file=path) from None
    docs = [obj for _, obj in documents(path, text) if obj is not None]
    if len(docs) != 1:
        raise DecodeError(f"a catalogue is one document, found {len(docs)}", file=path)
    doc = docs[0]
    items = doc.get("shapes") if isinstance(doc, dict) else doc
    if not isinstance(items, list) or not items:
        raise DecodeError("must be a non-empty list of node shapes", field="shapes", file=path)
    shapes: list[Shape] = []
    for i, item in enumerate(items):
        shape = _shape(path, i, item)
        if any(s.name == shape.name for s in shapes):
            raise DecodeError(f'Duplicate value: "{shape.name}"', field=f"shapes[{i}].name", file=path)
        shapes.append(shape)
    return shapes


def _shape(path: str, i: int, item: Any) -> Shape:
    where = f"shapes[{i}]"

    def bad(message: str, fld: str, obj: str = "") -> DecodeError:
        return DecodeError(message, field=fld, obj=obj or where, file=path)

    if not isinstance(item, dict):
        raise bad("must be a mapping", "")
    name = item.get("name")
    if not isinstance(name, str) or not name:
        raise bad("is required (a string)", "name")
    obj = f"shape {name}"
    unknown = sorted(set(item) - SHAPE_KEYS)
    if unknown:
        raise bad(f"unknown field (known: {', '.join(sorted(SHAPE_KEYS))})", unknown[0], obj)
    capacity: dict[str, Any] = {}
    for key in ("cpu", "memory"):
        if item.get(key) is None:
            raise bad("is required", key, obj)
        capacity[key] = item[key]
    capacity["pods"] = item.get("pods", 110)
    resources = item.get("resources") or {}
    if not isinstance(resources, dict):
        raise bad("must be a mapping of resource name to quantity", "resources", obj)
    capacity.update(resources)
    labels = item.get("labels") or {}
    if not isinstance(labels, dict):
        raise bad("must be a mapping", "labels", obj)
    taints = item.get("taints") or []
    if not isinstance(taints, list):
        raise bad("must be a list", "taints", obj)
    price = item.get("price")
    if price is not None and (isinstance(price, bool) or not isinstance(price, (int, float))
                              or not math.isfinite(price) or price < 0):
        raise bad(f"must be a non-negative number, got {price!r}", "price", obj)
    most = item.get("max")
    if most is not None and (isinstance(most, bool) or not isinstance(most, int) or most < 0):
        raise bad(f"must be a non-negative integer, got {most!r}", "max", obj)
    shape = Shape(name=name, capacity=capacity, labels={str(k): str(v) for k, v in labels.items()},
                  taints=tuple(taints), price=None if price is None else float(price), max=most)
    try:
        template = shape.node(f"{name}-new-1")
    except DecodeError as exc:
        raise bad(exc.message, _field(exc.field), obj) from None
    return Shape(name=shape.name, capacity=shape.capacity, labels=shape.labels, taints=shape.taints,
                 price=shape.price, max=shape.max, template=template)
