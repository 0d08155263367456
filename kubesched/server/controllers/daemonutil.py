"""What the DaemonSet controller decides per node, as pure functions
(``pkg/controller/daemon/util/daemonset_util.go`` and ``daemon_controller.go``).

* :func:`daemon_pod_template`: the template with the tolerations upstream adds to every
  daemon pod (``AddOrUpdateDaemonPodTolerations``: ``not-ready`` and ``unreachable``
  NoExecute; ``disk-pressure``, ``memory-pressure``, ``pid-pressure``,
  ``unschedulable`` NoSchedule; ``network-unavailable`` NoSchedule for hostNetwork pods;
  each replacing a toleration of the same key and effect) and the labels
  ``controller-revision-hash`` and ``pod-template-generation``;
* :func:`pin_to_node`: ``ReplaceDaemonSetPodNodeNameNodeAffinity``: the required node
  affinity becomes the single term ``matchFields metadata.name In [node]`` (created when
  missing, replacing every required term when present; preferred terms are kept), so the
  scheduler places the pod on that node;
* :func:`should_run`: ``NodeShouldRunDaemonPod``: whether a node should run the daemon
  pod, and whether a pod already there should keep running, from the pod's nodeName,
  the required node affinity and nodeSelector (the scheduler's NodeAffinity semantics)
  and the node's NoSchedule/NoExecute taints against the pod's tolerations.
"""

from __future__ import annotations

import copy
from typing import Any

from kubesched.api.errors import DecodeError
from kubesched.api.objects import Node, Pod
from kubesched.api.nodeaffinity import required_node_affinity_matches

Obj = dict[str, Any]
REVISION_LABEL = "controller-revision-hash"
GENERATION_LABEL = "pod-template-generation"

DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)
NETWORK_UNAVAILABLE = ("node.kubernetes.io/network-unavailable", "NoSchedule")


def add_daemon_tolerations(spec: Obj) -> None:
    """``AddOrUpdateDaemonPodTolerations`` on a pod spec, in place."""
    wanted = list(DAEMON_TOLERATIONS) + ([NETWORK_UNAVAILABLE] if spec.get("hostNetwork") else [])
    tolerations = [t for t in spec.get("tolerations") or [] if isinstance(t, dict)]
    for key, effect in wanted:
        new = {"key": key, "operator": "Exists", "effect": effect}
        for i, t in enumerate(tolerations):
            if t.get("key") == key and t.get("effect") == effect:  # AddOrUpdateTolerationInPodSpec
                tolerations[i] = new
                break
        else:
            tolerations.append(new)
    spec["tolerations"] = tolerations


def daemon_pod_template(template: Obj, generation: int, revision: str) -> Obj:
    """``CreatePodTemplate``: a copy with daemon tolerations and the revision labels."""
    out = copy.deepcopy(template)
    add_daemon_tolerations(out.setdefault("spec", {}))
    labels = out.setdefault("metadata", {}).setdefault("labels", {})
    labels[GENERATION_LABEL] = str(generation)
    labels[REVISION_LABEL] = revision
    return out


def pin_to_node(spec: Obj, node: str) -> None:
    """``ReplaceDaemonSetPodNodeNameNodeAffinity`` on a pod spec, in place."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    affinity = spec.setdefault("affinity", {})
    node_affinity = affinity.setdefault("nodeAffinity", {})
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(required, dict):
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}
    else:
        required["nodeSelectorTerms"] = [term]


def should_run(template: Obj, node: Obj) -> tuple[bool, bool]:
    """``NodeShouldRunDaemonPod``: (should run, should continue running) on ``node``."""
    spec = copy.deepcopy(template.get("spec") or {})
    add_daemon_tolerations(spec)
    name = str((node.get("metadata") or {}).get("name") or "")
    try:
        pod = Pod.from_dict({"metadata": {"name": "daemon", "namespace": "default"}, "spec": spec},
                            validate=False, require_limits=False)
        n = Node.from_dict(node, validate=False)
    except DecodeError:
        return False, False
    if pod.node_name and pod.node_name != name:
        return False, False
    if not required_node_affinity_matches(pod, n):
        return False, False

    def untolerated(effects: tuple[str, ...]) -> bool:
        return any(t.effect in effects and not any(tol.tolerates(t) for tol in pod.tolerations) for t in n.taints)

    if untolerated(("NoSchedule", "NoExecute")):
        return False, not untolerated(("NoExecute",))
    return True, True
