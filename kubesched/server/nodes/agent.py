"""The node agent: one simulated kubelet for every Node object, in one set of threads.

For each node (created by ``--nodes``/``--node-pool`` or applied with kubectl) it:

* heartbeats as a kubelet does: renews the node's Lease in ``kube-node-lease`` every
  ``heartbeat_interval`` (holder the node, owned by the Node so it is collected with it)
  and reports the node conditions (MemoryPressure, DiskPressure, PIDPressure False,
  Ready True) at once when they are not so and every ``status_interval`` otherwise;
* gives the node a pod CIDR (``10.244.<n>.0/24``) if it has none, as the node IPAM
  controller would;
* runs the pods bound to it: ``pod_start_delay`` after it first sees a pod bound, the
  pod is Running and Ready with a pod IP from the node's CIDR; a pod annotated
  ``kubesched.io/run-duration: 30s`` Succeeds that long after it started (whatever its
  restartPolicy: the annotation says the workload finishes), so it stops counting
  against the node (``kubesched.io/exit-code: "1"`` makes it end Failed instead); a pod
  being deleted is removed (grace 0, uid precondition) once its
  simulated containers stop, ``min(grace period, pod_stop_delay)`` after deletion began;
  a Running pod marked not ready while its node was unreachable is ready again when the
  node is back.

Kubelet-side failures (:mod:`.failures`, :mod:`.failing`): every pod passes the kubelet's
resource admission before it starts (``OutOfcpu``... when the node changed under the
scheduler), and ``kubesched.io/fail: admission|image-pull|crash-loop`` on a pod or a
node makes it fail as a real node would.

Writes in batches: a worker takes the keys queued at once (up to ``batch``, 1 by default:
see there), and the pod status writes and Lease renewals their syncs make are written
together by :meth:`flush` in one store transaction (:mod:`..apiserver.batchwrite`): each
object its own resourceVersion and watch event, a failed one (409) retried alone. Renewals
fall due on a grid (:mod:`.heartbeat`) so that those of many nodes can share a batch.

Failure injection: a node annotated ``kubesched.io/heartbeat: stopped`` has a dead
kubelet: no Lease renewal, no status, its pods neither start, finish nor terminate, so the
node lifecycle controller marks it NotReady and taints it. Removing the annotation
brings it back. (``kubesched node stop|start NAME`` sets and removes it.)
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.server.apiserver.registry.batchwrite import Update, update_many
from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import (
    Controller, deleting, meta, micro_timestamp, parse_time, pod_ready, pod_terminal, uid_of,
)
from kubesched.server.controllers.events import EventRecorder
from kubesched.server.controllers.informer import Informer, Obj
from kubesched.server.nodes.failing import FailureDriver
from kubesched.server.nodes.failures import failure_mode
from kubesched.server.nodes import heartbeat as HB, podstatus as PS
from kubesched.server.nodes.heartbeat import LEASE_NAMESPACE, MERGE

__all__ = ["EXIT_CODE_ANNOTATION", "HEARTBEAT_ANNOTATION", "LEASE_NAMESPACE", "RUN_DURATION_ANNOTATION",
           "STOPPED", "AgentOptions", "NodeAgent"]

log = logging.getLogger(__name__)

HEARTBEAT_ANNOTATION = "kubesched.io/heartbeat"
STOPPED = "stopped"
RUN_DURATION_ANNOTATION = "kubesched.io/run-duration"
EXIT_CODE_ANNOTATION = "kubesched.io/exit-code"  # with run-duration: how the containers end (0: Succeeded)
AgentKey = tuple[str, str, str]  # ("node", "", name) or ("pod", namespace, name)


@dataclass(frozen=True, slots=True)
class AgentOptions:
    heartbeat_interval: float = 10.0  # kubelet: renew every 0.25 x the 40 s lease duration
    status_interval: float = 300.0  # kubelet's nodeStatusReportFrequency: unchanged status every 5 min
    lease_duration: int = 40
    pod_start_delay: float = 1.0
    pod_stop_delay: float = 1.0
    workers: int = 2
    kubernetes_version: str = "1.34"  # the release of the kubelets: node info, declared features


@dataclass(slots=True)
class _NodeState:
    uid: str
    running: bool = False
    last_lease: float = float("-inf")
    last_status: float = float("-inf")
    lease: Obj | None = None  # the Lease as this kubelet last wrote it (upstream's latestLease)


@dataclass(frozen=True, slots=True)
class _Write:
    """A write a sync deferred to its worker's batch (:meth:`NodeAgent.flush`)."""

    key: AgentKey
    update: Update
    done: Callable[[Obj], None]
    # on an ApiError: True when handled (e.g. a stale Lease re-patched), False to retry the key
    failed: Callable[[ApiError], bool] = lambda exc: False


