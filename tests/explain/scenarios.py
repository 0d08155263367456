"""Small clusters for the blocker and fix tests, written as the manifests a user would give,
and the independent check that a fix is true: apply it to the manifests (JSON patches with
the API server's own RFC 6902 implementation), run a fresh simulation, see the pod land."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import yaml

from kubesched.api.decode import load_manifests
from kubesched.config import load_config
from kubesched.explanation.fixbase import Fix
from kubesched.explanation.fixes import FixReport, find_fixes
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.whatif import SchedulerWhatIf
from kubesched.server.apiserver.registry.patch import json_patch
from kubesched.sim.driver import Simulation

Obj = dict[str, Any]
ZONE = "topology.kubernetes.io/zone"


def node(name: str, cpu: str = "4", labels: dict[str, str] | None = None, taints: list[Obj] | None = None,
         extra: dict[str, str] | None = None) -> Obj:
    spec: Obj = {"taints": taints} if taints else {}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": spec, "status": {"capacity": {"cpu": cpu, "memory": "16Gi", "pods": "110", **(extra or {})}}}


def pod(name: str, cpu: str = "1", on: str | None = None, labels: dict[str, str] | None = None,
        spec: Obj | None = None, extra: dict[str, str] | None = None, owner: Obj | None = None) -> Obj:
    meta: Obj = {"name": name, "namespace": "default", "labels": labels or {}}
    if owner is not None:
        meta["ownerReferences"] = [owner]
    resources: Obj = {"requests": {"cpu": cpu, **(extra or {})}}
    if extra:  # extended resources need limits equal to requests
        resources["limits"] = dict(extra)
    body: Obj = {"containers": [{"name": "c", "image": "nginx", "resources": resources}], **(spec or {})}
    if on:
        body["nodeName"] = on
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body}


def simulate(tmp_path: Path, objs: list[Obj], name: str = "c.yaml") -> Simulation:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(objs))
    sim = Simulation(load_manifests([str(path)]), load_config(None, in_tree_registry()), tie_break="name",
                     explain=True)
    sim.run()
    return sim


def search(tmp_path: Path, objs: list[Obj], target: str, limit: int = 20) -> tuple[Simulation, FixReport]:
    """The cluster run to the end, then the fixes of ``target`` (still pending)."""
    sim = simulate(tmp_path, objs)
    out = next(o for o in sim.results() if o.pod.name == target)
    assert out.status == "Unschedulable", out.status
    p = dataclasses.replace(sim.cluster.pods[out.pod.uid], nominated_node_name="")
    world = SchedulerWhatIf(sim.sched, list(sim.cluster.priority_classes.values()))
    return sim, find_fixes(world, p, limit)


def _named(objs: list[Obj], kind: str, name: str) -> Obj:
    return next(o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name)


def applied(objs: list[Obj], fix: Fix, target: str) -> list[Obj]:
    """The manifests once ``fix`` is applied by hand, as a user would (deleted pods that a
    controller recreates come back pending)."""
    out = copy.deepcopy(objs)
    kind, _, rest = fix.target.partition("/")
    if kind == "pod":
        p = _named(out, "Pod", target)
        out[out.index(p)] = json_patch(p, copy.deepcopy(fix.patch))
    elif kind == "node" and fix.patch_type == "json":
        n = _named(out, "Node", rest)
        out[out.index(n)] = json_patch(n, copy.deepcopy(fix.patch))
    elif fix.patch_type == "create":
        out.append(copy.deepcopy(fix.patch))
    for key in fix.disturbs:
        p = _named(out, "Pod", key.split("/", 1)[1])
        out.remove(p)
        if fix.kind == "move-pods":  # its controller recreates it, pending
            again = copy.deepcopy(p)
            again["spec"].pop("nodeName", None)
            out.append(again)
    return out


def assert_true_fix(tmp_path: Path, objs: list[Obj], fix: Fix, target: str) -> None:
    """Applied by hand, ``fix`` lets a fresh run schedule ``target``, and every other pod
    that was bound stays bound (moved pods land again)."""
    sim = simulate(tmp_path, applied(objs, fix, target), name=f"fix-{fix.kind}.yaml")
    by_name = {o.pod.name: o for o in sim.results()}
    assert by_name[target].status == "Scheduled", (fix.to_json(), by_name[target].message)
    for key in fix.moves:
        assert by_name[key.split("/", 1)[1]].status == "Scheduled", (fix.kind, key)
    gone = {o.pod.key for o in sim.outcomes.values() if o.status == "Preempted"}
    assert gone <= set(fix.disturbs), (fix.kind, gone)
