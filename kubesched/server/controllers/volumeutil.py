"""What the storage controllers share about PVs and claims, on raw objects (pure).

The names and rules are upstream's ``k8s.io/component-helpers/storage/volume`` and
``pkg/controller/volume/persistentvolume`` helpers:

* the annotations the PV controller and the scheduler write (``bind-completed``,
  ``bound-by-controller``, ``selected-node``, ``storage-provisioner``, ``provisioned-by``);
* a claim's class (the beta annotation wins over ``spec.storageClassName``), a volume's;
* :func:`bound_to_claim` (``IsVolumeBoundToClaim``) and :func:`claim_ref` (the reference
  ``GetBindVolumeToClaim`` writes);
* :func:`find_best_match`: the PV controller's ``findByClaim``. Volumes are grouped by
  their set of access modes; the groups whose modes contain the claim's are tried from
  the fewest modes up, and in the first group with a match the smallest volume big
  enough wins (``FindMatchingVolume`` with no node). A volume already pre-bound to the
  claim wins at once. Under delayed binding (WaitForFirstConsumer) only a pre-bound
  volume matches: the scheduler picks the others.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from kubesched.api.errors import DecodeError
from kubesched.api.quantity import parse_quantity
from kubesched.api.selectors import LabelSelector

Obj = dict[str, Any]

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
ANN_BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"


def meta(obj: Mapping[str, Any]) -> dict[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def spec(obj: Mapping[str, Any]) -> dict[str, Any]:
    s = obj.get("spec")
    return s if isinstance(s, dict) else {}


def annotations_of(obj: Mapping[str, Any]) -> dict[str, str]:
    return dict(meta(obj).get("annotations") or {})


def phase(obj: Mapping[str, Any]) -> str:
    return str((obj.get("status") or {}).get("phase") or "")


def claim_class(pvc: Mapping[str, Any]) -> str:
    ann = annotations_of(pvc)
    if ANN_BETA_CLASS in ann:
        return ann[ANN_BETA_CLASS]
    return str(spec(pvc).get("storageClassName") or "")


def volume_class(pv: Mapping[str, Any]) -> str:
    ann = annotations_of(pv)
    if ANN_BETA_CLASS in ann:
        return ann[ANN_BETA_CLASS]
    return str(spec(pv).get("storageClassName") or "")


def storage(q: Any) -> Fraction | None:
    try:
        return parse_quantity(q).amount
    except (DecodeError, TypeError, ValueError):
        return None


def requested(pvc: Mapping[str, Any]) -> Fraction:
    req = ((spec(pvc).get("resources") or {}).get("requests") or {}).get("storage")
    return storage(req) or Fraction(0)


def capacity(pv: Mapping[str, Any]) -> Fraction:
    return storage((spec(pv).get("capacity") or {}).get("storage")) or Fraction(0)


def claim_ref(pvc: Mapping[str, Any]) -> Obj:
    m = meta(pvc)
    return {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": m.get("namespace"),
            "name": m.get("name"), "uid": m.get("uid"), "resourceVersion": m.get("resourceVersion")}


def bound_to_claim(pv: Mapping[str, Any], pvc: Mapping[str, Any]) -> bool:
    """``IsVolumeBoundToClaim``: the claimRef names the claim (and its uid, if it has one)."""
    ref = spec(pv).get("claimRef")
    if not isinstance(ref, dict):
        return False
    m = meta(pvc)
    if ref.get("name") != m.get("name") or ref.get("namespace") != m.get("namespace"):
        return False
    return not ref.get("uid") or ref.get("uid") == m.get("uid")


def volume_mode(obj: Mapping[str, Any]) -> str:
    return str(spec(obj).get("volumeMode") or "Filesystem")


def _selector_matches(pvc: Mapping[str, Any], pv: Mapping[str, Any]) -> bool:
    raw = spec(pvc).get("selector")
    if raw is None:
        return True
    try:
        sel = LabelSelector.parse(raw, "spec.selector")
    except DecodeError:
        return False
    return sel.matches(dict(meta(pv).get("labels") or {}))


def find_best_match(pvc: Mapping[str, Any], volumes: Iterable[Mapping[str, Any]], *,
                    delay_binding: bool) -> Mapping[str, Any] | None:
    wanted = set(spec(pvc).get("accessModes") or [])
    groups: dict[frozenset[str], list[Mapping[str, Any]]] = {}
    for pv in volumes:
        groups.setdefault(frozenset(spec(pv).get("accessModes") or []), []).append(pv)
    need = requested(pvc)
    for modes in sorted((m for m in groups if wanted <= m), key=lambda m: (len(m), sorted(m))):
        best: Mapping[str, Any] | None = None
        for pv in groups[modes]:
            if volume_mode(pv) != volume_mode(pvc) or meta(pv).get("deletionTimestamp"):
                continue
            if bound_to_claim(pv, pvc):
                return pv
            if delay_binding:
                continue
            if phase(pv) != "Available" or spec(pv).get("claimRef") is not None:
                continue
            if not _selector_matches(pvc, pv) or volume_class(pv) != claim_class(pvc):
                continue
            if capacity(pv) >= need and (best is None or capacity(best) > capacity(pv)):
                best = pv
        if best is not None:
            return best
    return None


def node_affinity_terms(requirements: list[tuple[str, list[str]]]) -> Obj:
    """A PV's required node affinity: one term ANDing ``key In values``."""
    return {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": k, "operator": "In", "values": list(v)} for k, v in requirements]}]}}
