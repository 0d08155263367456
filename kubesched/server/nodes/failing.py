"""The node agent's driver for pods that fail on purpose (:mod:`.failures`): admission
rejections, failed image pulls and crash loops, one small state machine per pod.

The agent asks :meth:`FailureDriver.admit` before it starts any pod, and hands every sync
of a pod with an ``image-pull`` or ``crash-loop`` failure to :meth:`FailureDriver.step`,
which writes the pod's status through the agent, records the kubelet's events and says
when to look at the pod again. The state (attempts, restarts, when the current stage
ends) lives here, in memory, like the kubelet's own back-off cache: a restarted server
starts the loop again from the pod's first attempt.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.server.controllers.base import meta, pod_terminal, uid_of
from kubesched.server.controllers.events import NORMAL, WARNING, EventRecorder
from kubesched.server.nodes import failures as F
from kubesched.server.nodes.podstatus import parse_duration

Obj = dict[str, Any]
PodId = tuple[str, str, str]
RUN_DURATION_ANNOTATION = "kubesched.io/run-duration"
ERR_IMAGE_PULL_SHOWN = 1.0  # how long ErrImagePull shows before ImagePullBackOff


@dataclass(slots=True)
class _State:
    stage: str = "new"  # new | errpull | pullbackoff | running | waiting
    attempt: int = 0  # image pulls tried
    restarts: int = 0
    since: float = 0.0  # when the current run started
    until: float = 0.0  # when the current stage ends
    last_exit: tuple[float, float] | None = None


def pod_id(pod: Obj) -> PodId:
    return str(meta(pod).get("namespace") or ""), str(meta(pod).get("name")), uid_of(pod)


class RequestCache:
    """Pods' requests by uid and generation (a change of spec bumps it), nodes' allocatable
    by name and resourceVersion: the kubelet's admission decodes a pod once, not again for
    every pod admitted after it on its node. None: the object does not decode."""

    def __init__(self) -> None:
        self._pods: dict[str, tuple[Any, dict[str, int] | None]] = {}
        self._nodes: dict[str, tuple[Any, dict[str, int] | None]] = {}

    def pod(self, pod: Obj) -> dict[str, int] | None:
        m = meta(pod)
        uid, gen = uid_of(pod), m.get("generation")
        hit = self._pods.get(uid)
        if hit is None or hit[0] != gen or not uid:
            hit = self._pods[uid] = (gen, F.pod_requests(pod))
        return hit[1]

    def node(self, node: Obj) -> dict[str, int] | None:
        m = meta(node)
        name, rv = str(m.get("name")), (m.get("uid"), m.get("resourceVersion"))
        hit = self._nodes.get(name)
        if hit is None or hit[0] != rv or rv[1] is None:
            hit = self._nodes[name] = (rv, F.node_allocatable(node))
        return hit[1]

    def forget(self, uid: str) -> None:
        self._pods.pop(uid, None)


class FailureDriver:
    def __init__(self, recorder: Callable[[str], EventRecorder]) -> None:
        self._recorder = recorder  # node name -> the kubelet's recorder on that node
        self._state: dict[PodId, _State] = {}
        self._lock = threading.Lock()
        self.requests = RequestCache()

    def active(self, pod: Obj) -> bool:
        with self._lock:
            return pod_id(pod) in self._state

    def forget(self, pod: Obj) -> None:
        with self._lock:
            self._state.pop(pod_id(pod), None)
            self.requests.forget(uid_of(pod))

    def _event(self, pod: Obj, type_: str, reason: str, message: str) -> None:
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        self._recorder(node).event(pod, type_, reason, message)

    def admit(self, pod: Obj, node: Obj, admitted: list[Obj]) -> Obj | None:
        """The Failed status of a pod the kubelet refuses, or None to run it."""
        rejection = self._resources(pod, node, admitted)
        if rejection is None and F.failure_mode(pod, node) == "admission":
            rejection = ("UnexpectedAdmissionError", "Allocate failed due to the node refusing the pod "
                         f"({F.FAIL_KEY}: admission), which is unexpected")
        if rejection is None:
            return None
        self._event(pod, WARNING, *rejection)
        return F.rejected_status(pod, *rejection)

    def _resources(self, pod: Obj, node: Obj, admitted: list[Obj]) -> tuple[str, str] | None:
        """:func:`.failures.admission_rejection` with every decode cached."""
        want, alloc = self.requests.pod(pod), self.requests.node(node)
        uid = uid_of(pod)
        used = [self.requests.pod(o) for o in admitted if uid_of(o) != uid and not pod_terminal(o)]
        if want is None or alloc is None or any(u is None for u in used):
            return None
        dra = _dra_backed(pod)
        if dra:  # devices the scheduler allocated through a claim, not a device plugin's
            want = {k: v for k, v in want.items() if k not in dra or alloc.get(k, 0) > 0}
        return F.admission_check(want, alloc, [u for u in used if u is not None])

    def step(self, pod: Obj, mode: str, now: float, running: Callable[[], Obj],
             write: Callable[[Obj], None]) -> float | None:
        """Advance the pod's failure; ``running()`` is the Running status the agent would
        write; returns the delay until the next step, None when there is none."""
        with self._lock:
            st = self._state.setdefault(pod_id(pod), _State())
        if now < st.until:
            return st.until - now
        if mode == "image-pull":
            return self._pull(pod, st, now, write)
        return self._crash(pod, st, now, running, write)

    def _pull(self, pod: Obj, st: _State, now: float, write: Callable[[Obj], None]) -> float:
        images = [str(c.get("image")) for c in (pod.get("spec") or {}).get("containers") or []]
        if st.stage in ("new", "pullbackoff"):
            write(F.image_pull_status(pod, now, st.attempt, backing_off=False))
            for image in images:
                self._event(pod, NORMAL, "Pulling", f'Pulling image "{image}"')
                self._event(pod, WARNING, "Failed", f'Failed to pull image "{image}": kubesched simulates a failed '
                            f"pull ({F.FAIL_KEY}: image-pull)")
            self._event(pod, WARNING, "Failed", "Error: ErrImagePull")
            st.attempt += 1
            st.stage, st.until = "errpull", now + ERR_IMAGE_PULL_SHOWN
            return ERR_IMAGE_PULL_SHOWN
        wait = F.backoff(st.attempt)
        write(F.image_pull_status(pod, now, st.attempt, backing_off=True))
        for image in images:
            self._event(pod, NORMAL, "BackOff", f'Back-off pulling image "{image}"')
        self._event(pod, WARNING, "Failed", "Error: ImagePullBackOff")
        st.stage, st.until = "pullbackoff", now + wait
        return wait

    def _crash(self, pod: Obj, st: _State, now: float, running: Callable[[], Obj],
               write: Callable[[Obj], None]) -> float | None:
        crash_after = parse_duration((meta(pod).get("annotations") or {}).get(RUN_DURATION_ANNOTATION))
        crash_after = F.DEFAULT_CRASH_AFTER if crash_after is None else crash_after
        if st.stage in ("new", "waiting"):  # (re)start the containers
            if st.stage == "waiting":
                st.restarts += 1
            base = dict(pod, status=running())
            write(F.crash_status(base, now, st.restarts, running_since=now, last_exit=st.last_exit, wait=0))
            for c in (pod.get("spec") or {}).get("containers") or []:
                self._event(pod, NORMAL, "Started", f"Started container {c.get('name')}")
            st.stage, st.since, st.until = "running", now, now + crash_after
            return crash_after
        st.last_exit = (st.since, now)  # the run ends: exit code 1
        if (pod.get("spec") or {}).get("restartPolicy") == "Never":
            write(F.crashed_for_good(pod, now, st.since))
            return None
        wait = F.backoff(st.restarts)
        st.stage, st.until = "waiting", now + wait
        if wait > 0:
            write(F.crash_status(pod, now, st.restarts, running_since=None, last_exit=st.last_exit, wait=wait))
            m = meta(pod)
            for c in (pod.get("spec") or {}).get("containers") or []:
                self._event(pod, WARNING, "BackOff", f"Back-off restarting failed container {c.get('name')} in pod "
                            f"{m.get('name')}_{m.get('namespace')}({m.get('uid')})")
            return wait
        return self._crash(pod, st, now, running, write)  # the first restart is immediate


def _dra_backed(pod: Obj) -> set[str]:
    """The extended resources the pod gets through the scheduler's claim
    (``status.extendedResourceClaimStatus``): the kubelet does not count them against
    allocatable on a node that has none of them."""
    ext = (pod.get("status") or {}).get("extendedResourceClaimStatus")
    if not isinstance(ext, dict):
        return set()
    return {str(m.get("resourceName")) for m in ext.get("requestMappings") or [] if isinstance(m, dict)}
