"""The pod's side of Dynamic Resource Allocation: ``spec.resourceClaims`` (validated as
upstream's pod validation does), ``status.resourceClaimStatuses`` and the containers'
``resources.claims``. Apart from :mod:`kubesched.api.dra` (the resource.k8s.io objects)
because the pod decoder and the API server's pod strategy read it without those objects."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.drafields import _dns_label, _list, _map, _str
from kubesched.api.errors import DecodeError


@dataclass(frozen=True, slots=True)
class PodClaim:
    """One entry of ``pod.spec.resourceClaims``: exactly one of claim_name / template_name."""

    name: str
    claim_name: str
    template_name: str


def pod_claims(raw: Mapping[str, Any]) -> tuple[PodClaim, ...]:
    """``spec.resourceClaims`` of a pod, validated as upstream's pod validation does."""
    spec = raw.get("spec")
    items = spec.get("resourceClaims") if isinstance(spec, Mapping) else None
    out: list[PodClaim] = []
    for i, c in enumerate(_list(items, "spec.resourceClaims")):
        p = f"spec.resourceClaims[{i}]"
        m = _map(c, p)
        name = _dns_label(m.get("name"), f"{p}.name")
        if any(x.name == name for x in out):
            raise DecodeError(f'Duplicate value: "{name}"', field=f"{p}.name")
        cn = _str(m.get("resourceClaimName"), f"{p}.resourceClaimName", required=False)
        tn = _str(m.get("resourceClaimTemplateName"), f"{p}.resourceClaimTemplateName", required=False)
        if bool(cn) == bool(tn):
            raise DecodeError("must specify one of: `resourceClaimName`, `resourceClaimTemplateName`", field=p)
        out.append(PodClaim(name, cn, tn))
    return tuple(out)


def pod_claim_statuses(raw: Mapping[str, Any]) -> dict[str, str]:
    """``status.resourceClaimStatuses``: pod claim name -> generated ResourceClaim name."""
    status = raw.get("status")
    items = status.get("resourceClaimStatuses") if isinstance(status, Mapping) else None
    out: dict[str, str] = {}
    for s in items if isinstance(items, list) else []:
        if isinstance(s, Mapping) and isinstance(s.get("name"), str):
            out[s["name"]] = str(s.get("resourceClaimName") or "")
    return out


def check_container_claims(raw: Mapping[str, Any]) -> None:
    """Containers' ``resources.claims`` must name a pod claim (upstream pod validation)."""
    spec = raw.get("spec")
    if not isinstance(spec, Mapping):
        return
    names = {c.name for c in pod_claims(raw)}
    for section in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(section) or []):
            res = c.get("resources") if isinstance(c, Mapping) else None
            claims = res.get("claims") if isinstance(res, Mapping) else None
            for j, cl in enumerate(claims if isinstance(claims, list) else []):
                n = cl.get("name") if isinstance(cl, Mapping) else None
                if n not in names:
                    raise DecodeError(f'Not found: "{n}": must be one of spec.resourceClaims',
                                      field=f"spec.{section}[{i}].resources.claims[{j}]")
