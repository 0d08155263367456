"""The same workloads through ``serve`` (API server + controller manager + simulated nodes)
and through the offline loading (``simulate``) give the same set of pods.

Pod names made from random suffixes differ (serve's controllers draw them from the
controller manager's generator, the offline commands from one seeded by the owner's uid),
and so do uids (and the Job labels holding the Job's uid). So each pod is compared by
its identity under its owner:

* Deployment: the ReplicaSet's name (``<deployment>-<pod-template-hash>``) and, per pod,
  its labels; as a multiset;
* StatefulSet: the pod's name (``<set>-<ordinal>``), labels and claim volumes;
* Indexed Job: the completion index, the hostname and the labels without the uid ones;
* DaemonSet: the node its ``metadata.name`` affinity pins it to, labels and tolerations.

The nodes of the offline manifests are serve's own nodes, read back from its API server.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cluster_harness import Cluster, eventually

from kubesched.server.controllers.daemonset import target_node
from kubesched.sim.loading import load

UID_LABELS = ("batch.kubernetes.io/controller-uid", "controller-uid")

CONTAINER = {"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}


def _template(app: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"labels": {"app": app}}, "spec": {"containers": [CONTAINER], **spec}}


WORKLOADS: list[tuple[str, dict[str, Any]]] = [
    ("deployments.apps", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                          "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                                   "template": _template("web")}}),
    ("statefulsets.apps", {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
                           "spec": {"replicas": 2, "serviceName": "db", "podManagementPolicy": "Parallel",
                                    "selector": {"matchLabels": {"app": "db"}}, "template": _template("db")}}),
    ("jobs.batch", {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "ix"},
                    "spec": {"completions": 5, "parallelism": 3, "completionMode": "Indexed",
                             "template": _template("ix", restartPolicy="Never")}}),
    ("daemonsets.apps", {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
                         "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": _template("agent")}}),
]


def identity(pod: dict[str, Any]) -> tuple[str, str]:
    meta, spec = pod["metadata"], pod["spec"]
    ref = next(r for r in meta["ownerReferences"] if r.get("controller"))
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k not in UID_LABELS}
    kind = ref["kind"]
    if kind == "ReplicaSet":
        ident: Any = ref["name"]
    elif kind == "StatefulSet":
        ident = [meta["name"], spec.get("hostname"), spec.get("subdomain")]
    elif kind == "Job":
        ident = [meta["annotations"]["batch.kubernetes.io/job-completion-index"], spec.get("hostname")]
    else:
        ident = [target_node(pod), sorted(json.dumps(t, sort_keys=True) for t in spec.get("tolerations") or [])]
    return kind, json.dumps([ident, labels], sort_keys=True)


@pytest.mark.slow
def test_serve_and_simulate_make_the_same_pods(cluster: Callable[..., Cluster], tmp_path: Path) -> None:
    c = cluster(nodes=2)
    for resource, obj in WORKLOADS:
        c.registry.create(resource, "default", obj)
    want = 3 + 2 + 3 + 2  # replicas, replicas, parallelism, one per node

    def settled() -> list[dict[str, Any]] | None:
        """The owned pods once serve's controllers are done: as many as wanted, none being
        deleted, and the DaemonSet's own status saying every node it wants runs its pod."""
        pods = [x for x in c.pods() if x["metadata"].get("ownerReferences")]
        ds = c.registry.get("daemonsets.apps", "default", "agent").get("status") or {}
        done = (len(pods) == want and not any(x["metadata"].get("deletionTimestamp") for x in pods)
                and ds.get("desiredNumberScheduled") == ds.get("currentNumberScheduled") == 2
                and not ds.get("numberMisscheduled"))
        return pods if done else None

    served = eventually(settled, timeout=60)
    nodes = [{"apiVersion": "v1", "kind": "Node",
              "metadata": {"name": n["metadata"]["name"], "labels": n["metadata"].get("labels") or {}},
              "status": {"capacity": n["status"]["capacity"]}}
             for n in c.registry.list("nodes")["items"]]
    path = tmp_path / "manifests.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": nodes + [o for _, o in WORKLOADS]}))
    offline = load([str(path)])
    assert Counter(identity(p) for p in served) == Counter(identity(p.raw) for p in offline.pods)
    assert len(offline.pods) == want
