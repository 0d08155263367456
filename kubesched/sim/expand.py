"""Workload objects turned into the pods their controllers would create, for the offline commands.

The objects are made by the functions ``serve``'s controllers use
(:mod:`kubesched.server.controllers.podmaking`); this module decides, as each controller's
sync would on a cluster holding the manifests, which ones are missing:

* Deployment: its ReplicaSet for the current template (an existing one owned by it and
  equal to the template, ignoring ``pod-template-hash``, is reused), sized as the rollout
  would size a new ReplicaSet; then the ReplicaSet's pods;
* ReplicaSet, ReplicationController: ``spec.replicas`` active pods, counting those it owns
  and adopting orphans its selector matches (their controller reference is set);
* StatefulSet: ordinals ``start .. start+replicas-1`` named ``<set>-<i>``, with a claim per
  ``volumeClaimTemplates`` entry unless one of that name exists; ``OrderedReady`` pods wait
  (:attr:`Expander.after`) for the previous ordinal to be scheduled, as the controller
  waits for it to be Running and Ready; ``Parallel`` pods do not;
* Job: ``parallelism`` active pods bounded by the completions left (Indexed: the lowest
  free completion indexes); a finished Job makes none;
* CronJob: nothing, or with ``cronjobs_fire`` one Job, the run scheduled at its next
  schedule time after the epoch, then that Job's pods;
* DaemonSet: a pod for each node the controller's ``NodeShouldRunDaemonPod`` accepts and
  no pod of it targets yet, pinned to the node by node affinity (the scheduler binds it).

Names are deterministic: the random five characters a controller appends are drawn from a
generator seeded with the owner's uid (a workload without ``metadata.uid`` gets a uid
derived from its kind, namespace and name), skipping names already taken.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from kubesched.api.decode import Doc
from kubesched.server.controllers import deployment as D
from kubesched.server.controllers import podmaking as M
from kubesched.server.controllers.base import controller_ref, deleting, meta, owner_reference, pod_active
from kubesched.server.controllers.cronjob import schedule_times, zone_of
from kubesched.server.controllers.daemonset import target_node
from kubesched.server.controllers.daemonutil import should_run
from kubesched.server.controllers.job import finished, pending_indexes, pods_wanted
from kubesched.server.controllers.naming import equal_ignore_hash, random_suffix
from kubesched.server.controllers.replicaset import selector_of
from kubesched.server.controllers.rollout import new_rs_replicas, revision

Obj = dict[str, Any]

# kind -> REST resource (the strategy that admits it)
WORKLOAD_RESOURCES = {"Deployment": "deployments", "ReplicaSet": "replicasets", "StatefulSet": "statefulsets",
                      "DaemonSet": "daemonsets", "Job": "jobs", "CronJob": "cronjobs",
                      "ReplicationController": "replicationcontrollers"}
ORDER = ("CronJob", "Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "Job", "DaemonSet")


def _ns(obj: Obj) -> str:
    return str(meta(obj).get("namespace") or "default")


def _key(obj: Obj) -> str:
    return f"{_ns(obj)}/{meta(obj).get('name')}"


def derived_uid(kind: str, ns: str, name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"kubesched:{kind}/{ns}/{name}"))


class Expander:
    """Called by the loader with every object read (named); returns the objects to add.

    ``after``: pod key -> the key of the pod it is created after (OrderedReady);
    ``owners``: ``"<Kind> <ns>/<name>"`` of a top-level workload -> its pods' keys."""

    def __init__(self, *, admit: Callable[[Doc], Obj], cronjobs_fire: bool = False) -> None:
        self.admit = admit
        self.cronjobs_fire = cronjobs_fire
        self.after: dict[str, str] = {}
        self.owners: dict[str, list[str]] = {}
        self._by_name: dict[tuple[str, str], Doc] = {}  # (namespace, name) -> pod (read and made)
        self._by_owner: dict[tuple[str, str, str], list[Doc]] = {}  # (ns, kind, uid or "name:"+name)
        self._orphans: dict[str, list[Doc]] = {}  # namespace -> pods without a controller
        self._claims: set[str] = set()  # ns/name of PVCs
        self._rss: list[Doc] = []
        self._nodes: list[Obj] = []
        self._made: list[Doc] = []

    def __call__(self, docs: list[Doc]) -> list[Doc]:
        by_kind: dict[str, list[Doc]] = {k: [] for k in ORDER}
        for d in docs:
            kind = d.raw["kind"]
            if kind == "Pod":
                self._add_pod(d)
            elif kind == "Node":
                self._nodes.append(d.raw)
            elif kind == "PersistentVolumeClaim":
                self._claims.add(_key(d.raw))
            if kind in by_kind:
                if not meta(d.raw).get("uid"):
                    d.raw = {**d.raw, "metadata": {**meta(d.raw), "uid": derived_uid(
                        kind, _ns(d.raw), str(meta(d.raw).get("name")))}}
                d.raw = self.admit(d)
                by_kind[kind].append(d)
        self._rss = list(by_kind["ReplicaSet"])
        for d in by_kind["CronJob"]:
            by_kind["Job"] += self._cronjob(d)
        for d in by_kind["Deployment"]:
            self._deployment(d)
        for d in self._rss:
            self._replicas(d, M.RS_API, M.RS_KIND)
        for d in by_kind["ReplicationController"]:
            self._replicas(d, M.RC_API, M.RC_KIND)
        for d in by_kind["StatefulSet"]:
            self._statefulset(d)
        for d in by_kind["Job"]:
            self._job(d)
        for d in by_kind["DaemonSet"]:
            self._daemonset(d)
        return self._made

    # -- bookkeeping ------------------------------------------------------------------------
    def _add_pod(self, d: Doc) -> None:
        ns = _ns(d.raw)
        self._by_name[(ns, str(meta(d.raw).get("name")))] = d
        ref = controller_ref(d.raw)
        if ref is None:
            self._orphans.setdefault(ns, []).append(d)
            return
        key = str(ref.get("uid") or f"name:{ref.get('name')}")
        self._by_owner.setdefault((ns, str(ref.get("kind")), key), []).append(d)

    def _make(self, source: Doc, obj: Obj) -> Doc:
        d = Doc(source.file, source.doc, source.item, obj)
        self._made.append(d)
        if obj["kind"] == "Pod":
            self._add_pod(d)
        return d

    def _group(self, owner: Obj) -> list[str]:
        """The pod list of the top-level workload ``owner`` belongs to."""
        top = owner
        ref = controller_ref(owner)
        if ref is not None and ref.get("kind") in ("Deployment", "CronJob"):
            top = {"kind": ref.get("kind"), "metadata": {"name": ref.get("name"), "namespace": _ns(owner)}}
        return self.owners.setdefault(f"{top['kind']} {_key(top)}", [])

    def _owned(self, owner: Obj, kind: str) -> Iterator[Doc]:
        """The pods whose controller reference names ``owner`` (by uid, or by kind and name
        for a reference without uid)."""
        ns = _ns(owner)
        yield from self._by_owner.get((ns, kind, str(meta(owner).get("uid") or "")), [])
        yield from self._by_owner.get((ns, kind, f"name:{meta(owner).get('name')}"), [])

    def _adopt(self, owner: Obj, api: str, kind: str) -> list[Doc]:
        """Orphans ``owner``'s selector matches, given a controller reference to it."""
        sel = selector_of(owner) if kind != M.RC_KIND else None
        rc_sel = (owner.get("spec") or {}).get("selector") if kind == M.RC_KIND else None
        out = []
        orphans = self._orphans.get(_ns(owner), [])
        for d in list(orphans):
            labels = meta(d.raw).get("labels") or {}
            if controller_ref(d.raw) is not None or deleting(d.raw):
                continue
            if (sel is not None and sel.matches(labels)) or \
                    (rc_sel and all(labels.get(k) == v for k, v in rc_sel.items())):
                refs = list(meta(d.raw).get("ownerReferences") or []) + [owner_reference(owner, api, kind)]
                d.raw = {**d.raw, "metadata": {**meta(d.raw), "ownerReferences": refs}}
                orphans.remove(d)
                out.append(d)
        return out

    def _name(self, ns: str, prefix: str, rng: random.Random) -> str:
        while True:
            name = f"{prefix}{random_suffix(rng)}"
            if (ns, name) not in self._by_name:
                return name

    def _create(self, source: Doc, owner: Obj, pod: Obj, rng: random.Random) -> str:
        pmeta = pod["metadata"]
        if not pmeta.get("name"):
            pmeta["name"] = self._name(_ns(owner), str(pmeta["generateName"]), rng)
        pmeta["namespace"] = _ns(owner)
        self._make(source, pod)
        key = f"{_ns(owner)}/{pmeta['name']}"
        self._group(owner).append(key)
        return key

    # -- controllers ----------------------------------------------------------------------
    def _deployment(self, d: Doc) -> None:
        dep = d.raw
        rss = [r.raw for r in self._rss if _owned_by(r.raw, dep)]
        template = M.template_of(dep)
        if any(equal_ignore_hash(M.template_of(rs), template) for rs in rss):
            return  # its current ReplicaSet is in the manifests: expanded as a ReplicaSet
        rev = max((revision(rs) for rs in rss), default=0) + 1
        rs = M.new_replicaset(dep, new_rs_replicas(dep, rss, 0), D.rs_annotations(dep, None, rev))
        rs["metadata"]["uid"] = derived_uid(M.RS_KIND, _ns(dep), str(rs["metadata"]["name"]))
        self._rss.append(self._make(d, rs))

    def _replicas(self, d: Doc, api: str, kind: str) -> None:
        rs = d.raw
        owned = [p for p in self._owned(rs, kind)] + self._adopt(rs, api, kind)
        group = self._group(rs)
        active = [p for p in owned if pod_active(p.raw)]
        group += [_key(p.raw) for p in owned]
        rng = random.Random(str(meta(rs).get("uid")))
        for _ in range(int(M.spec_of(rs).get("replicas") or 0) - len(active)):
            self._create(d, rs, M.pod_from_template(M.template_of(rs), rs, api, kind), rng)

    def _statefulset(self, d: Doc) -> None:
        sts = d.raw
        spec = M.spec_of(sts)
        name, ns = str(meta(sts).get("name")), _ns(sts)
        ordered = spec.get("podManagementPolicy", "OrderedReady") == "OrderedReady"
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        previous: Doc | None = None
        for i in range(start, start + int(spec.get("replicas") or 0)):
            pod = self._by_name.get((ns, f"{name}-{i}"))
            if pod is None:
                for t in spec.get("volumeClaimTemplates") or []:
                    claim = M.statefulset_claim(sts, t, i)
                    if _key(claim) not in self._claims:
                        self._claims.add(_key(claim))
                        self._make(d, claim)
                key = self._create(d, sts, M.statefulset_pod(sts, i), random.Random(0))
                pod = self._made[-1]
                if ordered and previous is not None and not (previous.raw.get("spec") or {}).get("nodeName"):
                    self.after[key] = _key(previous.raw)
            else:
                self._adopt_by_name(sts, pod)
                self._group(sts).append(_key(pod.raw))
            previous = pod

    def _adopt_by_name(self, sts: Obj, pod: Doc) -> None:
        """An orphan named as one of the set's ordinals and matching its selector is adopted
        (``ClaimPods`` in ``stateful_set.go``)."""
        sel = selector_of(sts)
        if controller_ref(pod.raw) is None and not deleting(pod.raw) and sel is not None and \
                sel.matches(meta(pod.raw).get("labels") or {}):
            refs = list(meta(pod.raw).get("ownerReferences") or []) + [owner_reference(sts, M.STS_API, M.STS_KIND)]
            pod.raw = {**pod.raw, "metadata": {**meta(pod.raw), "ownerReferences": refs}}

    def _job(self, d: Doc) -> None:
        job = d.raw
        if finished(job):
            return
        owned = [p.raw for p in self._owned(job, M.JOB_KIND)]
        active = [p for p in owned if pod_active(p)]
        self._group(job).extend(_key(p) for p in owned)
        succeeded = max(int((job.get("status") or {}).get("succeeded") or 0),
                        sum(1 for p in owned if (p.get("status") or {}).get("phase") == "Succeeded"))
        rng = random.Random(str(meta(job).get("uid")))
        for index in pending_indexes(job, owned, max(0, pods_wanted(job, succeeded) - len(active))):
            self._create(d, job, M.job_pod(job, index), rng)

    def _cronjob(self, d: Doc) -> list[Doc]:
        cj = d.raw
        if not self.cronjobs_fire or M.spec_of(cj).get("suspend"):
            return []
        tz = zone_of(cj)
        _, _, first = schedule_times(str(M.spec_of(cj).get("schedule")), tz, 0.0, 0.0)
        job = M.cronjob_job(cj, first, tz)
        if any(str(meta(j.raw).get("name")) == meta(job).get("name") for j in self._made):
            return []
        job["metadata"]["uid"] = derived_uid(M.JOB_KIND, _ns(cj), str(job["metadata"]["name"]))
        made = Doc(d.file, d.doc, d.item, job)
        made.raw = self.admit(made)
        self._made.append(made)
        return [made]

    def _daemonset(self, d: Doc) -> None:
        ds = d.raw
        covered = {target_node(p.raw) for p in self._owned(ds, M.DS_KIND)}
        self._group(ds).extend(_key(p.raw) for p in self._owned(ds, M.DS_KIND))
        template = M.template_of(ds)
        revision = M.daemon_revision(ds)
        rng = random.Random(str(meta(ds).get("uid")))
        for node in self._nodes:
            node_name = str(meta(node).get("name"))
            if node_name not in covered and should_run(template, node)[0]:
                self._create(d, ds, M.daemon_pod(ds, node_name, revision), rng)


