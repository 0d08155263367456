"""Pod statuses as a kubelet reports them, built as pure functions of the pod and the time.

* :func:`running_status`: phase Running, ``startTime``, host and pod IPs, conditions
  PodReadyToStartContainers/Initialized/Ready/ContainersReady (PodScheduled and any
  other condition kept), every container ``running`` and ready, init containers
  ``terminated`` with reason Completed;
* :func:`succeeded_status`: phase Succeeded, containers terminated (exit code 0,
  Completed), Ready and ContainersReady False with reason PodCompleted;
* :func:`with_ready`: the Ready conditions set again (a node that came back).

Also the small parsers the node agent needs: Go durations (``kubesched.io/run-duration:
1m30s``) and pod IP ranges per node.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import re
from typing import Any

from kubesched.server.controllers.base import timestamp

Obj = dict[str, Any]

_DURATION_RE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: Any) -> float | None:
    """Go's ``time.ParseDuration`` (``30s``, ``1m30s``, ``1.5h``, ``500ms``), in seconds;
    None when ``text`` is not a duration or is negative."""
    if not isinstance(text, str):
        return None
    s = text.strip()
    if s == "0":
        return 0.0
    if not s or s.startswith("-"):
        return None
    s = s.lstrip("+")
    pos, total = 0, 0.0
    while pos < len(s):
        m = _DURATION_RE.match(s, pos)
        if m is None:
            return None
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    return total if pos else None


def pod_cidr(index: int) -> str:
    """The /24 of the ``index``-th node: 10.244.0.0/24, 10.244.1.0/24, ... (then 10.64+)."""
    block = 244 * 256 + index if index < 12 * 256 else 64 * 256 + (index - 12 * 256)
    return f"10.{(block >> 8) & 255}.{block & 255}.0/24"


def cidr_index(cidr: Any) -> int | None:
    m = re.fullmatch(r"10\.(\d+)\.(\d+)\.0/24", str(cidr or ""))
    if m is None:
        return None
    block = int(m.group(1)) * 256 + int(m.group(2))
    if block >= 244 * 256:
        return block - 244 * 256
    if block >= 64 * 256:
        return block - 64 * 256 + 12 * 256
    return None


@functools.lru_cache(maxsize=4096)
def host_ips(cidr: str) -> tuple[str, ...]:
    """The pod IPs of a node's /24, in the order they are handed out (cached: one per node)."""
    base = cidr.split("/")[0].rsplit(".", 1)[0]
    return tuple(f"{base}.{i}" for i in range(2, 255))


def _digest(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()


def _cond(type_: str, status: str, ts: str, old: dict[str, Obj], reason: str = "") -> Obj:
    prev = old.get(type_)
    c: Obj = {"type": type_, "status": status, "lastProbeTime": None,
              "lastTransitionTime": prev.get("lastTransitionTime") if prev and prev.get("status") == status else ts}
    if reason:
        c["reason"] = reason
    return c


def _conditions(pod: Obj, ts: str, ready: bool, reason: str = "", sandbox: bool = True) -> list[Obj]:
    old = {str(c.get("type")): c for c in (pod.get("status") or {}).get("conditions") or [] if isinstance(c, dict)}
    ours = [_cond("PodReadyToStartContainers", "True" if sandbox else "False", ts, old),
            _cond("Initialized", "True", ts, old, reason),
            _cond("Ready", "True" if ready else "False", ts, old, reason),
            _cond("ContainersReady", "True" if ready else "False", ts, old, reason)]
    mine = {c["type"] for c in ours}
    return ours + [c for t, c in old.items() if t not in mine]


def _image_id(image: str) -> str:
    repo = image.split("@", 1)[0]
    last = repo.rsplit("/", 1)[-1]
    if ":" in last:
        repo = repo[:len(repo) - len(last)] + last.split(":", 1)[0]
    return f"{repo}@sha256:{_digest(image)}"


def running_status(pod: Obj, now: float, host_ip: str, pod_ip: str) -> Obj:
    ts = timestamp(now)
    spec = pod.get("spec") or {}
    uid = str((pod.get("metadata") or {}).get("uid") or "")
    status = copy.deepcopy(pod.get("status") or {})
    status.update({"phase": "Running", "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
                   "podIP": pod_ip, "podIPs": [{"ip": pod_ip}], "startTime": status.get("startTime") or ts,
                   "conditions": _conditions(pod, ts, True)})
    status["containerStatuses"] = [{
        "name": c.get("name"), "image": c.get("image"), "imageID": _image_id(str(c.get("image") or "")),
        "containerID": f"kubesched://{_digest(uid, str(c.get('name')))}", "ready": True, "started": True,
        "restartCount": 0, "state": {"running": {"startedAt": ts}}, "lastState": {}}
        for c in spec.get("containers") or [] if isinstance(c, dict)]
    if spec.get("initContainers"):
        status["initContainerStatuses"] = [{
            "name": c.get("name"), "image": c.get("image"), "imageID": _image_id(str(c.get("image") or "")),
            "containerID": f"kubesched://{_digest(uid, 'init', str(c.get('name')))}", "ready": True,
            "started": False, "restartCount": 0, "lastState": {},
            "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": ts, "finishedAt": ts,
                                     "containerID": f"kubesched://{_digest(uid, 'init', str(c.get('name')))}"}}}
            for c in spec["initContainers"] if isinstance(c, dict)]
    return status


def succeeded_status(pod: Obj, now: float, exit_code: int = 0) -> Obj:
    """The pod's containers ended: phase Succeeded (exit code 0, reason Completed), or
    Failed for another exit code (reason Error), as the kubelet reports them."""
    ts = timestamp(now)
    status = copy.deepcopy(pod.get("status") or {})
    status["phase"] = "Succeeded" if exit_code == 0 else "Failed"
    status["conditions"] = _conditions(pod, ts, False, "PodCompleted" if exit_code == 0 else "PodFailed",
                                       sandbox=False)
    out = []
    for cs in status.get("containerStatuses") or []:
        started = ((cs.get("state") or {}).get("running") or {}).get("startedAt") or status.get("startTime") or ts
        cs = dict(cs, ready=False, started=False)
        cs["state"] = {"terminated": {"exitCode": exit_code, "reason": "Completed" if exit_code == 0 else "Error",
                                      "startedAt": started, "finishedAt": ts, "containerID": cs.get("containerID")}}
        out.append(cs)
    status["containerStatuses"] = out
    return status


def with_ready(pod: Obj, now: float) -> Obj:
    status = copy.deepcopy(pod.get("status") or {})
    status["conditions"] = _conditions(pod, timestamp(now), True)
    return status
