"""``kubectl get`` columns of Secrets, ServiceAccounts, DaemonSets and CronJobs, as upstream
prints them (``pkg/printers/internalversion/printers.go``: ``printSecret``,
``printServiceAccount``, ``printDaemonSet``, ``printCronJob``, ``printControllerRevision``); merged into
:mod:`.tables`' printers like :mod:`.storagetables`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubesched.server.apiserver.strategies.apps import selector_string
from kubesched.server.apiserver.printers.storage import NONE, Printer, Row, col

NAME, AGE = col("Name", type_="string", fmt="name"), col("Age")


def _labels(m: Any) -> str:
    """``labels.FormatLabels``: ``k=v`` sorted, ``<none>`` when empty."""
    return ",".join(f"{k}={v}" for k, v in sorted((m or {}).items())) or NONE


def _pod_template(o: Mapping[str, Any], *path: str) -> list[str]:
    spec: Any = o.get("spec") or {}
    for p in path:
        spec = (spec or {}).get(p) or {}
    containers = (spec.get("spec") or {}).get("containers") or []
    return [",".join(str(c.get("name")) for c in containers), ",".join(str(c.get("image")) for c in containers)]


def _daemonset_row(o: Mapping[str, Any], now: float, age: Callable[[Any, float], str]) -> Row:
    meta, spec, st = o.get("metadata") or {}, o.get("spec") or {}, o.get("status") or {}
    return [meta.get("name"), st.get("desiredNumberScheduled", 0), st.get("currentNumberScheduled", 0),
            st.get("numberReady", 0), st.get("updatedNumberScheduled", 0), st.get("numberAvailable", 0),
            _labels(((spec.get("template") or {}).get("spec") or {}).get("nodeSelector")),
            age(meta.get("creationTimestamp"), now), *_pod_template(o, "template"),
            selector_string(spec.get("selector")) or NONE]


def _cronjob_row(o: Mapping[str, Any], now: float, age: Callable[[Any, float], str]) -> Row:
    meta, spec, st = o.get("metadata") or {}, o.get("spec") or {}, o.get("status") or {}
    last = st.get("lastScheduleTime")
    job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    return [meta.get("name"), spec.get("schedule", ""), spec.get("timeZone") or NONE, bool(spec.get("suspend")),
            len(st.get("active") or []), age(last, now) if last else NONE, age(meta.get("creationTimestamp"), now),
            *_pod_template({"spec": job_spec}, "template"), selector_string(job_spec.get("selector")) or NONE]


def _controller(o: Mapping[str, Any]) -> str:
    """``printControllerRevision``'s CONTROLLER: ``daemonset.apps/name``, ``<none>`` without one."""
    for ref in (o.get("metadata") or {}).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller"):
            group = str(ref.get("apiVersion") or "").rpartition("/")[0]
            kind = str(ref.get("kind") or "")
            return f"{kind}.{group}/{ref.get('name')}".lower() if group else f"{kind}/{ref.get('name')}".lower()
    return NONE


def _simple(*fields: Callable[[Mapping[str, Any]], Any]) -> Callable[[Mapping[str, Any], float,
                                                                       Callable[[Any, float], str]], Row]:
    def row(o: Mapping[str, Any], now: float, age: Callable[[Any, float], str]) -> Row:
        meta = o.get("metadata") or {}
        return [meta.get("name"), *(f(o) for f in fields), age(meta.get("creationTimestamp"), now)]
    return row


COLUMNS = {
    "core/secrets": ([NAME, col("Type"), col("Data", type_="integer"), AGE],
                     _simple(lambda o: o.get("type", ""), lambda o: len(o.get("data") or {}))),
    "core/serviceaccounts": ([NAME, col("Secrets", type_="integer"), AGE],
                             _simple(lambda o: len(o.get("secrets") or []))),
    "apps/daemonsets": ([NAME, col("Desired", type_="integer"), col("Current", type_="integer"),
                         col("Ready", type_="integer"), col("Up-to-date", type_="integer"),
                         col("Available", type_="integer"), col("Node Selector"), AGE, col("Containers", 1),
                         col("Images", 1), col("Selector", 1)], _daemonset_row),
    "apps/controllerrevisions": ([NAME, col("Controller"), col("Revision", type_="integer"), AGE],
                                 _simple(_controller, lambda o: o.get("revision", 0))),
    "batch/cronjobs": ([NAME, col("Schedule"), col("Timezone"), col("Suspend", type_="boolean"),
                        col("Active", type_="integer"), col("Last Schedule"), AGE, col("Containers", 1),
                        col("Images", 1), col("Selector", 1)], _cronjob_row),
}


def workctl_printers(age: Callable[[Any, float], str]) -> dict[str, Printer]:
    out: dict[str, Printer] = {}
    for key, (columns, fn) in COLUMNS.items():
        out[key] = (columns, (lambda f: lambda o, now: f(o, now, age))(fn))
    return out
