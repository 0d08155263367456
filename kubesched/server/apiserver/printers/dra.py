"""``kubectl get`` columns of the resource.k8s.io/v1 kinds and of Jobs, as upstream prints
them (``pkg/printers/internalversion/printers.go``: ``printDeviceClass``,
``printResourceClaim`` with ``resourceClaimState``, ``printResourceClaimTemplate``,
``printResourceSlice``, ``printJob``). Merged into :mod:`.tables`' printers like
:mod:`.storagetables`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubesched.server.apiserver.printers.storage import AGE, NAME, Printer, Row, RowFn, col
from kubesched.server.apiserver.strategies.base import parse_rfc3339


def claim_state(claim: Mapping[str, Any]) -> str:
    """``resourceClaimState``: deleted / pending / allocated(,reserved), comma-joined."""
    meta, status = claim.get("metadata") or {}, claim.get("status") or {}
    states = ["deleted"] if meta.get("deletionTimestamp") else []
    if status.get("allocation") is None:
        if not meta.get("deletionTimestamp"):
            states.append("pending")
    else:
        states.append("allocated")
        if status.get("reservedFor"):
            states.append("reserved")
    return ",".join(states)


def job_status(job: Mapping[str, Any]) -> str:
    """The STATUS column: the last true terminal-ish condition, else Running/Suspended."""
    conds = {c.get("type"): c.get("status") for c in (job.get("status") or {}).get("conditions") or []
             if isinstance(c, Mapping)}
    for type_ in ("Failed", "Complete", "SuccessCriteriaMet", "FailureTarget", "Suspended"):
        if conds.get(type_) == "True":
            return type_
    if (job.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    return "Running"


def _duration(job: Mapping[str, Any], now: float, age: Callable[[Any, float], str]) -> str:
    status = job.get("status") or {}
    start = parse_rfc3339(status.get("startTime") or "")
    if start is None:
        return ""
    end = parse_rfc3339(status.get("completionTime") or "")
    return age(status.get("startTime"), end if end is not None else now)


def _job_row(job: Mapping[str, Any], now: float, age: Callable[[Any, float], str]) -> Row:
    meta, spec, status = job.get("metadata") or {}, job.get("spec") or {}, job.get("status") or {}
    succeeded = status.get("succeeded", 0)
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{spec['completions']}"
    else:
        parallelism = spec.get("parallelism", 0)
        completions = f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
    sel = ",".join(f"{k}={v}" for k, v in sorted(((spec.get("selector") or {}).get("matchLabels") or {}).items()))
    return [meta.get("name"), job_status(job), completions, _duration(job, now, age),
            age(meta.get("creationTimestamp"), now), ",".join(c.get("name", "") for c in containers),
            ",".join(c.get("image", "") for c in containers), sel]


def _named(*fns: Callable[[Mapping[str, Any]], Any]) -> RowFn:
    def row(o: Mapping[str, Any], now: float, age: Callable[[Any, float], str]) -> Row:
        meta = o.get("metadata") or {}
        return [meta.get("name"), *(f(o) for f in fns), age(meta.get("creationTimestamp"), now)]
    return row


def _slice(key: str) -> Callable[[Mapping[str, Any]], Any]:
    def cell(o: Mapping[str, Any]) -> Any:
        spec = o.get("spec") or {}
        return (spec.get("pool") or {}).get("name", "") if key == "pool" else spec.get(key) or ""
    return cell


DRA_COLUMNS: dict[str, tuple[list[dict[str, Any]], RowFn]] = {
    "resource.k8s.io/deviceclasses": ([NAME, AGE], _named()),
    "resource.k8s.io/resourceclaims": ([NAME, col("State"), AGE], _named(claim_state)),
    "resource.k8s.io/resourceclaimtemplates": ([NAME, AGE], _named()),
    "resource.k8s.io/resourceslices": ([NAME, col("Node"), col("Driver"), col("Pool"), AGE],
                                       _named(_slice("nodeName"), _slice("driver"), _slice("pool"))),
    "batch/jobs": ([NAME, col("Status"), col("Completions"), col("Duration"), AGE, col("Containers", 1),
                    col("Images", 1), col("Selector", 1)], _job_row),
}


def dra_printers(age: Callable[[Any, float], str]) -> dict[str, Printer]:
    return {key: (columns, (lambda f: lambda o, now: f(o, now, age))(fn)) for key, (columns, fn) in DRA_COLUMNS.items()}
