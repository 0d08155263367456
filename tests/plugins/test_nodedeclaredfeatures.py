"""NodeDeclaredFeatures against upstream's tables.

Plugin cases ported from upstream ``pkg/scheduler/framework/plugins/nodedeclaredfeatures/
nodedeclaredfeatures_test.go`` (TestPreFilter, TestFilter, TestEnqueueExtensionsNodeUpdate,
TestEnqueueExtensionsPodUpdate / TestIsSchedulableAfterTargetPodUpdate, TestEventsToRegister),
whose mock features become :class:`Feature` values that infer what the mock returned. The
"Infer returns error" case is left out: kubesched's plugin always has a version.
TestFilter's expected reason is the 1.35 file's
(``node declared features check failed - unsatisfied requirements: FeatureA``) at 1.35 and
the later file's ``errReasonUnsatisfiedRequirements`` (``node(s) didn't match Pod's required
features``) from 1.36; both UnschedulableAndUnresolvable.

TestDryRunPreemptionCandidateFiltering (the later test file) is ported with the same nodes,
victims and mock features: preemption considers only nodes that declare what the
preemptor needs.

Registry cases: ``k8s.io/component-helpers`` ``nodedeclaredfeatures/features/registry.go``
per release (v0.35.4, v0.36.0, and the 1.37 branch), and the InferForScheduling tables of
``restartallcontainers/restart_all_containers_test.go`` and
``usernamespaceshostnetwork/user_namespaces_host_network_test.go``; ``volumebindmountoptions``
has no test table upstream, so its cases follow ``feature.go`` by hand (any container kind,
any mount with a non-empty ``bindMountOptions``).
"""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest

from kubesched.api.nodedeclaredfeatures import Feature, infer_for_scheduling, registry
from kubesched.api.objects import Node, Pod
from kubesched.cache.cache import Cache
from kubesched.cluster.inprocess import InProcessCluster
from kubesched.explanation.evidence import EvidenceContext, evidence
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, QueueingHint, Resource
from kubesched.framework.features import Features
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo
from kubesched.plugins.nodedeclaredfeatures.plugin import NodeDeclaredFeatures
from kubesched.plugins.preemption.args import DefaultPreemptionArgs
from kubesched.plugins.preemption.ordering import StartTimes
from kubesched.plugins.queuesort import PrioritySort
from kubesched.python_api import prepare
from kubesched.queue.hints import build_queueing_hint_map
from kubesched.queue.scheduling_queue import SchedulingQueue
from kubesched.scheduler.eventhandlers import EventHandlers
from kubesched.scheduler.scheduler import Scheduler
from kubesched.testing.handle import StaticObjects, handle_for
from kubesched.testing.harness import filter_all
from kubesched.testing.wrappers import make_node, make_pod
from tests.plugins.test_defaultpreemption import build, fit, pre_filtered


def _handle(version: str, gates: str = "") -> Any:
    return SimpleNamespace(features=Features.for_version(version, gates))


def _always(name: str, infer: bool = True, max_version: tuple[int, int, int] | None = None) -> Feature:
    """upstream ``createMockFeature(t, name, infer, maxVersion)``."""
    return Feature(name, "1.35", infer_for_scheduling=lambda spec: infer, max_version=max_version)


def _plugin(features: list[Feature], enabled: bool = True, version: tuple[int, int, int] = (1, 35, 0),
            release: str = "1.35") -> NodeDeclaredFeatures:
    return NodeDeclaredFeatures(None, _handle(release), features=features, version=version, enabled=enabled)


def _node(name: str, declared: list[str] | None = None) -> Node:
    raw = make_node().name(name).raw()
    if declared is not None:
        raw["status"]["declaredFeatures"] = declared
    return Node.from_dict(raw, validate=False)


def _info(node: Node) -> NodeInfo:
    ni = NodeInfo()
    ni.set_node(node)
    return ni


POD = make_pod().name("test-pod").obj()