def replica_of(raw: Obj) -> Obj:
    """The pod one replica of a workload is (``capacity fit --pod``): a Deployment's through
    its ReplicaSet, a StatefulSet's ordinal 0 without its claims (fit copies one pod, and a
    claim is one pod's own), a Job's first pod; a PodTemplate's ``template``."""
    kind = raw["kind"]
    if kind == "PodTemplate":
        owner = {"metadata": {**meta(raw)}}
        pod = M.pod_from_template(raw.get("template") or {}, owner, "v1", "PodTemplate")
        del pod["metadata"]["ownerReferences"]
    elif kind == "Deployment":
        rs = M.new_replicaset(raw, 1, {})
        pod = M.pod_from_template(M.template_of(rs), rs, M.RS_API, M.RS_KIND)
    elif kind == "StatefulSet":
        sts = {**raw, "spec": {**M.spec_of(raw), "volumeClaimTemplates": []}}
        pod = M.statefulset_pod(sts, 0)
    elif kind == "Job":
        pod = M.job_pod(raw, 0 if M.is_indexed(raw) else None)
    else:
        pod = M.pod_from_template(M.template_of(raw), raw, M.RS_API, M.RS_KIND)
    pod["metadata"].setdefault("name", str(pod["metadata"].pop("generateName", "pod")).rstrip("-"))
    return pod


def _owned_by(obj: Obj, owner: Obj) -> bool:
    ref = controller_ref(obj)
    return ref is not None and ref.get("kind") == owner.get("kind") and \
        (ref.get("uid") == meta(owner).get("uid") or ref.get("name") == meta(owner).get("name"))

