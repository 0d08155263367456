"""The pod ``binding`` and ``eviction`` subresources and the workloads' ``scale``.

* binding (``pkg/registry/core/pod/storage`` ``assignPod``): sets ``spec.nodeName`` and
  the ``PodScheduled=True`` condition in one write; a pod that is already bound, or
  being deleted, gets 409 Conflict, so a pod is never bound twice or to two nodes however
  many schedulers race.
* eviction (``pkg/registry/core/pod/storage/eviction.go``): a running pod covered by a
  PodDisruptionBudget is deleted only if the budget's ``status.disruptionsAllowed`` is
  positive, which it decrements (recording the pod in ``disruptedPods``) in the same
  transaction; otherwise 429 (also while the budget's ``observedGeneration`` lags its
  generation: "still being processed"). Pending, terminal or terminating pods are deleted
  without a budget check, and so is a Running pod that is not Ready under
  ``unhealthyPodEvictionPolicy`` AlwaysAllow, or IfHealthyBudget (the default) while the
  budget is met. More than one budget is a 500, as upstream.
* scale: the ``autoscaling/v1`` Scale view of a Deployment or ReplicaSet; writing it sets
  ``spec.replicas``.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from kubesched.api.errors import DecodeError
from kubesched.api.policy import PodDisruptionBudget
from kubesched.api.schema import json_kind as _json_type
from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.strategies.apps import WorkloadStrategy
from kubesched.server.apiserver.registry.deletion import delete_in_txn, write_update
from kubesched.server.apiserver.registry.options import delete_options
from kubesched.server.apiserver.registry.patch import apply_patch
from kubesched.server.apiserver.registry.resources import Resource
from kubesched.server.apiserver.strategies.base import rfc3339
from kubesched.server.store import StoreError, Txn

if TYPE_CHECKING:
    from kubesched.server.apiserver.registry.registry import Registry

PODS = "core/pods"
SUCCESS_201 = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


class _RollBack(Exception):
    """Raised inside a dry run's transaction so that nothing it wrote is kept."""


class _DryScale(_RollBack):
    def __init__(self, obj: dict[str, Any]) -> None:
        super().__init__("dry run")
        self.obj = obj


def _typed(body: dict[str, Any], field: str, want: type, kind: str, go_type: str) -> Any:
    """``body[field]`` if absent, null or of JSON type ``want``; else 400 as Go's decoder."""
    value = body.get(field)
    if value is None or (isinstance(value, want) and not (want is int and isinstance(value, bool))):
        return value
    got = _json_type(value)
    raise E.bad_request(f"{kind} in version \"v1\" cannot be handled as a {kind}: json: cannot unmarshal {got} "
                        f"into Go struct field {kind}.{field} of type {go_type}")


