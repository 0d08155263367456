"""Workload traces for ``kubesched replay``: when pods arrive, what they ask for, when they go.

A trace is JSON Lines (``.jsonl``/``.ndjson``, one object a line) or CSV (``.csv``, a
header line). Fields, one pod per line:

==================  ===========================================================================
``time``            arrival, in seconds of virtual time (required, >= 0)
``name``            pod name (default ``trace-<line>``); ``namespace`` (default ``default``)
``cpu``, ``memory`` requests (quantities); JSONL ``resources: {name: quantity}`` and CSV columns
                    whose name contains ``/`` (``nvidia.com/gpu``) are extended resources
``labels``          JSONL: a mapping; CSV: ``k=v;k2=v2``
``priority``        an integer, or ``priorityClassName`` (resolved as admission does)
``template``        a Pod manifest file (relative to the trace) the pod is made from; its
                    requests stay unless ``cpu``/``memory``/``resources`` are given
``pod``             JSONL only: the Pod object itself
``duration``        seconds the pod runs once bound, then it is deleted
``deleteAt``        (CSV also ``delete_at``) absolute deletion time, bound or not
==================  ===========================================================================

Every error names the trace file, the line and the field. Pods built from the same
parameters are decoded once and copied, so traces of tens of thousands of pods load fast.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kubesched.api.decode import Manifest
from kubesched.api.defaults import default_manifest
from kubesched.api.errors import DecodeError
from kubesched.api.objects import Pod
from kubesched.sim.capacity.common import copy_pod, load_pod_template

FIELDS = {"time", "name", "namespace", "cpu", "memory", "resources", "labels", "priority",
          "priorityClassName", "template", "pod", "duration", "deleteAt", "delete_at"}
PAUSE = "registry.k8s.io/pause:3.10"


@dataclass(frozen=True, slots=True)
class TraceEntry:
    line: int
    time: float
    pod: Pod
    duration: float | None = None
    delete_at: float | None = None


class _Loader:
    def __init__(self, path: str, manifest: Manifest) -> None:
        self.path = path
        self.manifest = manifest
        self.classes = {pc.name: pc for pc in manifest.priority_classes}
        self.parsed: dict[str, Pod] = {}  # parameters -> decoded pod
        self.templates: dict[str, Pod] = {}
        self.names: dict[tuple[str, str], int] = {(p.namespace, p.name): 0 for p in manifest.pods}

    def error(self, line: int, fld: str, message: str) -> DecodeError:
        return DecodeError(message, field=fld, obj=f"line {line}", file=self.path)

    def number(self, line: int, row: dict[str, Any], fld: str, required: bool = False) -> float | None:
        v = row.get(fld)
        if v is None or v == "":
            if required:
                raise self.error(line, fld, "is required")
            return None
        if isinstance(v, str):
            try:
                v = float(v)
            except ValueError:
                raise self.error(line, fld, f"must be a number of seconds, got {v!r}") from None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise self.error(line, fld, f"must be a non-negative number of seconds, got {v!r}")
        return float(v)

    def entry(self, line: int, row: dict[str, Any]) -> TraceEntry:
        unknown = sorted(k for k in row if k not in FIELDS and "/" not in k)
        if unknown:
            raise self.error(line, unknown[0], f"unknown field (known: {', '.join(sorted(FIELDS))})")
        t = self.number(line, row, "time", required=True)
        duration = self.number(line, row, "duration")
        delete_at = self.number(line, row, "deleteAt")
        if delete_at is None:
            delete_at = self.number(line, row, "delete_at")
        if duration is not None and delete_at is not None:
            raise self.error(line, "deleteAt", "give duration or deleteAt, not both")
        assert t is not None
        if delete_at is not None and delete_at < t:
            raise self.error(line, "deleteAt", f"{delete_at:g} is before the arrival time {t:g}")
        pod = self.pod(line, row)
        key = (pod.namespace, pod.name)
        if key in self.names:
            first = self.names[key]
            where = f"line {first}" if first else "the cluster manifests"
            raise self.error(line, "name", f'Duplicate value: "{pod.namespace}/{pod.name}": first in {where}')
        self.names[key] = line
        return TraceEntry(line, t, pod, duration, delete_at)

    def pod(self, line: int, row: dict[str, Any]) -> Pod:
        ns = str(row.get("namespace") or "")  # empty: the template's, else default
        name = str(row.get("name") or f"trace-{line}")
        requests: dict[str, Any] = {}
        for r in ("cpu", "memory"):
            if row.get(r) not in (None, ""):
                requests[r] = row[r]
        extra = row.get("resources") or {}
        if not isinstance(extra, dict):
            raise self.error(line, "resources", "must be a mapping of resource name to quantity")
        requests.update(extra)
        requests.update({k: v for k, v in row.items() if "/" in k and v not in (None, "")})
        labels = self.labels(line, row.get("labels"))
        prio = row.get("priority")
        if prio not in (None, ""):
            try:
                prio = int(prio)
            except (TypeError, ValueError):
                raise self.error(line, "priority", f"must be an integer, got {prio!r}") from None
        else:
            prio = None
        base = self.base(line, row, ns, labels, requests)
        pod = copy_pod(base, name, f"trace-{line}", line)
        if prio is not None:
            pod.raw["spec"] = {**pod.raw.get("spec", {}), "priority": prio}
            pod.priority = prio
        return pod

    def labels(self, line: int, value: Any) -> dict[str, str]:
        if value in (None, ""):
            return {}
        if isinstance(value, dict):
            return {str(k): str(v) for k, v in value.items()}
        if isinstance(value, str):
            out = {}
            for part in filter(None, value.split(";")):
                k, eq, v = part.partition("=")
                if not eq or not k:
                    raise self.error(line, "labels", f"expected k=v;k2=v2, got {value!r}")
                out[k.strip()] = v.strip()
            return out
        raise self.error(line, "labels", f"must be a mapping, got {value!r}")

    def base(self, line: int, row: dict[str, Any], ns: str, labels: dict[str, str],
             requests: dict[str, Any]) -> Pod:
        """The decoded pod these parameters make (cached; copies get the name and uid)."""
        inline = row.get("pod")
        template = row.get("template")
        key = json.dumps([ns, labels, requests, row.get("priorityClassName"), template, inline],
                         sort_keys=True, default=str)
        pod = self.parsed.get(key)
        if pod is not None:
            return pod
        if inline is not None and template is not None:
            raise self.error(line, "pod", "give pod or template, not both")
        if template is not None:
            raw = self.template(line, str(template)).raw
        elif inline is not None:
            if not isinstance(inline, dict):
                raise self.error(line, "pod", "must be a Pod object")
            for part in ("metadata", "spec"):
                if not isinstance(inline.get(part) or {}, dict):
                    raise self.error(line, f"pod.{part}", "must be an object")
            raw = inline
        else:
            raw = {"apiVersion": "v1", "kind": "Pod", "metadata": {},
                   "spec": {"containers": [{"name": "main", "image": PAUSE}]}}
        raw = self.with_params(raw, ns, labels, requests, row.get("priorityClassName"))
        try:
            pod = Pod.from_dict(default_manifest([raw], self.classes)[0], require_limits=False)
        except DecodeError as exc:
            fld = exc.field
            for ours, theirs in (("cpu", "spec.containers[0].resources.requests.cpu"),
                                 ("memory", "spec.containers[0].resources.requests.memory")):
                if fld == theirs and ours in requests:
                    fld = ours
            if template is not None:
                fld = f"template {template}: {fld}"
            elif inline is not None and fld not in requests:
                fld = f"pod.{fld}" if fld else "pod"
            raise self.error(line, fld, exc.message) from None
        self.parsed[key] = pod
        return pod

    def template(self, line: int, name: str) -> Pod:
        path = name if os.path.isabs(name) else os.path.join(os.path.dirname(self.path), name)
        if path not in self.templates:
            try:
                self.templates[path] = load_pod_template(path, self.manifest)
            except DecodeError as exc:
                raise self.error(line, "template", str(exc)) from None
        return self.templates[path]

    @staticmethod
    def with_params(raw: dict[str, Any], ns: str, labels: dict[str, str], requests: dict[str, Any],
                    class_name: Any) -> dict[str, Any]:
        meta = dict(raw.get("metadata") or {})
        meta.update(name="trace-pod", namespace=ns or meta.get("namespace") or "default")
        meta.pop("generateName", None)
        if labels:
            meta["labels"] = {**(meta.get("labels") or {}), **labels}
        spec = dict(raw.get("spec") or {})
        spec.pop("nodeName", None)
        if class_name:
            spec["priorityClassName"] = str(class_name)
        if requests:
            containers = [dict(c) for c in spec.get("containers") or [{"name": "main", "image": PAUSE}]]
            res = dict(containers[0].get("resources") or {})
            res["requests"] = {**(res.get("requests") or {}), **{k: str(v) for k, v in requests.items()}}
            containers[0]["resources"] = res
            spec["containers"] = containers
        return {**raw, "metadata": meta, "spec": spec, "status": {}}


def _rows(path: str) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        fh = open(path, encoding="utf-8", newline="")
    except OSError as exc:
        raise DecodeError(exc.strerror or str(exc), file=path) from None
    with fh:
        try:
            if path.endswith(".csv"):
                reader = csv.DictReader(fh)
                for row in reader:
                    if None in row:
                        raise DecodeError("more values than header columns", obj=f"line {reader.line_num}",
                                          file=path)
                    yield reader.line_num, {k.strip(): (v.strip() if isinstance(v, str) else v)
                                            for k, v in row.items() if k is not None}
                return
            for n, text in enumerate(fh, 1):
                if not text.strip():
                    continue
                try:
                    obj = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise DecodeError(f"invalid JSON: {exc.msg} at column {exc.colno}", obj=f"line {n}",
                                      file=path) from None
                if not isinstance(obj, dict):
                    raise DecodeError("must be a JSON object", obj=f"line {n}", file=path)
                yield n, obj
        except UnicodeDecodeError as exc:
            raise DecodeError(f"not UTF-8 text: {exc.reason}", file=path) from None


def load_trace(path: str, manifest: Manifest) -> list[TraceEntry]:
    """The entries of ``path``, in arrival order (file order among equal times)."""
    if not path.endswith((".jsonl", ".ndjson", ".csv")):
        raise DecodeError("unsupported trace type: expected .jsonl, .ndjson or .csv", file=path)
    loader = _Loader(path, manifest)
    entries = [loader.entry(n, row) for n, row in _rows(path)]
    entries.sort(key=lambda e: (e.time, e.line))
    return entries
