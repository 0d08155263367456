"""``kubesched import openb``: an openb trace as manifests ``simulate`` and the rest read.

Nodes get CPU, memory, pod capacity (1001, as the artifact's node list) and the GPU count
and milli-GPU capacity open-gpu-share reads (``alibabacloud.com/gpu-count``,
``alibabacloud.com/gpu-milli``), their model as the label ``alibabacloud.com/gpu-card-model``.
Pods request CPU and memory; their GPU request is in the annotations
(:mod:`kubesched.contrib.gpushare.model`); the trace's QoS, phase and times are kept as
``trace.kubesched.io/*`` annotations (every pod is written pending: the trace's phase is
what happened in production, not a state to start from).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from kubesched.api.errors import KubeschedError
from kubesched.contrib.gpushare.model import GPU_COUNT, GPU_MILLI, GPU_MODEL, MILLI
from kubesched.experiment.openb import TraceNode, TracePod, read_nodes, read_pods

NAMESPACE = "openb"
TRACE = "trace.kubesched.io/"
POD_CAPACITY = "1001"

_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def node_manifest(n: TraceNode) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": n.name}
    capacity = {"cpu": f"{n.cpu}m", "memory": f"{n.memory}Mi", "pods": POD_CAPACITY}
    if n.gpus:
        labels[GPU_MODEL] = n.model
        capacity[GPU_COUNT] = str(n.gpus)
        capacity[GPU_MILLI] = str(n.gpus * MILLI)
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n.name, "labels": labels},
            "status": {"capacity": capacity, "allocatable": dict(capacity)}}


def pod_manifest(p: TracePod) -> dict[str, Any]:
    ann: dict[str, str] = {}
    if p.gpu.wants_gpu:
        ann[GPU_MILLI] = str(p.gpu.milli)
        ann[GPU_COUNT] = str(p.gpu.count)
        if p.gpu.models:
            ann[GPU_MODEL] = p.gpu.spec
    for key, val in (("qos", p.qos), ("phase", p.phase), ("creation-time", p.creation_time),
                     ("deletion-time", p.deletion_time), ("scheduled-time", p.scheduled_time)):
        if val not in (None, ""):
            ann[TRACE + key] = str(val)
    res = {"cpu": f"{p.cpu}m", "memory": f"{p.memory}Mi"}
    meta: dict[str, Any] = {"name": p.name, "namespace": NAMESPACE}
    if ann:
        meta["annotations"] = ann
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "main", "image": "openb/task",
                                     "resources": {"requests": res, "limits": dict(res)}}]}}


def import_openb(nodes: str | Path, pods: str | Path, out: str | Path) -> tuple[Path, Path]:
    """Write ``out/nodes.yaml`` and ``out/pods.yaml``; returns their paths."""
    node_list, pod_list = read_nodes(nodes), read_pods(pods)
    out_dir = Path(out)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise KubeschedError(f"{out_dir}: {exc.strerror or exc}") from exc
    return (_write(out_dir / "nodes.yaml", [node_manifest(n) for n in node_list]),
            _write(out_dir / "pods.yaml", [pod_manifest(p) for p in pod_list]))


def _write(path: Path, docs: Sequence[dict[str, Any]]) -> Path:
    text = yaml.dump_all(docs, Dumper=_Dumper, sort_keys=False, default_flow_style=False)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise KubeschedError(f"{path}: {exc.strerror or exc}") from exc
    return path