def bind(reg: "Registry", namespace: str, name: str, binding: Any, dry_run: bool = False) -> dict[str, Any]:
    if not isinstance(binding, dict):
        raise E.bad_request("the body of the request must be a Binding object")
    if binding.get("kind") not in (None, "", "Binding"):
        raise E.bad_request(f'{binding.get("kind")} in version "{binding.get("apiVersion", "")}" cannot be '
                            'handled as a Binding')
    target = _typed(binding, "target", dict, "Binding", "v1.ObjectReference") or {}
    node = _typed(target, "name", str, "Binding", "string")
    _typed(target, "kind", str, "Binding", "string")
    meta = _typed(binding, "metadata", dict, "Binding", "v1.ObjectMeta") or {}
    _typed(meta, "annotations", dict, "Binding", "map[string]string")
    if not node or not isinstance(node, str):
        raise E.invalid("Binding", "", name, [("FieldValueRequired", "target.name", "Required value")])
    if target.get("kind") not in (None, "", "Node"):
        raise E.invalid("Binding", "", name, [("FieldValueNotSupported", "target.kind",
                                               f'Unsupported value: "{target.get("kind")}": '
                                               'supported values: "Node"')])

    def fn(cur: dict[str, Any], tx: Txn) -> dict[str, Any]:
        cmeta, spec = cur["metadata"], cur.setdefault("spec", {})
        if meta.get("uid") and meta["uid"] != cmeta.get("uid"):
            raise E.conflict("pods/binding", "", name, f"Precondition failed: UID in precondition: "
                             f"{meta['uid']}, UID in object meta: {cmeta.get('uid')}")
        if meta.get("resourceVersion") and str(meta["resourceVersion"]) != cmeta.get("resourceVersion"):
            raise E.conflict("pods/binding", "", name, "the object has been modified; please apply your "
                             "changes to the latest version and try again")
        if cmeta.get("deletionTimestamp"):
            raise E.conflict("pods/binding", "", name, f"pod {name} is being deleted, cannot be assigned "
                             "to a host")
        if spec.get("nodeName"):
            raise E.conflict("pods/binding", "", name, f'pod {name} is already assigned to node '
                             f'"{spec["nodeName"]}"')
        new = cur  # read for this transaction alone (a fresh decode): changed in place, not copied
        new["spec"]["nodeName"] = node
        if reg.clear_nominated_on_binding:  # upstream's ClearingNominatedNodeNameAfterBinding (1.35+)
            (new.get("status") or {}).pop("nominatedNodeName", None)
        ann = meta.get("annotations")
        if isinstance(ann, dict) and ann:
            new["metadata"].setdefault("annotations", {}).update(ann)
        status = new.setdefault("status", {})
        conds = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
        old = next((c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), None)
        cond = {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                "lastTransitionTime": rfc3339(reg.clock())}
        if old is not None and old.get("status") == "True":
            cond["lastTransitionTime"] = old.get("lastTransitionTime")
        status["conditions"] = [cond] + conds if old is None else \
            [cond if c.get("type") == "PodScheduled" else c for c in status.get("conditions") or []]
        out = tx.update(PODS, namespace, name, new)
        if dry_run:
            raise _RollBack()
        return out

    try:
        reg.store.guaranteed_update(PODS, namespace, name, fn)
    except _RollBack:
        pass
    except StoreError as exc:
        raise E.from_store_error(exc, "pods", "", name) from None
    return dict(SUCCESS_201)


def _matching_pdbs(tx: Txn, pod: dict[str, Any]) -> list[dict[str, Any]]:
    labels = (pod.get("metadata") or {}).get("labels") or {}
    ns = pod["metadata"].get("namespace", "")
    out = []
    for raw in tx.list("policy/poddisruptionbudgets", ns):
        try:
            pdb = PodDisruptionBudget.from_dict(raw)
        except DecodeError:
            continue
        if pdb.selector.matches(labels):  # policy/v1: {} matches every pod, null none
            out.append(raw)
    return out


def evict(reg: "Registry", namespace: str, name: str, eviction: Any, dry_run: bool = False) -> dict[str, Any]:
    if not isinstance(eviction, dict):
        raise E.bad_request("the body of the request must be an Eviction object")
    if eviction.get("kind") not in (None, "", "Eviction"):
        raise E.bad_request(f'{eviction.get("kind")} cannot be handled as an Eviction')
    emeta = _typed(eviction, "metadata", dict, "Eviction", "v1.ObjectMeta") or {}
    if emeta.get("name") and emeta["name"] != name:
        raise E.bad_request("name in URL does not match name in Eviction object")
    options = delete_options(_typed(eviction, "deleteOptions", dict, "Eviction", "v1.DeleteOptions") or {})
    if dry_run:
        options["dryRun"] = ["All"]
    try:
        with reg.store.txn() as tx:
            pod = tx.get(PODS, namespace, name)
            if pod is None:
                raise E.not_found("pods", "", name)
            phase = (pod.get("status") or {}).get("phase")
            if not pod["metadata"].get("deletionTimestamp") and phase not in ("Pending", "Succeeded", "Failed"):
                _consume_budget(reg, tx, pod)
            delete_in_txn(reg, tx, reg.resource("pods"), namespace, name, options)
            if options.get("dryRun"):
                raise _RollBack()
    except _RollBack:
        pass
    except StoreError as exc:
        raise E.from_store_error(exc, "pods", "", name) from None
    return dict(SUCCESS_201)