# -- TestPreFilter ------------------------------------------------------------------------------
@pytest.mark.parametrize("enabled,features,version,want_code,want_reqs", [
    pytest.param(False, [_always("TestFeature")], (1, 35, 0), Code.Skip, None, id="plugin disabled"),
    pytest.param(True, [_always("TestFeature")], (1, 35, 0), Code.Success, {"TestFeature"},
                 id="Pod with feature requirements"),
    pytest.param(True, [_always("TestFeature1", max_version=(1, 38, 0)),
                        _always("TestFeature2", max_version=(1, 38, 0))],
                 (1, 35, 0), Code.Success, {"TestFeature1", "TestFeature2"},
                 id="Pod with multiple feature requirements"),
    pytest.param(True, [_always("TestFeature", infer=False)], (1, 35, 0), Code.Skip, None,
                 id="Pod with no requirements"),
    pytest.param(True, [_always("TestFeature", max_version=(1, 33, 0))], (1, 34, 0), Code.Skip, None,
                 id="Feature not required, version > MaxVersion"),
])
def test_pre_filter(enabled: bool, features: list[Feature], version: tuple[int, int, int], want_code: Code,
                    want_reqs: set[str] | None) -> None:
    pl = _plugin(features, enabled, version)
    state = CycleState()
    result, status = pl.pre_filter(state, POD, [])
    assert result is None
    assert status.code == want_code
    if want_reqs is None:  # nothing written: Filter would fail to read it
        assert pl.filter(state, POD, _info(_node("n"))).code == (Code.Error if enabled else Code.Success)
    else:
        assert pl.requirements(POD) == want_reqs


# -- TestFilter -----------------------------------------------------------------------------------
GENERIC = "node(s) didn't match Pod's required features"
FILTER_CASES = [
    pytest.param(False, ["FeatureA", "FeatureB"], [], None, None, id="plugin disabled"),
    pytest.param(True, ["FeatureA", "FeatureB"], ["FeatureA"], None, None, id="Node matches requirements"),
    pytest.param(True, ["FeatureB"], ["FeatureA"], "FeatureA", GENERIC, id="Node does not match requirements"),
    pytest.param(False, ["FeatureA", "FeatureB", "FeatureC"], ["FeatureA", "FeatureC"], None, None,
                 id="Node with multiple features, pod requires subset"),
    pytest.param(True, None, ["FeatureA"], "FeatureA", GENERIC, id="Node has no declared features"),
    pytest.param(True, ["FeatureA"], ["FeatureA", "FeatureB"], "FeatureB", GENERIC,
                 id="Node with some but not all required features"),
]


@pytest.mark.parametrize("release", ["1.35", "1.36", "1.37"])
@pytest.mark.parametrize("enabled,declared,reqs,missing_1_35,reason", FILTER_CASES)
def test_filter(release: str, enabled: bool, declared: list[str] | None, reqs: list[str], missing_1_35: str | None,
                reason: str | None) -> None:
    pl = _plugin([_always(r) for r in reqs], enabled, release=release)
    state = CycleState()
    if reqs:
        pl.pre_filter(state, POD, [])
    got = pl.filter(state, POD, _info(_node("node-1", declared)))
    if reason is None:
        assert got.code == Code.Success
        return
    assert got.code == Code.UnschedulableAndUnresolvable
    want = reason if release != "1.35" else \
        f"node declared features check failed - unsatisfied requirements: {missing_1_35}"
    assert got.reasons == (want,)


def test_filter_without_pre_filter_state() -> None:
    """TestFilter "Error getting pre-filter state": fwk.AsStatus of the read error."""
    got = _plugin([]).filter(CycleState(), POD, _info(_node("node-1")))
    assert got.code == Code.Error
    assert got.reasons == ('error reading "PreFilterNodeDeclaredFeatures" from cycle-state: not found',)


# -- TestEnqueueExtensionsNodeUpdate / PodUpdate ----------------------------------------------------------
_ADD = object()  # no old node: an Add event


@pytest.mark.parametrize("old,new,want", [
    pytest.param(_ADD, ["FeatureA"], QueueingHint.Queue, id="Node Add with feature"),
    pytest.param(None, ["FeatureA"], QueueingHint.Queue, id="Node Update (Features Added)"),
    pytest.param(["FeatureA"], ["FeatureA"], QueueingHint.QueueSkip, id="Node Update (Features Unchanged)"),
])
def test_node_change_hint(old: Any, new: list[str], want: QueueingHint) -> None:
    old_node = None if old is _ADD else _node("node-1", old)
    assert _plugin([]).is_schedulable_after_node_change(POD, old_node, _node("node-1", new)) == want


