"""The selector of a pod's default spread constraints (upstream ``plugins/helper/spread.go``
``DefaultSelector`` and ``GetPodServices``), read from the workload listers the
framework handle gives (never from the cluster).

- Every Service in the pod's namespace whose ``spec.selector`` is set and matches the
  pod's labels; their label maps are merged (later Services win on a shared key).
- The pod's controller (the first ownerReference with ``controller: true``), looked up by
  name in the pod's namespace, only for exactly ``v1`` ReplicationController (its label
  map merged into the Services' one), ``apps/v1`` ReplicaSet or StatefulSet (their
  selector's requirements added). Any other owner, or one not found, adds nothing.

An empty result means "no default constraints" for the pod.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubesched.api.objects import Pod
from kubesched.api.selectors import EVERYTHING, LabelSelector, Requirement
from kubesched.api.workloads import controller_of
from kubesched.framework.interface import WorkloadLister

_RC = ("", "v1", "ReplicationController")
_RS = ("apps", "v1", "ReplicaSet")
_SS = ("apps", "v1", "StatefulSet")


def parse_group_version(api_version: str) -> tuple[str, str] | None:
    """``schema.ParseGroupVersion``: "" and "v1" have no group; "a/b" is group a, version
    b; more slashes are an error (None)."""
    if not api_version:
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    return None


def pod_services(pod: Pod, lister: WorkloadLister) -> list[Mapping[str, str]]:
    """``GetPodServices``: the selectors of the Services in the pod's namespace that select
    it (a Service with a nil selector selects nothing)."""
    out: list[Mapping[str, str]] = []
    labels = pod.labels
    for svc in lister.list("Service", pod.namespace):
        sel = svc.label_selector
        if sel is None:
            continue
        if all(labels.get(k) == v for k, v in sel.items()):
            out.append(sel)
    return out


def _as_selector(label_set: Mapping[str, str], extra: tuple[Requirement, ...] = ()) -> LabelSelector:
    reqs = [Requirement(k, "In", frozenset([v])) for k, v in label_set.items()]
    reqs.extend(extra)
    reqs.sort(key=lambda r: r.key)  # labels.Selector keeps requirements sorted by key
    return LabelSelector(tuple(reqs))


def default_selector(pod: Pod, lister: WorkloadLister) -> LabelSelector:
    """``helper.DefaultSelector`` for ``pod``."""
    merged: dict[str, str] = {}
    for sel in pod_services(pod, lister):
        merged.update(sel)
    owner = controller_of(pod.raw)
    if owner is None:
        return _as_selector(merged) if merged else EVERYTHING
    gv = parse_group_version(owner.api_version)
    if gv is None:
        return _as_selector(merged)
    gvk = (gv[0], gv[1], owner.kind)
    if gvk == _RC:
        rc = lister.get("ReplicationController", pod.namespace, owner.name)
        if rc is not None:
            merged.update(rc.label_selector or {})
        return _as_selector(merged)
    if gvk in (_RS, _SS):
        obj = lister.get(gvk[2], pod.namespace, owner.name)
        if obj is not None and not obj.selector.nothing:
            return _as_selector(merged, obj.selector.requirements)
    return _as_selector(merged)
