"""Kubelet-side failures, on purpose: what a real node does when "the scheduler says yes
but the kubelet says no", and the restart loops that follow.

Chosen per pod by the annotation ``kubesched.io/fail`` or per node (a node pool's labels,
or a node's label or annotation, same key), the pod's choice first:

* ``admission``: the kubelet refuses the pod when it arrives (reason
  ``UnexpectedAdmissionError``). Independently of the annotation every simulated node
  runs the kubelet's resource admission (``lifecycle.NewPredicateAdmitHandler`` with the
  scheduler's fit check): if the pods it already runs plus this one exceed the node's
  allocatable cpu, memory, ephemeral-storage or pod count (the node changed under the
  scheduler, or two schedulers raced) the pod is rejected with reason ``OutOf<resource>``
  and kubelet's message ``Node didn't have enough resource: cpu, requested: R, used: U,
  capacity: C`` (cpu in millicores, memory in bytes). A rejected pod is Failed with
  message ``Pod was rejected: ...`` and a Warning event; its ReplicaSet replaces it.
* ``image-pull``: every pull fails: the container waits with ``ErrImagePull``, then
  ``ImagePullBackOff`` ("Back-off pulling image ...") for the kubelet's back-off (10 s,
  doubling, at most 5 min) before the next attempt; the pod stays Pending.
* ``crash-loop``: each container start ends with exit code 1 (reason ``Error``) after
  ``kubesched.io/run-duration`` (default 1 s); with ``restartPolicy`` Always/OnFailure
  the container is restarted, at once the first time and then after the kubelet's
  crash back-off (10 s, 20 s, 40 s, ... at most 5 min), waiting meanwhile with
  ``CrashLoopBackOff`` ("back-off 20s restarting failed container=c pod=p_ns(uid)"),
  ``restartCount`` counting the restarts, ``lastState.terminated`` the last exit; with
  ``Never`` the pod is Failed.

The back-off arithmetic and the statuses are pure functions of the pod, the attempt
number and the time; the agent (:mod:`.agent`) keeps the attempt numbers and applies
them.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.api.errors import DecodeError
from kubesched.api.objects import Node, Pod
from kubesched.server.controllers.base import meta, pod_terminal, timestamp

Obj = dict[str, Any]
FAIL_KEY = "kubesched.io/fail"
MODES = ("admission", "image-pull", "crash-loop")
INITIAL_BACKOFF = 10.0
MAX_BACKOFF = 300.0
DEFAULT_CRASH_AFTER = 1.0
_ORDER = ("cpu", "memory", "ephemeral-storage")


def failure_mode(pod: Obj, node: Obj | None) -> str | None:
    for source in (meta(pod).get("annotations"), *((meta(node).get("annotations"), meta(node).get("labels"))
                                                   if node is not None else ())):
        value = (source or {}).get(FAIL_KEY)
        if value in MODES:
            return str(value)
    return None


def backoff(attempt: int) -> float:
    """The delay before attempt ``attempt`` (0-based) of a restart or pull: none before
    the first retry's back-off entry exists, then 10 s doubling up to 5 min."""
    if attempt <= 0:
        return 0.0
    return float(min(INITIAL_BACKOFF * 2 ** (attempt - 1), MAX_BACKOFF))