def _pod(uid: str, needs: bool, name: str = "test-pod") -> Pod:
    """The mock's answer is carried in the spec: the feature infers True for hostname ``needs``."""
    w = make_pod().name(name).uid(uid)
    if needs:
        w.set("spec.hostname", "needs")
    return w.obj()


NEEDS = Feature("TestFeature", "1.35", infer_for_scheduling=lambda spec: spec.get("hostname") == "needs")


@pytest.mark.parametrize("old,new,want", [
    pytest.param(_pod("123", False), _pod("123", True), QueueingHint.Queue, id="Pod Update adds requirement"),
    pytest.param(_pod("123", True), _pod("123", False), QueueingHint.Queue, id="Pod Update removes requirement"),
    pytest.param(_pod("123", False), _pod("123", False), QueueingHint.QueueSkip,
                 id="Pod Update with no change in requirements"),
    pytest.param(_pod("456", True, "another-test-pod"), _pod("456", False, "another-test-pod"), QueueingHint.QueueSkip,
                 id="Updated pod not the same as target pod"),
])
def test_pod_update_hint(old: Pod, new: Pod, want: QueueingHint) -> None:
    target = make_pod().name("test-pod").uid("123").obj()
    assert _plugin([NEEDS]).is_schedulable_after_pod_update(target, old, new) == want


def test_events_registered_only_when_enabled() -> None:
    assert _plugin([], enabled=False).events_to_register() == []
    events = [e.event for e in _plugin([]).events_to_register()]
    assert events == [ClusterEvent(Resource.Node, ActionType.Add | ActionType.UpdateNodeDeclaredFeature),
                      ClusterEvent(Resource.Pod, ActionType.Update)]


# -- the registry per release -----------------------------------------------------------------------------
@pytest.mark.parametrize("release,want", [
    ("1.34", []),
    ("1.35", ["GuaranteedQoSPodCPUResize", "InPlacePodLevelResourcesVerticalScaling",
              "RestartAllContainersOnContainerExits"]),
    ("1.36", ["ExtendWebSocketsToKubelet", "InPlacePodLevelResourcesVerticalScaling",
              "InPlacePodVerticalScalingInitContainers", "RestartAllContainersOnContainerExits",
              "UserNamespacesHostNetworkSupport"]),
    ("1.37", ["DRANodeAllocatableResources", "DRAOptionalNodeOperations", "ExtendWebSocketsToKubelet",
              "InPlacePodLevelResourcesVerticalScaling", "InPlacePodVerticalScalingInitContainers",
              "InPlacePodVerticalScalingMemoryBackedVolumes", "RestartAllContainersOnContainerExits",
              "UserNamespacesHostNetworkSupport", "VolumeBindMountOptions"]),
])
def test_registry_per_release(release: str, want: list[str]) -> None:
    assert [f.name for f in registry(release)] == want


