"""What the three capacity questions (and ``replay``) share: a cluster run through the real
scheduler, a pod template read from a file, copies of a pod, and a pod taken off its node.

Every answer of :mod:`kubesched.sim.capacity` is a run of :class:`~kubesched.sim.driver.Simulation`
(the wiring ``kubesched simulate`` uses: cache, queue, one Framework per profile, on the
virtual clock) over a variant of the user's manifest, so an answer is never an estimate
of the scheduler's behaviour but the scheduler's own decisions on that variant.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api.decode import Manifest
from kubesched.api.defaults import default_manifest, describe
from kubesched.api.documents import documents
from kubesched.api.errors import DecodeError, KubeschedError
from kubesched.api.objects import Node, Pod
from kubesched.config import SchedulerConfig
from kubesched.framework.errors import ProfileError
from kubesched.framework.features import Features
from kubesched.sim.driver import TERMINAL_PHASES, Simulation


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOptions:
    """How each verification run schedules: the configuration and the random choices."""

    config: SchedulerConfig
    seed: int = 0
    tie_break: str = "random"
    config_file: str | None = None  # named in errors about a profile that cannot be built
    features: Features | None = None  # the release and gates (None: the manifest's recorded release)


def wire(manifest: Manifest, opts: RunOptions, *, explain: bool = False) -> Simulation:
    """``manifest`` loaded into a wired scheduler, nothing run yet."""
    try:
        return Simulation(manifest, opts.config, seed=opts.seed, tie_break=opts.tie_break, explain=explain,
                          features=opts.features)
    except ProfileError as exc:
        raise KubeschedError(f"{opts.config_file}: {exc}" if opts.config_file else str(exc)) from exc


def simulate(manifest: Manifest, opts: RunOptions, *, explain: bool = False,
             single_pass: bool = False) -> Simulation:
    """``manifest`` through the real scheduler, queue run to the end (or one pass)."""
    sim = wire(manifest, opts, explain=explain)
    sim.run(single_pass=single_pass)
    return sim


def live_pods(manifest: Manifest) -> list[Pod]:
    """The pods the scheduler sees (finished pods left out)."""
    return [p for p in manifest.pods if p.phase not in TERMINAL_PHASES]


def bound_pods(sim: Simulation) -> list[Pod]:
    """The pods bound at the end of a run, in arrival order."""
    return sorted((p for p in sim.cluster.pods.values() if p.node_name), key=lambda p: p.seq)


def placements(sim: Simulation) -> dict[str, str]:
    """``namespace/name`` -> node of every pending pod the run scheduled."""
    return {o.pod.key: o.node for o in sim.results() if o.status == "Scheduled" and o.node}


def unscheduled(sim: Simulation) -> list[tuple[Pod, str]]:
    """The pending pods a run left pending, with the scheduler's message."""
    return [(o.pod, o.message or o.status) for o in sim.results()
            if o.status not in ("Scheduled", "Preempted") and o.skipped is None]


def evicted(pod: Pod) -> Pod:
    """``pod`` as the pending pod that replaces it once evicted from its node (the same
    spec, without ``spec.nodeName`` and with a Pending status)."""
    raw = dict(pod.raw)
    spec = dict(raw.get("spec") or {})
    spec.pop("nodeName", None)
    raw["spec"] = spec
    raw["status"] = {"phase": "Pending"}
    return dataclasses.replace(pod, raw=raw, node_name="", start_time="", phase="Pending",
                               nominated_node_name="", extra={})


def node_requests(pods: Sequence[Pod], nodes: Sequence[Node]) -> dict[str, dict[str, int]]:
    """Summed requests (scheduler units: cpu in millis) of the pods bound to each node."""
    out: dict[str, dict[str, int]] = {n.name: {} for n in nodes}
    for p in pods:
        req = out.get(p.node_name)
        if req is None:
            continue
        for r, v in p.requests.items():
            req[r] = req.get(r, 0) + v
    return out


TEMPLATE_KINDS = ("Pod", "PodTemplate", "Deployment", "ReplicaSet", "StatefulSet", "Job")


def replica_pod(path: str, n: int, raw: dict[str, Any]) -> dict[str, Any]:
    """One replica of a workload (or a PodTemplate's pod), as its controller would create it
    (:mod:`kubesched.sim.expand`); read strictly and admitted as ``simulate`` reads it."""
    from kubesched.api.decode import Doc
    from kubesched.api.schemas import check_object
    from kubesched.sim.expand import replica_of
    from kubesched.sim.loading import admit, field_problems

    try:
        d = Doc(path, n, "", check_object(raw))
    except DecodeError as exc:
        raise exc.at(obj=describe(raw), file=path) from None
    problems = field_problems(d)
    if problems:
        raise DecodeError("strict decoding error: " + ", ".join(problems), obj=describe(raw), file=path)
    return replica_of(raw if raw["kind"] == "PodTemplate" else admit(d))


def load_pod_template(path: str, manifest: Manifest) -> Pod:
    """The one Pod of ``path`` (or the pod one replica of the Deployment, ReplicaSet,
    StatefulSet or Job of ``path`` would be, or a PodTemplate's), defaulted and admitted as
    the API server would (its ``priorityClassName`` resolved against ``manifest``'s
    classes), without a node."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise DecodeError(exc.strerror or str(exc), file=path) from None
    except UnicodeDecodeError as exc:
        raise DecodeError(f"not UTF-8 text: {exc.reason} at byte {exc.start}", file=path) from None
    docs = [(n, obj) for n, obj in documents(path, text) if obj is not None]
    if len(docs) != 1:
        raise DecodeError(f"a pod template file holds exactly one Pod, found {len(docs)} documents", file=path)
    n, raw = docs[0]
    kind = raw.get("kind") if isinstance(raw, dict) else type(raw).__name__
    if not isinstance(raw, dict) or kind not in TEMPLATE_KINDS:
        raise DecodeError(f"the template must be a {', '.join(TEMPLATE_KINDS[:-1])} or {TEMPLATE_KINDS[-1]}, "
                          f"got {kind!r}", field="kind", obj=f"document {n}", file=path)
    if kind != "Pod":
        raw = replica_pod(path, n, raw)
    raw = dict(raw)
    meta = dict(raw.get("metadata") or {}) if isinstance(raw.get("metadata"), dict) else {}
    if not meta.get("name"):
        meta["name"] = str(meta.get("generateName") or "pod").rstrip("-") or "pod"
    meta.pop("generateName", None)
    raw["metadata"] = meta
    spec = raw.get("spec")
    if isinstance(spec, dict) and spec.get("nodeName"):
        raise DecodeError("a pod template must not name a node", field="spec.nodeName",
                          obj=describe(raw), file=path)
    classes = {pc.name: pc for pc in manifest.priority_classes}
    try:
        defaulted = default_manifest([raw], classes, files=[path])[0]
        return Pod.from_dict(defaulted, require_limits=False)
    except DecodeError as exc:
        raise exc.at(obj=describe(raw), file=path) from None


def copy_pod(template: Pod, name: str, uid: str, seq: int, **spec: Any) -> Pod:
    """A copy of ``template`` with a new name and uid (and ``spec`` keys overridden)."""
    meta = {**template.raw.get("metadata", {}), "name": name, "uid": uid}
    raw = {**template.raw, "metadata": meta}
    if spec:
        raw["spec"] = {**template.raw.get("spec", {}), **spec}
    return dataclasses.replace(template, raw=raw, name=name, uid=uid, seq=seq, extra={})