def go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String`` for whole seconds: 10s, 1m20s, 5m0s."""
    s = int(seconds)
    return f"{s // 60}m{s % 60}s" if s >= 60 else f"{s}s"


def admission_rejection(pod: Obj, node: Obj, admitted: list[Obj]) -> tuple[str, str] | None:
    """(reason, message) when the kubelet's resource admission refuses ``pod`` on ``node``
    already running ``admitted`` (other non-terminal pods it started)."""
    want, alloc = pod_requests(pod), node_allocatable(node)
    if want is None or alloc is None:
        return None
    used = [pod_requests(o) for o in admitted if meta(o).get("uid") != meta(pod).get("uid") and not pod_terminal(o)]
    if any(u is None for u in used):
        return None
    return admission_check(want, alloc, [u for u in used if u is not None])


def pod_requests(pod: Obj) -> dict[str, int] | None:
    """The pod's effective requests as the scheduler and the kubelet count them (containers
    summed, init containers maxed, overhead); None when the pod does not decode."""
    try:
        return dict(Pod.from_dict(pod, validate=False, require_limits=False).requests)
    except DecodeError:
        return None


def node_allocatable(node: Obj) -> dict[str, int] | None:
    try:
        return dict(Node.from_dict(node, validate=False).allocatable)
    except DecodeError:
        return None


def admission_check(want: Mapping[str, int], alloc: Mapping[str, int],
                    used: Sequence[Mapping[str, int]]) -> tuple[str, str] | None:
    """The kubelet's resource admission of a pod requesting ``want`` on a node with
    ``alloc`` that already runs pods requesting ``used``: (reason, message) or None."""
    allowed_pods = alloc.get("pods", 110)
    if len(used) + 1 > allowed_pods:
        return "OutOfpods", (f"Node didn't have enough resource: pods, requested: 1, used: {len(used)}, "
                             f"capacity: {allowed_pods}")
    names = list(_ORDER) + sorted(k for k in want if k not in _ORDER and k != "pods")
    for name in names:
        request = want.get(name, 0)
        if not request:
            continue
        in_use = sum(u.get(name, 0) for u in used)
        cap = alloc.get(name, 0)
        if in_use + request > cap:
            return f"OutOf{name}", (f"Node didn't have enough resource: {name}, requested: {request}, "
                                    f"used: {in_use}, capacity: {cap}")
    return None


def rejected_status(pod: Obj, reason: str, message: str) -> Obj:
    status = {k: v for k, v in (pod.get("status") or {}).items() if k in ("conditions", "qosClass")}
    status.update({"phase": "Failed", "reason": reason, "message": f"Pod was rejected: {message}"})
    return status


def _not_ready(status: Obj, names: list[str], ts: str) -> None:
    conds = {c.get("type"): c for c in status.get("conditions") or [] if isinstance(c, dict)}
    msg = f"containers with unready status: [{' '.join(names)}]"
    for type_ in ("Ready", "ContainersReady"):
        old = conds.get(type_) or {}
        conds[type_] = {"type": type_, "status": "False", "reason": "ContainersNotReady", "message": msg,
                        "lastProbeTime": None,
                        "lastTransitionTime": old.get("lastTransitionTime") if old.get("status") == "False" else ts}
    status["conditions"] = list(conds.values())


def _containers(pod: Obj) -> list[Obj]:
    return [c for c in (pod.get("spec") or {}).get("containers") or [] if isinstance(c, dict)]


def image_pull_status(pod: Obj, now: float, attempt: int, backing_off: bool) -> Obj:
    """Pending with every container waiting on its image."""
    ts = timestamp(now)
    status = copy.deepcopy(pod.get("status") or {})
    status["phase"] = "Pending"
    status.setdefault("startTime", ts)
    out = []
    for c in _containers(pod):
        image = str(c.get("image") or "")
        if backing_off:
            waiting = {"reason": "ImagePullBackOff", "message": f'Back-off pulling image "{image}"'}
        else:
            waiting = {"reason": "ErrImagePull", "message": f'failed to pull and unpack image "{image}": '
                       f"kubesched simulates a failed pull ({FAIL_KEY}: image-pull, attempt {attempt + 1})"}
        out.append({"name": c.get("name"), "image": image, "imageID": "", "ready": False, "started": False,
                    "restartCount": 0, "state": {"waiting": waiting}, "lastState": {}})
    status["containerStatuses"] = out
    _not_ready(status, [str(c.get("name")) for c in _containers(pod)], ts)
    return status


def crash_status(pod: Obj, now: float, restarts: int, *, running_since: float | None,
                 last_exit: tuple[float, float] | None, wait: float) -> Obj:
    """A crash-looping pod: containers running (since ``running_since``) or waiting in
    CrashLoopBackOff for ``wait`` seconds; ``last_exit`` = (started, finished) of the
    last run."""
    ts = timestamp(now)
    status = copy.deepcopy(pod.get("status") or {})
    m = meta(pod)
    out = []
    for c in _containers(pod):
        cs: Obj = {"name": c.get("name"), "image": c.get("image"), "imageID": f"{c.get('image')}@sha256:simulated",
                   "containerID": f"kubesched://{m.get('uid')}-{c.get('name')}-{restarts}",
                   "ready": False, "started": running_since is not None, "restartCount": restarts, "lastState": {}}
        if last_exit is not None:
            cs["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": timestamp(last_exit[0]),
                                              "finishedAt": timestamp(last_exit[1])}}
        if running_since is not None:
            cs["state"] = {"running": {"startedAt": timestamp(running_since)}}
        else:
            cs["state"] = {"waiting": {"reason": "CrashLoopBackOff", "message":
                                       f"back-off {go_duration(wait)} restarting failed container={c.get('name')} "
                                       f"pod={m.get('name')}_{m.get('namespace')}({m.get('uid')})"}}
        out.append(cs)
    status["containerStatuses"] = out
    _not_ready(status, [str(c.get("name")) for c in _containers(pod)], ts)
    return status


def crashed_for_good(pod: Obj, now: float, started: float) -> Obj:
    """restartPolicy Never: the pod Failed, its containers terminated with exit code 1."""
    status = copy.deepcopy(pod.get("status") or {})
    status["phase"] = "Failed"
    status["containerStatuses"] = [
        {"name": c.get("name"), "image": c.get("image"), "imageID": f"{c.get('image')}@sha256:simulated",
         "ready": False, "started": False, "restartCount": 0, "lastState": {},
         "state": {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": timestamp(started),
                                  "finishedAt": timestamp(now)}}} for c in _containers(pod)]
    _not_ready(status, [str(c.get("name")) for c in _containers(pod)], timestamp(now))
    return status