_RULES = [{"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [1]}}]
_CTR_RULES = {"name": "container", "image": "image", "restartPolicy": "Never", "restartPolicyRules": _RULES}
_PLAIN = {"name": "c", "image": "image"}
_MOUNT = {"name": "c", "image": "image",
          "volumeMounts": [{"name": "v", "mountPath": "/v", "bindMountOptions": ["noexec"]}]}
RESTART = "RestartAllContainersOnContainerExits"
USERNS = "UserNamespacesHostNetworkSupport"
MOUNTS = "VolumeBindMountOptions"


@pytest.mark.parametrize("spec,by_release", [
    pytest.param({"initContainers": [_CTR_RULES], "containers": [_PLAIN]}, {"1.35": {RESTART}, "1.37": {RESTART}},
                 id="restart: init container with rules"),
    pytest.param({"initContainers": [_PLAIN], "containers": [_CTR_RULES]}, {"1.35": {RESTART}, "1.36": {RESTART}},
                 id="restart: regular container with rules"),
    pytest.param({"initContainers": [_PLAIN], "containers": [_PLAIN]}, {"1.35": set(), "1.37": set()},
                 id="restart: no rules"),
    pytest.param({"hostNetwork": True, "hostUsers": False, "containers": [_PLAIN]},
                 {"1.35": set(), "1.36": {USERNS}, "1.37": {USERNS}}, id="userns: HostNetwork true, HostUsers false"),
    pytest.param({"hostNetwork": True, "containers": [_PLAIN]}, {"1.36": set()},
                 id="userns: HostNetwork true, HostUsers nil"),
    pytest.param({"hostNetwork": True, "hostUsers": True, "containers": [_PLAIN]}, {"1.36": set()},
                 id="userns: HostNetwork true, HostUsers true"),
    pytest.param({"hostNetwork": False, "hostUsers": False, "containers": [_PLAIN]}, {"1.36": set()},
                 id="userns: HostNetwork false, HostUsers false"),
    pytest.param({"containers": [_MOUNT]}, {"1.36": set(), "1.37": {MOUNTS}}, id="mounts: container mount options"),
    pytest.param({"containers": [_PLAIN], "ephemeralContainers": [_MOUNT]}, {"1.37": {MOUNTS}},
                 id="mounts: ephemeral container mount options"),
    pytest.param({"containers": [{**_MOUNT,
                                  "volumeMounts": [{"name": "v", "mountPath": "/v", "bindMountOptions": []}]}]},
                 {"1.37": set()}, id="mounts: empty options"),
])
def test_infer_for_scheduling(spec: dict[str, Any], by_release: dict[str, set[str]]) -> None:
    for release, want in by_release.items():
        assert infer_for_scheduling(registry(release), spec, (1, int(release[2:]), 0)) == want, release


# -- the plugin as each release builds it -----------------------------------------------------------------
def test_release_plugin_on_real_registry() -> None:
    """1.36's plugin (gate on by default) with its own registry: a pod with host networking and
    hostUsers false only fits a node declaring UserNamespacesHostNetworkSupport."""
    pl = NodeDeclaredFeatures(None, _handle("1.36"))
    pod = make_pod().name("p").set("spec.hostNetwork", True).set("spec.hostUsers", False).obj()
    state = CycleState()
    assert pl.pre_filter(state, pod, [])[1].code == Code.Success
    assert pl.filter(state, pod, _info(_node("yes", [USERNS, "ExtendWebSocketsToKubelet"]))).success
    got: Status = pl.filter(state, pod, _info(_node("no", ["ExtendWebSocketsToKubelet"])))
    assert got.code == Code.UnschedulableAndUnresolvable and got.reasons == (GENERIC,)


@pytest.mark.parametrize("release,gates,enabled", [("1.35", "", False), ("1.35", "NodeDeclaredFeatures=true", True),
                                                   ("1.36", "", True), ("1.36", "NodeDeclaredFeatures=false", False),
                                                   ("1.37", "", True)])
def test_gate_per_release(release: str, gates: str, enabled: bool) -> None:
    """The gate's defaults (1.35 alpha off, 1.36 beta on, 1.37 GA); with it off the plugin
    skips every pod (upstream New returns a disabled plugin)."""
    pl = NodeDeclaredFeatures(None, _handle(release, gates))
    pod = make_pod().name("p").set("spec.containers", [_CTR_RULES]).obj()
    assert pl.pre_filter(CycleState(), pod, [])[1].code == (Code.Success if enabled else Code.Skip)


# -- requeueing through the scheduler's event handlers --------------------------------------------------------
def test_node_update_requeues_only_when_declared_features_change() -> None:
    """A pod NodeDeclaredFeatures rejected stays unschedulable through a node update that
    changes only labels (UpdateNodeLabel is not registered) and is queued by one that
    changes ``status.declaredFeatures`` (UpdateNodeDeclaredFeature, whose hint compares the
    lists: TestEnqueueExtensionsNodeUpdate)."""
    def now() -> float:
        return 1000.0

    pl = NodeDeclaredFeatures(None, _handle("1.36"))
    cluster = InProcessCluster(now)
    sched = Scheduler(Cache(), cluster, cluster, now, random.Random(0))
    sched.profiles["p"] = None  # type: ignore[assignment]  # only the name matters here
    sched.queue = SchedulingQueue(PrioritySort().sort_key, now, initial_backoff=0.0, max_backoff=0.0,
                                  hint_maps={"p": build_queueing_hint_map({pl.name: pl.events_to_register()})})
    handlers = EventHandlers(sched)
    pod = make_pod().name("userns").uid("u1").scheduler_name("p").set("spec.hostNetwork", True) \
        .set("spec.hostUsers", False).obj()
    plain = _node("n1")
    handlers.on_node_add(plain)
    sched.queue.add(pod)
    qpi = sched.queue.pop()
    assert qpi is not None
    qpi.unschedulable_plugins = {pl.name}
    assert sched.queue.add_unschedulable(qpi) is None

    def waiting() -> set[str]:
        assert sched.queue is not None
        return {q.pod.name for q in sched.queue.active_q.infos() + sched.queue.backoff_q.infos()}

    relabelled = Node.from_dict({**plain.raw, "metadata": {**plain.raw["metadata"], "labels": {"a": "b"}}},
                                validate=False)
    handlers.on_node_update(plain, relabelled)
    assert waiting() == set()
    handlers.on_node_update(relabelled, _node("n1", [USERNS]))
    assert waiting() == {"userns"}


def test_explain_evidence_names_the_missing_features() -> None:
    """``explain``'s evidence for a node NodeDeclaredFeatures rejected: what the pod needs
    (PreFilter's inference), what the node declares, what is missing."""
    pl = NodeDeclaredFeatures(None, _handle("1.36"))
    pod = make_pod().name("p").set("spec.containers", [_CTR_RULES]).set("spec.hostNetwork", True) \
        .set("spec.hostUsers", False).obj()
    state = CycleState()
    pl.pre_filter(state, pod, [])
    ni = _info(_node("n", [RESTART, "ExtendWebSocketsToKubelet"]))
    got = evidence("NodeDeclaredFeatures", EvidenceContext(pod, state, [ni], StaticObjects()), ni)
    assert got == {"requiredFeatures": [RESTART, USERNS], "declaredFeatures": [RESTART, "ExtendWebSocketsToKubelet"],
                   "missing": [USERNS]}


# -- a simulation per release ---------------------------------------------------------------------------------
def _manifests() -> list[dict[str, Any]]:
    plain = {"name": "c", "image": "busybox"}
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}, "declaredFeatures": d}}
             for n, d in (("n1", []), ("n2", [MOUNTS]))]
    mounts = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "mounts", "namespace": "default"},
              "spec": {"containers": [{**plain, "volumeMounts": [{"name": "v", "mountPath": "/v",
                                                                  "bindMountOptions": ["noexec"]}]}],
                       "volumes": [{"name": "v", "emptyDir": {}}]}}
    restart = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "restart", "namespace": "default"},
               "spec": {"containers": [{**plain, "restartPolicyRules": _RULES}]}}
    return [*nodes, mounts, restart]