def stopped(node: Obj) -> bool:
    return (meta(node).get("annotations") or {}).get(HEARTBEAT_ANNOTATION) == STOPPED


def internal_ip(node: Obj) -> str:
    for a in (node.get("status") or {}).get("addresses") or []:
        if isinstance(a, dict) and a.get("type") == "InternalIP":
            return str(a.get("address"))
    return "10.0.0.1"


class NodeAgent(Controller[AgentKey]):
    name = "node-agent"
    # keys whose writes are made in one transaction (:mod:`..apiserver.batchwrite`). 1: in
    # ``bench --serve`` a batch of 8 or 32 cost serve 0.3 ms more CPU per pod than 1 (the
    # batch holds the store's write lock, and the event loop's creates and binds queue behind it)
    batch = 1

    def __init__(self, registry: Registry, nodes: Informer, pods: Informer, options: AgentOptions = AgentOptions(),
                 clock: Callable[[], float] | None = None) -> None:
        super().__init__(options.workers)
        self.registry = registry
        self.nodes = nodes
        self.pods = pods
        self.opts = options
        self.clock = clock or registry.clock
        self._lock = threading.Lock()
        self._admit_lock = threading.Lock()
        self._state: dict[str, _NodeState] = {}
        self._first_seen: dict[tuple[str, str, str], float] = {}  # (ns, name, uid) -> when bound / deleting
        self._deleting_seen: dict[tuple[str, str, str], float] = {}
        self._started: dict[tuple[str, str, str], float] = {}  # when this agent started the pod
        self._ips: dict[str, dict[str, tuple[str, str]]] = {}  # node -> ip -> (ns, name)
        self._cidrs: set[int] = set()  # CIDR indexes this agent handed out
        self._node_cidrs: dict[str, int] = {}  # node -> the index of its podCIDR (kept by _on_node)
        self._batch = threading.local()  # this worker's status writes, made by flush()
        recorders: dict[str, EventRecorder] = {}
        self.failures = FailureDriver(lambda node: recorders.setdefault(
            node, EventRecorder(registry, "kubelet", clock=self.clock, host=node)))
        nodes.add_handler(self._on_node)
        pods.add_handler(self._on_pod)

    # -- events -------------------------------------------------------------------------------
    def _on_node(self, old: Obj | None, new: Obj | None) -> None:
        obj = new or old
        assert obj is not None
        name = str(meta(obj).get("name"))
        index = None if new is None else PS.cidr_index((new.get("spec") or {}).get("podCIDR"))
        with self._lock:  # the CIDRs in use, kept here so that assigning one is not O(nodes)
            if index is None:
                self._node_cidrs.pop(name, None)
            else:
                self._node_cidrs[name] = index
        self.queue.add(("node", "", name))

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        if new is None:
            assert old is not None
            self._forget_pod(old)
            return
        if (new.get("spec") or {}).get("nodeName"):
            self.queue.add(("pod", str(meta(new).get("namespace") or ""), str(meta(new).get("name"))))

    def _forget_pod(self, pod: Obj) -> None:
        self.failures.forget(pod)
        ns, name, uid = str(meta(pod).get("namespace") or ""), str(meta(pod).get("name")), uid_of(pod)
        with self._lock:
            self._first_seen.pop((ns, name, uid), None)
            self._deleting_seen.pop((ns, name, uid), None)
            self._started.pop((ns, name, uid), None)
            node = (pod.get("spec") or {}).get("nodeName")
            ips = self._ips.get(str(node), {})
            for ip, who in list(ips.items()):
                if who == (ns, name):
                    del ips[ip]

    def sync(self, key: AgentKey) -> None:
        if key[0] == "node":
            self._sync_node(key)
        else:
            self._sync_pod(key)

    # -- nodes --------------------------------------------------------------------------------
    def _sync_node(self, key: AgentKey) -> None:
        name = key[2]
        node = self.nodes.get("", name)
        with self._lock:
            st = self._state.get(name)
            if node is None:
                self._state.pop(name, None)
                return
            if st is None or st.uid != uid_of(node):
                st = self._state[name] = _NodeState(uid_of(node))
        if stopped(node):
            if st.running:
                log.info("node %s: heartbeat stopped", name)
            st.running = False
            return
        if not st.running:
            st.running = True
            st.last_lease = st.last_status = float("-inf")
            for pod in self.pods.by_index("node", name):
                self.queue.add(("pod", str(meta(pod).get("namespace") or ""), str(meta(pod).get("name"))))
        now = self.clock()
        if not (node.get("spec") or {}).get("podCIDR"):
            self._assign_cidr(key, node)
        period = self.opts.heartbeat_interval
        if now - st.last_lease >= period:
            self._renew_lease(key, node, now, st)
            st.last_lease = now
        if not HB.healthy(node) or now - st.last_status >= self.opts.status_interval:
            self.expect(key, self.nodes, HB.post_status(self.registry, name, now, self.opts.kubernetes_version))
            st.last_status = now
        due = min(st.last_lease + period, st.last_status + self.opts.status_interval)
        self.queue.add_after(key, HB.on_grid(due, period) - now)  # due with other nodes: one batch

    def _assign_cidr(self, key: AgentKey, node: Obj) -> None:
        with self._lock:
            used = self._cidrs | set(self._node_cidrs.values())
            index = next(i for i in range(len(used) + 1) if i not in used)
            self._cidrs.add(index)
        cidr = PS.pod_cidr(index)
        out = self.registry.patch("nodes", None, str(meta(node).get("name")), MERGE,
                                  {"spec": {"podCIDR": cidr, "podCIDRs": [cidr]}})
        self.expect(key, self.nodes, out)

    def _renew_lease(self, key: AgentKey, node: Obj, now: float, st: _NodeState) -> None:
        """As the kubelet's lease controller: an update of the Lease it last wrote (no read,
        no patch to merge; in this worker's batch); when there is none, or it is stale (409)
        or gone (404), the Lease is patched, or created."""
        name = str(meta(node).get("name"))
        refs = [{"apiVersion": "v1", "kind": "Node", "name": name, "uid": uid_of(node)}]
        spec = {"holderIdentity": name, "leaseDurationSeconds": self.opts.lease_duration,
                "renewTime": micro_timestamp(now)}
        latest, st.lease = st.lease, None
        if latest is None or meta(latest).get("ownerReferences") != refs:
            st.lease = HB.patch_or_create_lease(self.registry, name, refs, spec)
            return

        def done(out: Obj) -> None:
            st.lease = out

        def failed(exc: ApiError) -> bool:
            if exc.code not in (404, 409):
                st.last_lease = float("-inf")  # the key's retry renews it
                return False
            st.lease = HB.patch_or_create_lease(self.registry, name, refs, spec)
            return True

        self._defer(_Write(key, Update("leases", LEASE_NAMESPACE, name, HB.renewed(latest, spec)), done, failed))

    # -- pods ---------------------------------------------------------------------------------
    def _running_node(self, pod: Obj) -> Obj | None:
        node_name = str((pod.get("spec") or {}).get("nodeName") or "")
        node = self.nodes.get("", node_name) if node_name else None
        with self._lock:
            st = self._state.get(node_name)
            ok = node is not None and st is not None and st.running and st.uid == uid_of(node)
        return node if ok else None

    def _since(self, table: dict[tuple[str, str, str], float], pod: Obj, now: float) -> float:
        k = (str(meta(pod).get("namespace") or ""), str(meta(pod).get("name")), uid_of(pod))
        with self._lock:
            return table.setdefault(k, now)

    def _sync_pod(self, key: AgentKey) -> None:
        _, ns, name = key
        pod = self.pods.get(ns, name)
        if pod is None:
            return
        node = self._running_node(pod)
        if node is None:
            return
        now = self.clock()
        if deleting(pod):
            grace = float(meta(pod).get("deletionGracePeriodSeconds") or 0)
            due = self._since(self._deleting_seen, pod, now) + min(grace, self.opts.pod_stop_delay)
            if now < due:
                self.queue.add_after(key, due - now)
                return
            try:
                self.registry.delete("pods", ns, name, {"gracePeriodSeconds": 0, "preconditions": {"uid": uid_of(pod)}})
            except ApiError as exc:
                if exc.code not in (404, 409):
                    raise
            return
        if pod_terminal(pod):
            self._forget_pod(pod)
            return
        if self.failures.active(pod):
            self._step_failure(key, pod, node, now)
            return
        phase = (pod.get("status") or {}).get("phase")
        if phase != "Running":
            due = self._since(self._first_seen, pod, now) + self.opts.pod_start_delay
            if now < due:
                self.queue.add_after(key, due - now)
                return
            with self._admit_lock:  # the kubelet admits one pod at a time
                on_node = self.pods.by_index("node", str(meta(node).get("name")))
                with self._lock:  # the node's pods looked up, never a copy of every pod started
                    admitted = [p for p in on_node
                                if (p.get("status") or {}).get("phase") == "Running"
                                or (str(meta(p).get("namespace") or ""), str(meta(p).get("name")), uid_of(p))
                                in self._started]
                rejected = self.failures.admit(pod, node, admitted)
                if rejected is None and failure_mode(pod, node) not in ("image-pull", "crash-loop"):
                    self._since(self._started, pod, now)  # counted by the next admission at once
            if rejected is not None:
                self._write_status(key, pod, rejected)
                return
            if failure_mode(pod, node) in ("image-pull", "crash-loop"):
                self._step_failure(key, pod, node, now)
                return
            status = PS.running_status(pod, now, internal_ip(node), self._pod_ip(node, pod))
            self._write_status(key, pod, status)
            self._schedule_finish(key, pod, now, now)
            return
        if not pod_ready(pod):
            self._write_status(key, pod, PS.with_ready(pod, now))
            return
        with self._lock:
            started = self._started.get((ns, name, uid_of(pod)))
        if started is None:
            started = parse_time((pod.get("status") or {}).get("startTime")) or now
        self._schedule_finish(key, pod, started, now)

    def _step_failure(self, key: AgentKey, pod: Obj, node: Obj, now: float) -> None:
        mode = failure_mode(pod, node) or "crash-loop"
        delay = self.failures.step(pod, mode, now,
                                   lambda: PS.running_status(pod, now, internal_ip(node), self._pod_ip(node, pod)),
                                   lambda status: self._write_status(key, pod, status))
        if delay is not None:
            self.queue.add_after(key, delay)

    def _schedule_finish(self, key: AgentKey, pod: Obj, started: float, now: float) -> None:
        raw = (meta(pod).get("annotations") or {}).get(RUN_DURATION_ANNOTATION)
        if raw is None:
            return
        duration = PS.parse_duration(raw)
        if duration is None:
            log.warning("pod %s/%s: %s=%r is not a duration", key[1], key[2], RUN_DURATION_ANNOTATION, raw)
            return
        end = started + duration
        if end > now:
            self.queue.add_after(key, end - now)
            return
        cur = self.pods.get(key[1], key[2])
        if cur is not None and (cur.get("status") or {}).get("phase") == "Running":
            code = str((meta(cur).get("annotations") or {}).get(EXIT_CODE_ANNOTATION, "0")).strip()
            self._write_status(key, cur, PS.succeeded_status(cur, now, int(code) if code.isdigit() else 1))

    def _write_status(self, key: AgentKey, pod: Obj, status: dict[str, Any]) -> None:
        """The pod's new status, in this worker's batch. The body is the status and the pod's
        identity (uid, and the resourceVersion it was built from: a stale one is a 409), as
        upstream's kubelet patches only the status with a uid precondition; the status
        subresource keeps nothing else of a body, and decoding a whole pod for it was most
        of the write's checks."""
        def done(out: Obj) -> None:
            self.expect(key, self.pods, out)
            if ((out.get("status") or {}).get("phase") or "") in ("Succeeded", "Failed"):
                self._forget_pod(out)

        m = meta(pod)
        body = {"apiVersion": "v1", "kind": "Pod", "status": status, "metadata": {
            "name": key[2], "namespace": key[1], "uid": m.get("uid"), "resourceVersion": m.get("resourceVersion")}}
        self._defer(_Write(key, Update("pods", key[1], key[2], body, "status"), done))

    def _defer(self, write: _Write) -> None:
        pending: list[_Write] | None = getattr(self._batch, "writes", None)
        if pending is None:
            pending = self._batch.writes = []
        pending.append(write)

    def flush(self) -> None:
        """The writes the batch's syncs deferred (pod statuses, Lease renewals), in one
        transaction; each object gets its own resourceVersion and watch event, and one that
        fails (409: the pod changed) is handled, or its key retried, alone."""
        pending: list[_Write] = getattr(self._batch, "writes", None) or []
        self._batch.writes = []
        if not pending:
            return
        for w, out in zip(pending, update_many(self.registry, [w.update for w in pending])):
            if not isinstance(out, ApiError):
                w.done(out)
                continue
            try:
                if w.failed(out):
                    continue
            except ApiError as exc:
                out = exc
            self.failed(w.key, out)

    def _pod_ip(self, node: Obj, pod: Obj) -> str:
        cidr = str((node.get("spec") or {}).get("podCIDR") or "10.244.255.0/24")
        node_name = str(meta(node).get("name"))
        who = (str(meta(pod).get("namespace") or ""), str(meta(pod).get("name")))
        with self._lock:
            mine = self._ips.setdefault(node_name, {})
            used = set(mine)
            for p in self.pods.by_index("node", node_name):
                ip = (p.get("status") or {}).get("podIP")
                if ip and not pod_terminal(p):
                    used.add(str(ip))
            candidates = PS.host_ips(cidr)
            ip = next((c for c in candidates if c not in used), candidates[0])
            mine[ip] = who
            return ip