def _consume_budget(reg: "Registry", tx: Txn, pod: dict[str, Any]) -> None:
    pdbs = _matching_pdbs(tx, pod)
    if len(pdbs) > 1:
        raise E.ApiError(500, "InternalError", "This pod has more than one PodDisruptionBudget, which the "
                         "eviction subresource does not support.")
    if not pdbs:
        return
    pdb = copy.deepcopy(pdbs[0])
    status = pdb.setdefault("status", {})
    pname = pdb["metadata"]["name"]
    if _unhealthy_may_go(pdb, pod):
        return
    if int(status.get("observedGeneration") or 0) < int(pdb["metadata"].get("generation") or 1):
        raise E.too_many_requests("Cannot evict pod as it would violate the pod's disruption budget.", [
            {"reason": "DisruptionBudget", "message": f"The disruption budget {pname} is still being processed "
             "by the server."}])
    allowed = int(status.get("disruptionsAllowed") or 0)
    if allowed <= 0:
        raise E.too_many_requests(
            "Cannot evict pod as it would violate the pod's disruption budget.",
            [{"reason": "DisruptionBudget", "message": f"The disruption budget {pname} needs "
              f"{status.get('desiredHealthy', 0)} healthy pods and has {status.get('currentHealthy', 0)} "
              "currently"}])
    status["disruptionsAllowed"] = allowed - 1
    status.setdefault("disruptedPods", {})[pod["metadata"]["name"]] = rfc3339(reg.clock())
    tx.update("policy/poddisruptionbudgets", pdb["metadata"]["namespace"], pdb["metadata"]["name"], pdb)


def _unhealthy_may_go(pdb: dict[str, Any], pod: dict[str, Any]) -> bool:
    """A running pod that is not Ready may be evicted without using the budget: always under
    ``unhealthyPodEvictionPolicy: AlwaysAllow``, and under ``IfHealthyBudget`` (the default)
    while the budget is met (``currentHealthy >= desiredHealthy``), as upstream."""
    conds = (pod.get("status") or {}).get("conditions") or []
    if any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds if isinstance(c, dict)):
        return False
    policy = (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy") or "IfHealthyBudget"
    if policy == "AlwaysAllow":
        return True
    st = pdb.get("status") or {}
    return int(pdb["metadata"].get("generation") or 1) <= int(st.get("observedGeneration") or 0) and \
        int(st.get("currentHealthy") or 0) >= int(st.get("desiredHealthy") or 0)


def _workload(reg: "Registry", res: Resource) -> WorkloadStrategy:
    strategy = reg.strategy(res)
    if not isinstance(strategy, WorkloadStrategy):
        raise E.not_found_path()
    return strategy


def get_scale(reg: "Registry", res: Resource, namespace: str, name: str) -> dict[str, Any]:
    strategy = _workload(reg, res)
    return strategy.to_scale(reg.get(res, namespace, name))


def update_scale(reg: "Registry", res: Resource, namespace: str, name: str, scale: Any,
                 patch_type: str | None = None, dry_run: bool = False) -> dict[str, Any]:
    strategy = _workload(reg, res)

    def fn(cur: dict[str, Any], tx: Txn) -> dict[str, Any] | None:
        current = strategy.to_scale(cur)
        body = apply_patch(patch_type, current, scale) if patch_type else scale
        if not isinstance(body, dict):
            raise E.bad_request("the body of the request must be a Scale object")
        meta = _typed(body, "metadata", dict, "Scale", "v1.ObjectMeta") or {}
        want_rv = meta.get("resourceVersion")
        if want_rv and str(want_rv) != cur["metadata"].get("resourceVersion"):
            raise E.conflict(res.plural, res.group, name, "the object has been modified; please apply "
                             "your changes to the latest version and try again")
        replicas = (_typed(body, "spec", dict, "Scale", "v1.ScaleSpec") or {}).get("replicas", 0)
        if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
            raise E.invalid("Scale", "autoscaling", name, [
                ("FieldValueInvalid", "spec.replicas", f"Invalid value: {replicas!r}: must be greater "
                 "than or equal to 0")])
        if cur.get("spec", {}).get("replicas") == replicas:
            return None
        new = copy.deepcopy(cur)
        new["spec"]["replicas"] = replicas
        new["metadata"]["generation"] = int(cur["metadata"].get("generation") or 1) + 1
        if dry_run:
            raise _DryScale(new)
        return write_update(reg, tx, res, new, cur)

    try:
        out = reg.store.guaranteed_update(res.storage, namespace, name, fn)
    except _DryScale as d:
        out = d.obj
    except StoreError as exc:
        raise E.from_store_error(exc, res.plural, res.group, name) from None
    return strategy.to_scale(out)