@pytest.mark.parametrize("release,mounts,restart", [
    ("1.35", "any", "any"),  # gate off: nothing is filtered
    ("1.36", "any", "pending"),  # VolumeBindMountOptions is not in 1.36's registry
    ("1.37", "n2", "pending"),
])
def test_simulation_per_release(release: str, mounts: str, restart: str) -> None:
    """The default profile of each release, end to end (manifests validated strictly, so
    ``declaredFeatures`` and ``bindMountOptions`` are known fields). n1 declares nothing, n2
    VolumeBindMountOptions; no node declares RestartAllContainersOnContainerExits. A pending
    pod gets upstream's FitError text: ``0/2 nodes are available: 2 node(s) didn't match
    Pod's required features.``"""
    sim = prepare(*_manifests(), kubernetes_version=release, tie_break="name")
    sim.run()
    got = {o.pod.name: o for o in sim.results()}
    for name, want in (("mounts", mounts), ("restart", restart)):
        if want == "pending":
            assert not got[name].node
            assert (got[name].message or "").startswith(
                "0/2 nodes are available: 2 node(s) didn't match Pod's required features.")
        else:
            assert got[name].node == want if want != "any" else got[name].node in ("n1", "n2")


@pytest.mark.parametrize("release", ["1.35", "1.36", "1.37"])
def test_batch_and_per_node_forms_agree(release: str) -> None:
    """The batch Filter gives the per-node verdicts (nodes sharing a declared list, nodes
    declaring nothing, a superset, a reordering)."""
    nodes = [_node("a", [RESTART, USERNS]), _node("b", [USERNS, RESTART]), _node("c"), _node("d", [RESTART]),
             _node("e", [RESTART, USERNS, MOUNTS]), _node("f", [USERNS])]
    handle = handle_for([], nodes)
    handle.features = Features.for_version(release, "NodeDeclaredFeatures=true" if release == "1.35" else "")
    pl = NodeDeclaredFeatures(None, handle)
    for pod in (make_pod().name("r").set("spec.containers", [_CTR_RULES]).obj(),
                make_pod().name("u").set("spec.containers", [_CTR_RULES]).set("spec.hostNetwork", True)
                .set("spec.hostUsers", False).obj(), POD):
        per_node = filter_all(pl, pod, handle)
        assert filter_all(pl, pod, handle, batch=True) == per_node
    assert [n for n, st in per_node.items() if not st.success] == []  # POD needs nothing


