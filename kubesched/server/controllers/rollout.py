"""The arithmetic of a Deployment rollout, as pure functions on raw objects.

Upstream's ``pkg/controller/deployment/util``: resolving ``maxSurge``/``maxUnavailable``
(percentages of the desired replicas: surge rounded up, unavailability rounded down, and
never both zero), how many replicas the new ReplicaSet may have, the Deployment's status
and its ``Available``/``Progressing`` conditions (reasons and messages as upstream writes
them, because ``kubectl rollout status`` and ``kubectl describe`` read them).
"""

from __future__ import annotations

import math
from typing import Any

from kubesched.server.controllers.base import meta, parse_time, timestamp
from kubesched.server.controllers.informer import Obj

REVISION = "deployment.kubernetes.io/revision"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"

NEW_RS_CREATED = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
RS_UPDATED = "ReplicaSetUpdated"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"
MIN_AVAILABLE = "MinimumReplicasAvailable"
MIN_UNAVAILABLE = "MinimumReplicasUnavailable"


def spec(obj: Obj) -> dict[str, Any]:
    s = obj.get("spec")
    return s if isinstance(s, dict) else {}


def status(obj: Obj) -> dict[str, Any]:
    s = obj.get("status")
    return s if isinstance(s, dict) else {}


def replicas(obj: Obj) -> int:
    return int(spec(obj).get("replicas") or 0)


def revision(rs: Obj) -> int:
    try:
        return int((meta(rs).get("annotations") or {}).get(REVISION) or 0)
    except (TypeError, ValueError):
        return 0


