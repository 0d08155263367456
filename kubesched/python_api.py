"""The Python API: ``kubesched.simulate`` and ``kubesched.explain`` for notebooks and
scripts, the same runs the ``simulate`` and ``explain`` commands print (the commands are
built on these functions).

Example::

    import kubesched

    result = kubesched.simulate("cluster.yaml", {"apiVersion": "v1", "kind": "Pod", ...},
                                config="scheduler-config.yaml", seed=1)
    for pod in result.pods:
        print(pod.namespace, pod.name, pod.status, pod.node, pod.message)
    doc = result.to_json()                   # the document `kubesched simulate -o json` prints
    result.table().to_pandas()               # with pandas installed

    why = kubesched.explain("default/web-1", "cluster.yaml")
    why.to_json()["attempts"]                # per-node filter verdicts and per-plugin scores
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubesched.api.errors import KubeschedError
from kubesched.version import package_version

if TYPE_CHECKING:
    from kubesched.experiment.tables import Table
    from kubesched.sim.driver import PodOutcome, Simulation

Source = str | os.PathLike[str] | Mapping[str, Any]
TIE_BREAKS = ("random", "name")


@dataclass(frozen=True, slots=True)
class PodResult:
    """Where one pod went: ``status`` is Scheduled, Unschedulable, ... (as ``simulate``
    prints it), ``node`` the node ("" if none), ``message`` why not."""

    namespace: str
    name: str
    status: str
    node: str
    message: str
    annotations: Mapping[str, str]


class Result:
    """A finished simulation. ``simulation`` is the underlying
    :class:`kubesched.sim.driver.Simulation` (every attempt, the cluster, the timeline)."""

    def __init__(self, simulation: "Simulation", explain: bool = False, timeline: bool = False) -> None:
        self.simulation = simulation
        self._explain, self._timeline = explain, timeline
        self.pods = [PodResult(o.pod.namespace, o.pod.name, o.status, o.node or "", o.message or "",
                               dict(o.pod.annotations)) for o in simulation.results()]

    def pod(self, key: str) -> PodResult:
        """The result of ``NAMESPACE/NAME`` (or NAME in namespace default); KeyError if absent."""
        ns, _, name = key.rpartition("/")
        for p in self.pods:
            if p.namespace == (ns or "default") and p.name == name:
                return p
        raise KeyError(key)

    @property
    def summary(self) -> dict[str, Any]:
        return dict(self.simulation.summary())

    def to_json(self, *, result_annotations: bool = False) -> dict[str, Any]:
        """The document ``kubesched simulate -o json`` prints (with the same flags)."""
        sim = self.simulation
        doc: dict[str, Any] = {"pods": [o.to_json(self._explain) for o in sim.results()], "summary": sim.summary(),
                               **sim.features.to_json()}
        if result_annotations:
            _add_result_annotations(sim, doc["pods"])
        ignored = sim.ignored_pods()
        if ignored:  # finished pods, which the scheduler never sees
            doc["ignoredPods"] = ignored
        if sim.not_created:  # OrderedReady pods whose previous ordinal was never scheduled
            doc["notCreated"] = [{"pod": k, "waitsFor": v} for k, v in sim.not_created.items()]
        if self._timeline:
            doc["timeline"] = sim.timeline.entries
        objects: dict[str, Any] = {}
        if sim.storage.pv_map or sim.storage.pvc_map:
            objects.update(sim.storage.to_json())  # the final PVs and PVCs
        if sim.dra.claims:
            objects.update(sim.dra.to_json())  # the final ResourceClaims
        if objects:
            doc["objects"] = objects
        doc["version"] = package_version()
        return doc

    def table(self) -> "Table":
        """One row per pod (namespace, name, status, node, message); ``to_pandas()`` on it."""
        from kubesched.experiment.tables import Table

        cols = ["namespace", "name", "status", "node", "message"]
        return Table(cols, [{c: getattr(p, c) for c in cols} for p in self.pods])


def _add_result_annotations(sim: "Simulation", pods: list[dict[str, Any]]) -> None:
    """Each attempted pod's kube-scheduler-simulator annotations (``resultAnnotations``), as
    ``serve``/``run`` would write them after its last attempt."""
    import json

    from kubesched.explanation.kssresults import HISTORY, ProfilePlugins, result_annotations

    plugins = {name: ProfilePlugins.of(fw.points) for name, fw in sim.sched.profiles.items()}
    for out, pod in zip(sim.results(), pods):
        history: list[dict[str, str]] = []
        ann: dict[str, str] = {}
        for att in out.attempts:
            ann = result_annotations(att, plugins.get(out.pod.scheduler_name, ProfilePlugins()), history)
            history = json.loads(ann[HISTORY])
        if ann:
            pod["resultAnnotations"] = ann


def prepare(*sources: Source, config: str | os.PathLike[str] | Mapping[str, Any] | None = None, seed: int = 0,
            tie_break: str = "random", explain: bool = False, timeline: bool = False, validate: str = "strict",
            controllers: bool = True, cronjobs_fire: bool = False, kubernetes_version: str | None = None,
            feature_gates: str | None = None, progress: Callable[[str, int, int], None] | None = None,
            ) -> "Simulation":
    """Load manifests (files, directories or objects) and a configuration into a
    simulation, not yet run. ``validate``: unknown or duplicate fields are an error
    ("strict", as ``kubectl apply``), a warning ("warn") or nothing ("ignore");
    ``controllers``: workloads (Deployments, StatefulSets, Jobs, ...) become the pods their
    controllers would create; ``cronjobs_fire``: each CronJob creates one Job;
    ``kubernetes_version``: the release to decide as ("1.35"; default: the one a snapshot in
    the sources recorded, else the newest supported); ``feature_gates``: kube-scheduler's
    ``--feature-gates`` text; ``progress``: told (what, done, total) while large inputs load."""
    from kubesched.api.kubeversion import parse_minor
    from kubesched.config import load_config
    from kubesched.framework.errors import ProfileError
    from kubesched.framework.features import Features
    from kubesched.plugins.registry import in_tree_registry
    from kubesched.sim.driver import Simulation
    from kubesched.sim.loading import VALIDATE_MODES, LoadOptions, load

    if tie_break not in TIE_BREAKS:
        raise KubeschedError(f"tie_break {tie_break!r}: not one of {', '.join(TIE_BREAKS)}")
    if validate not in VALIDATE_MODES:
        raise KubeschedError(f"validate {validate!r}: not one of {', '.join(VALIDATE_MODES)}")
    paths = [os.fspath(s) for s in sources if not isinstance(s, Mapping)]
    objects = [s for s in sources if isinstance(s, Mapping)]
    manifest = load(paths, LoadOptions(validate=validate, expand=controllers, cronjobs_fire=cronjobs_fire,
                                       progress=progress), objects)
    cfg = load_config(os.fspath(config) if isinstance(config, os.PathLike) else config, in_tree_registry())
    version = parse_minor(kubernetes_version) if kubernetes_version else manifest.kubernetes_version
    features = Features.for_version(version, feature_gates or None)
    try:
        return Simulation(manifest, cfg, seed=seed, tie_break=tie_break, explain=explain, timeline=timeline,
                          features=features)
    except ProfileError as exc:  # a profile that cannot be built: name the file it came from
        where = config if isinstance(config, (str, os.PathLike)) else None
        raise KubeschedError(f"{os.fspath(where)}: {exc}" if where else str(exc)) from exc


def simulate(*sources: Source, config: str | os.PathLike[str] | Mapping[str, Any] | None = None, seed: int = 0,
             tie_break: str = "random", explain: bool = False, timeline: bool = False, single_pass: bool = False,
             validate: str = "strict", controllers: bool | None = None, cronjobs_fire: bool = False,
             on_attempt: Callable[[Any], None] | None = None) -> Result:
    """Schedule the pending pods of ``sources`` (manifest files or directories, or objects
    as dicts) with ``config`` (a KubeSchedulerConfiguration file or dict; default profile
    if None). ``tie_break``: "random" (seeded, upstream) or "name" (lowest node name).
    ``controllers`` (default: not with ``single_pass``), ``validate`` and ``cronjobs_fire``
    as :func:`prepare` takes them."""
    sim = prepare(*sources, config=config, seed=seed, tie_break=tie_break, explain=explain, timeline=timeline,
                  validate=validate, controllers=not single_pass if controllers is None else controllers,
                  cronjobs_fire=cronjobs_fire)
    if on_attempt is not None:
        sim.on_attempt = on_attempt
    sim.run(single_pass=single_pass)
    return Result(sim, explain=explain, timeline=timeline)


@dataclass(frozen=True, slots=True)
class Explanation:
    """Every attempt of one pod: per-node filter verdicts and per-plugin scores."""

    outcome: "PodOutcome"

    def to_json(self) -> dict[str, Any]:
        return dict(self.outcome.to_json(True))

def find_outcome(sim: "Simulation", pod: str) -> "PodOutcome":
    """The outcome of ``pod`` (NAMESPACE/NAME, or NAME in namespace default); a one-line
    error saying why there is none (finished, not created, not in the manifests)."""
    ns, _, name = pod.rpartition("/")
    ns = ns or "default"
    for out in sim.results():
        if out.pod.namespace == ns and out.pod.name == name:
            return out
    for p in sim.completed:
        if p.namespace == ns and p.name == name:
            raise KubeschedError(f"pod {ns}/{name}: phase {p.phase}: finished pods are invisible to the scheduler")
    waits_for = sim.not_created.get(f"{ns}/{name}")
    if waits_for is not None:
        raise KubeschedError(f"pod {ns}/{name}: not created: its StatefulSet creates it once {waits_for} "
                             f"is scheduled (OrderedReady), and {waits_for} is not")
    for p in sim.cluster.pods.values():
        if p.namespace == ns and p.name == name and p.node_name:
            raise KubeschedError(f"pod {ns}/{name}: already bound to node {p.node_name} in the given manifests "
                                 "(only pending pods are scheduled, and so explained)")
    elsewhere = sorted(o.pod.key for o in sim.results() if o.pod.name == name)
    hint = f" (did you mean {', '.join(elsewhere)}?)" if elsewhere else ""
    raise KubeschedError(f"pod {ns}/{name}: no such pod in the given manifests{hint}")


def explain(pod: str, *sources: Source, config: str | os.PathLike[str] | Mapping[str, Any] | None = None,
            seed: int = 0, tie_break: str = "random") -> Explanation:
    """Simulate ``sources`` and explain the scheduling of ``pod`` (NAMESPACE/NAME)."""
    sim = prepare(*sources, config=config, seed=seed, tie_break=tie_break, explain=True)
    sim.run()
    return Explanation(find_outcome(sim, pod))


__all__ = ["Explanation", "PodResult", "Result", "explain", "simulate"]