# -- TestDryRunPreemptionCandidateFiltering -------------------------------------------------------------------
def _needs_first_container(feature: str, container: str) -> Feature:
    def infer(spec: Any) -> bool:
        ctrs = spec.get("containers") or []
        return bool(ctrs) and ctrs[0].get("name") == container
    return Feature(feature, "1.35", infer_for_scheduling=infer)


MOCKS = [_needs_first_container("intel.com/avx512", "container-req-avx512"),
         _needs_first_container("arm.com/sve2", "container-req-sve2"),
         _needs_first_container("other.com/unsatisfied", "container-req-unsat")]
_LARGE = {"cpu": "1000m", "memory": "1000Mi"}
EVERY_NODE = {"node-avx512": ["victim-avx512"], "node-no-feature": ["victim-no-feature"], "node-sve2": ["victim-sve2"]}


def _preemptor(container: str) -> Pod:
    return make_pod().name(f"preemptor-{container}").uid(f"preemptor-{container}").priority(1000) \
        .container(name=container, image="pause", requests=_LARGE).obj()


@pytest.mark.parametrize("enabled,container,want", [
    pytest.param(True, "container-req-avx512", {"node-avx512": ["victim-avx512"]},
                 id="preemptor requires AVX-512, only node-avx512 is preemption candidate"),
    pytest.param(True, "container-req-sve2", {"node-sve2": ["victim-sve2"]},
                 id="preemptor requires SVE2, only node-sve2 is preemption candidate"),
    pytest.param(True, "container-req-unsat", {}, id="preemptor requires unsatisfied feature, no candidates returned"),
    pytest.param(True, "generic-container",
                 EVERY_NODE,
                 id="preemptor has no feature requirements, all nodes are preemption candidates"),
    pytest.param(False, "container-req-avx512",
                 EVERY_NODE,
                 id="feature gate disabled, feature requirements are ignored and all nodes are candidates"),
])
def test_dry_run_preemption_candidates(enabled: bool, container: str, want: dict[str, list[str]]) -> None:
    """Preemption only considers nodes that declare what the preemptor needs: NodeDeclaredFeatures
    rejects the others as UnschedulableAndUnresolvable while victims are removed."""
    nodes = []
    for name, declared in (("node-avx512", ["intel.com/avx512"]), ("node-sve2", ["arm.com/sve2"]),
                           ("node-no-feature", None)):
        raw = make_node().name(name).capacity(cpu="1000m", memory="1000Mi", pods="10").raw()
        if declared is not None:
            raw["status"]["declaredFeatures"] = declared
        nodes.append(Node.from_dict(raw, validate=False))
    victims = [make_pod().name(f"victim-{n.name[5:]}").uid(f"victim-{n.name[5:]}").node(n.name).priority(500)
               .req(**_LARGE).obj() for n in nodes]
    ndf = NodeDeclaredFeatures(None, None, features=MOCKS, version=(1, 36, 0), enabled=enabled)
    h, dp = build(victims, nodes, [fit, ndf], args=DefaultPreemptionArgs(min_candidate_nodes_percentage=100,
                                                                         min_candidate_nodes_absolute=100))
    p = _preemptor(container)
    infos = sorted(h.snapshot.node_infos, key=lambda ni: ni.name)
    got, _, _ = dp.evaluator.dry_run_preemption(pre_filtered(h, p), p, infos, [], [], 0, len(infos), StartTimes())
    assert {c.name: sorted(v.name for v in c.victims) for c in got} == want
