"""``kubesched bench --fast-init``: place a workload's init pods without the scheduling loop.

A benchmark at GKE's record size (130,000 nodes, 1,000,000 running pods) spends most of its
set-up scheduling the init pods one by one, although they are not measured: they only have
to be *there*, filling the nodes as they would after being scheduled and bound. This fast
path binds them directly, in the same way a bind confirmed by the cluster fills the
scheduler's state:

* the pod is stored in the in-process cluster bound (``spec.nodeName``, a start time), as
  ``InProcessCluster.bind`` stores it;
* the cache adds it (``Cache.add_pod``: the NodeInfo's pods and summed requests, the node
  marked dirty), as the informer's add event does for a confirmed bind; the next snapshot
  update then rewrites the node's NodeTable row, which records the row in the table's
  change log and re-files it in the pod label index, exactly as after a scheduled bind.
  That snapshot update is made once at the end of the placement, so it is part of the
  set-up (with the loop, the init pods' own cycles make it).

``Bench`` binds all but the last ``FAST_INIT_THROUGH_LOOP`` (100) init pods of an op this
way and schedules those last ones through the loop, so that the plugins' own caches (built
on a plugin's first cycle, over every node) are warm when measuring starts, as after an
init through the loop. No scheduling queue is involved in the direct binds: there is no pending pod whose re-queueing a bind could
trigger. Placement is round-robin over the nodes in creation order, each pod on the next
node where it fits (its requests within the node's allocatable left, the pod count within
``pods``, every NoSchedule/NoExecute taint tolerated). For identical pods on identical nodes
that is the even spread LeastAllocated and BalancedAllocation converge to; it is not
what the scheduler would pick pod by pod for anything else, so init pods with a node
selector, affinity, topology spread, host ports, volumes or claims are refused (their
placement would matter to what is measured).
"""

from __future__ import annotations

from collections.abc import Sequence

from kubesched.api.errors import KubeschedError
from kubesched.api.objects import Pod
from kubesched.cluster.inprocess import RUNNING_START
from kubesched.framework.types import NodeInfo
from kubesched.plugins.tainttoleration import find_untolerated_taint
from kubesched.sim.driver import Simulation


def _unsupported(pod: Pod) -> str | None:
    """The field that keeps ``pod`` off the fast path, or None."""
    for field, present in (("spec.nodeSelector", bool(pod.node_selector)), ("spec.affinity", pod.affinity is not None),
                           ("spec.topologySpreadConstraints", bool(pod.spread_constraints)),
                           ("spec.containers[].ports[].hostPort", bool(pod.host_ports)),
                           ("spec.volumes", bool(pod.volumes)),
                           ("spec.resourceClaims", bool(pod.raw.get("spec", {}).get("resourceClaims")))):
        if present:
            return field
    return None


def _fits(pod: Pod, ni: NodeInfo) -> bool:
    node = ni.node
    if node is None or node.unschedulable:
        return False
    alloc = ni.allocatable
    if len(ni.pods) + 1 > alloc.get("pods", 0):
        return False
    req = ni.requested
    for name, v in pod.requests.items():
        if name != "pods" and v and req.get(name, 0) + v > alloc.get(name, 0):
            return False
    return find_untolerated_taint(node.taints, pod.tolerations) is None


class FastInit:
    """Round-robin placement state over the simulation's nodes (see the module docstring)."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.infos = [sim.cache.nodes[name] for name in sim.cluster.nodes]
        self.next = 0

    def place(self, pods: Sequence[Pod], what: str = "init pod") -> int:
        """Bind every pod of ``pods`` to its node; returns how many were placed. Raises
        KubeschedError naming the pod when one cannot take the fast path or fits nowhere."""
        sim = self.sim
        infos = self.infos
        n = len(infos)
        store = sim.cluster.pods
        add = sim.cache.add_pod
        checked: Pod | None = None  # pods of one template share requests and tolerations
        for pod in pods:
            if checked is None or pod.raw.get("spec") is not checked.raw.get("spec"):
                field = _unsupported(pod)
                if field is not None:
                    raise KubeschedError(f"bench --fast-init: {what} {pod.namespace}/{pod.name}: {field} is set; "
                                         "only pods without placement constraints can skip the scheduling loop")
                checked = pod
            for step in range(n):
                ni = infos[(self.next + step) % n]
                if _fits(pod, ni):
                    self.next = (self.next + step + 1) % n
                    break
            else:
                raise KubeschedError(f"bench --fast-init: {what} {pod.namespace}/{pod.name} fits on no node "
                                     f"({n} nodes)")
            assert ni.node is not None
            bound = _bound(pod, ni.node.name)
            store[bound.uid] = bound
            add(bound)
        # the snapshot update the next scheduling cycle would start with: NodeInfo clones,
        # NodeTable rows rewritten (change log, pod label index); done here so that it is
        # part of the set-up, as it is when the init pods go through the loop
        sim.sched.cache.update_snapshot(sim.sched.snapshot)
        _ = sim.sched.snapshot.table  # built by the first cycle otherwise: that is set-up too
        return len(pods)


def _bound(pod: Pod, node_name: str) -> Pod:
    """``pod`` as the cluster stores it once bound to ``node_name`` (InProcessCluster.bind)."""
    raw = {**pod.raw, "spec": {**pod.raw["spec"], "nodeName": node_name},
           "status": {**pod.raw.get("status", {}), "startTime": RUNNING_START}}
    return pod.evolve(raw=raw, node_name=node_name, start_time=RUNNING_START)