def scaled_value(value: Any, total: int, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``."""
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value)
    if text.endswith("%"):
        pct = int(text[:-1])
        v = pct * total / 100
        return int(math.ceil(v)) if round_up else int(math.floor(v))
    raise ValueError(f"invalid value for IntOrString: invalid type: string is not a percentage: {text!r}")


def resolve_fenceposts(surge_value: Any, unavailable_value: Any, desired: int) -> tuple[int, int]:
    """``ResolveFenceposts``: absent values count as 0; both 0 means 1 unavailable.
    Raises ValueError for a value that is neither an integer nor a percentage."""
    surge = scaled_value(surge_value, desired, True)
    unavailable = scaled_value(unavailable_value, desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def fenceposts(d: Obj) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) of a RollingUpdate Deployment."""
    ru = (spec(d).get("strategy") or {}).get("rollingUpdate") or {}
    return resolve_fenceposts(ru.get("maxSurge"), ru.get("maxUnavailable"), replicas(d))


def is_rolling(d: Obj) -> bool:
    return bool((spec(d).get("strategy") or {}).get("type", "RollingUpdate") == "RollingUpdate")


def max_unavailable(d: Obj) -> int:
    if not is_rolling(d) or replicas(d) == 0:
        return 0
    return min(fenceposts(d)[1], replicas(d))


def max_surge(d: Obj) -> int:
    return fenceposts(d)[0] if is_rolling(d) else 0


def sum_spec(rss: list[Obj]) -> int:
    return sum(replicas(rs) for rs in rss)


def sum_status(rss: list[Obj], field: str) -> int:
    return sum(int(status(rs).get(field) or 0) for rs in rss)


def new_rs_replicas(d: Obj, all_rss: list[Obj], new_rs_replicas_now: int) -> int:
    """``NewRSNewReplicas``: how far the new ReplicaSet may be scaled up now."""
    if not is_rolling(d):
        return replicas(d)
    total_max = replicas(d) + max_surge(d)
    current = sum_spec(all_rss)
    if current >= total_max:
        return new_rs_replicas_now
    up = min(total_max - current, replicas(d) - new_rs_replicas_now)
    return new_rs_replicas_now + up


def set_condition(st: dict[str, Any], cond: dict[str, Any]) -> None:
    """``SetDeploymentCondition``: same status and reason: unchanged; same status: keep
    ``lastTransitionTime``; the condition moves to the end of the list."""
    conds = st.get("conditions") or []
    cur = next((c for c in conds if c.get("type") == cond["type"]), None)
    if cur is not None and cur.get("status") == cond["status"] and cur.get("reason") == cond["reason"]:
        return
    if cur is not None and cur.get("status") == cond["status"]:
        cond["lastTransitionTime"] = cur.get("lastTransitionTime")
    st["conditions"] = [c for c in conds if c.get("type") != cond["type"]] + [cond]


def remove_condition(st: dict[str, Any], type_: str) -> None:
    conds = [c for c in st.get("conditions") or [] if c.get("type") != type_]
    if conds:
        st["conditions"] = conds
    else:
        st.pop("conditions", None)


def get_condition(st: dict[str, Any], type_: str) -> dict[str, Any] | None:
    return next((c for c in st.get("conditions") or [] if c.get("type") == type_), None)


def new_condition(type_: str, status_: str, reason: str, message: str, now: float) -> dict[str, Any]:
    ts = timestamp(now)
    return {"type": type_, "status": status_, "lastUpdateTime": ts, "lastTransitionTime": ts,
            "reason": reason, "message": message}


def calculate_status(d: Obj, all_rss: list[Obj], new_rs: Obj | None, now: float) -> dict[str, Any]:
    """``calculateStatus``: counts from the ReplicaSets, and the Available condition."""
    avail = sum_status(all_rss, "availableReplicas")
    st: dict[str, Any] = {
        "observedGeneration": meta(d).get("generation", 1),
        "replicas": sum_status(all_rss, "replicas"),
        "updatedReplicas": sum_status([new_rs], "replicas") if new_rs is not None else 0,
        "readyReplicas": sum_status(all_rss, "readyReplicas"),
        "availableReplicas": avail,
        "unavailableReplicas": max(0, sum_spec(all_rss) - avail),
    }
    old = status(d)
    if old.get("collisionCount") is not None:
        st["collisionCount"] = old["collisionCount"]
    if old.get("conditions"):
        st["conditions"] = [dict(c) for c in old["conditions"]]
    if avail >= replicas(d) - max_unavailable(d):
        set_condition(st, new_condition("Available", "True", MIN_AVAILABLE, "Deployment has minimum availability.",
                                        now))
    else:
        set_condition(st, new_condition("Available", "False", MIN_UNAVAILABLE,
                                        "Deployment does not have minimum availability.", now))
    return st


def complete(d: Obj, st: dict[str, Any]) -> bool:
    """``DeploymentComplete``."""
    want = replicas(d)
    return (int(st.get("updatedReplicas") or 0) == want and int(st.get("replicas") or 0) == want
            and int(st.get("availableReplicas") or 0) == want
            and int(st.get("observedGeneration") or 0) >= int(meta(d).get("generation") or 0))


def progressing(d: Obj, st: dict[str, Any]) -> bool:
    """``DeploymentProgressing``: more updated, fewer old, more ready or more available."""
    old = status(d)

    def n(s: dict[str, Any], k: str) -> int:
        return int(s.get(k) or 0)

    return (n(st, "updatedReplicas") > n(old, "updatedReplicas")
            or n(st, "replicas") - n(st, "updatedReplicas") < n(old, "replicas") - n(old, "updatedReplicas")
            or n(st, "readyReplicas") > n(old, "readyReplicas")
            or n(st, "availableReplicas") > n(old, "availableReplicas"))


def deadline(d: Obj) -> int | None:
    """``progressDeadlineSeconds``; None when unset or "infinite" (MaxInt32)."""
    v = spec(d).get("progressDeadlineSeconds")
    return None if v is None or int(v) == 2**31 - 1 else int(v)


def timed_out(d: Obj, st: dict[str, Any], now: float) -> bool:
    """``DeploymentTimedOut``."""
    limit = deadline(d)
    cond = get_condition(st, "Progressing")
    if limit is None or cond is None or cond.get("reason") == NEW_RS_AVAILABLE:
        return False
    if cond.get("reason") == TIMED_OUT:
        return True
    since = parse_time(cond.get("lastUpdateTime"))
    return since is not None and since + limit < now


def rollout_status(d: Obj, all_rss: list[Obj], new_rs: Obj | None, now: float) -> dict[str, Any]:
    """``syncRolloutStatus``: the status with the Progressing condition brought up to date."""
    st = calculate_status(d, all_rss, new_rs, now)
    if deadline(d) is None:
        remove_condition(st, "Progressing")
        return st
    cur = get_condition(status(d), "Progressing")
    done = (st["replicas"] == st["updatedReplicas"] and cur is not None and cur.get("reason") == NEW_RS_AVAILABLE)
    if done:
        return st
    rs_name = meta(new_rs).get("name") if new_rs is not None else None
    if complete(d, st):
        msg = f'ReplicaSet "{rs_name}" has successfully progressed.' if rs_name else \
            f'Deployment "{meta(d).get("name")}" has successfully progressed.'
        set_condition(st, new_condition("Progressing", "True", NEW_RS_AVAILABLE, msg, now))
    elif progressing(d, st):
        msg = f'ReplicaSet "{rs_name}" is progressing.' if rs_name else \
            f'Deployment "{meta(d).get("name")}" is progressing.'
        cond = new_condition("Progressing", "True", RS_UPDATED, msg, now)
        if cur is not None:
            if cur.get("status") == "True":
                cond["lastTransitionTime"] = cur.get("lastTransitionTime")
            remove_condition(st, "Progressing")
        set_condition(st, cond)
    elif timed_out(d, st, now):
        msg = f'ReplicaSet "{rs_name}" has timed out progressing.' if rs_name else \
            f'Deployment "{meta(d).get("name")}" has timed out progressing.'
        set_condition(st, new_condition("Progressing", "False", TIMED_OUT, msg, now))
    return st


def stuck_recheck(d: Obj, st: dict[str, Any], now: float) -> float | None:
    """``requeueStuckDeployment``: seconds until the deadline should be checked again."""
    limit = deadline(d)
    cond = get_condition(st, "Progressing")
    if limit is None or cond is None or cond.get("reason") in (NEW_RS_AVAILABLE, TIMED_OUT) or complete(d, st):
        return None
    since = parse_time(cond.get("lastUpdateTime"))
    if since is None:
        return None
    return max(0.0, since + limit - now) + 1.0
