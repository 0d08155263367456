"""NodeResourcesFit Filter, queueing hints and args validation.

Cases ported from upstream's ``pkg/scheduler/framework/plugins/noderesources/fit_test.go``
(TestEnoughRequests, TestNotEnoughRequests, TestStorageRequests,
TestRestartableInitContainers, TestEventsToRegister, Test_isSchedulableAfterPodChange,
Test_isSchedulableAfterNodeChange) and ``pkg/scheduler/apis/config/validation/
validation_pluginargs_test.go`` (TestValidateFitArgs and the scoring strategy tables).
Every Filter case is checked in the per-node and the batch form.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.framework.errors import ProfileError
from kubesched.framework.events import ActionType, QueueingHint, Resource
from kubesched.framework.status import Code
from kubesched.plugins.noderesources.args import (
    NodeResourcesFitArgs, ResourceSpec, ScoringStrategy, UtilizationShapePoint, parse_fit_args,
)
from kubesched.plugins.noderesources.fit import Fit
from kubesched.plugins.noderesources.validation import validate_fit_args
from kubesched.testing.handle import handle_for
from kubesched.testing.harness import filter_all

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_A = "kubernetes.io/something"
K8S_B = "subdomain.kubernetes.io/something"
HUGE_A = "hugepages-2Mi"
DRA_RES = "extended.resource.dra.io/something"


def R(cpu: int = 0, mem: int = 0, eph: int = 0, **scalars: int) -> dict[str, str]:
    """A container request as upstream's ``newResourcePod`` builds it from a
    ``framework.Resource`` (cpu in millicores; scalars by keyword, '_' for '/')."""
    req = {"cpu": f"{cpu}m", "memory": str(mem), "ephemeral-storage": str(eph)}
    for k, v in scalars.items():
        req[_SCALAR_NAMES[k]] = str(v)
    return req


_SCALAR_NAMES = {"ext_a": EXT_A, "ext_b": EXT_B, "k8s_a": K8S_A, "k8s_b": K8S_B, "huge_a": HUGE_A,
                 "dra": DRA_RES}


def pod(*containers: dict[str, str], init: tuple[dict[str, str], ...] = (), name: str = "p",
        node: str = "", overhead: dict[str, str] | None = None,
        pod_level: dict[str, str] | None = None, sidecars: tuple[dict[str, str] | None, ...] = (),
        uid: str = "", nominated: str = "") -> Pod:
    """A pod with exactly these containers (none at all when none are given)."""
    spec: dict[str, Any] = {"containers": [
        {"name": f"c{i}", "image": "", "resources": {"requests": dict(c)}} for i, c in enumerate(containers)]}
    inits = [{"name": f"i{i}", "image": "", "resources": {"requests": dict(c)}} for i, c in enumerate(init)]
    inits += [{"name": f"s{i}", "image": "", "restartPolicy": "Always",
               "resources": {"requests": dict(c or {})}} for i, c in enumerate(sidecars)]
    if inits:
        spec["initContainers"] = inits
    if node:
        spec["nodeName"] = node
    if overhead:
        spec["overhead"] = dict(overhead)
    if pod_level:
        spec["resources"] = {"requests": dict(pod_level)}
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if uid:
        meta["uid"] = uid
    status = {"nominatedNodeName": nominated} if nominated else {}
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}, validate=False)


def node(name: str = "node", **alloc: Any) -> Node:
    res = {_SCALAR_NAMES.get(k, k.replace("_", "-")): str(v) for k, v in alloc.items()}
    return Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                           "status": {"capacity": res, "allocatable": res}}, validate=False)


def st_node(res: dict[str, str]) -> Node:
    """``st.MakeNode().Capacity(res)``: pods default to 32."""
    return node(**{"pods": "32", **res})


def make_resources(cpu: int, mem: int, pods: int, ext_a: int, eph: int, huge_a: int) -> dict[str, Any]:
    return {"cpu": f"{cpu}m", "memory": mem, "pods": pods, "ext_a": ext_a, "ephemeral_storage": eph,
            "huge_a": huge_a}


def run_filter(p: Pod, existing: list[dict[str, str]], alloc: dict[str, Any],
               args: NodeResourcesFitArgs | None = None) -> list[tuple[Code, tuple[str, ...]] | None]:
    """Filter ``p`` on one node holding one pod per entry of ``existing``, both forms."""
    pods = [pod(c, name=f"e{i}", node="node") for i, c in enumerate(existing)]
    h = handle_for(pods, [node(**alloc)])
    plugin = Fit(args, h)
    out = []
    for batch in (False, True):
        st = filter_all(plugin, p, h, batch=batch)["node"]
        out.append(None if st.success else (st.code, st.reasons))
    return out


U = Code.Unschedulable
UU = Code.UnschedulableAndUnresolvable


def _insuff(*names: str) -> tuple[str, ...]:
    return tuple(f"Insufficient {n}" for n in names)


# (name, pod, existing pod requests, args, expected (code, reasons) or None)
ENOUGH_REQUESTS: list[tuple[str, Pod, list[dict[str, str]], NodeResourcesFitArgs | None, Any]] = [
    ("no resources requested always fits", pod(), [R(10, 20)], None, None),
    ("too many resources fails", pod(R(1, 1)), [R(10, 20)], None, (U, _insuff("cpu", "memory"))),
    ("too many resources fails due to init container cpu", pod(R(1, 1), init=(R(3, 1),)), [R(8, 19)],
     None, (U, _insuff("cpu"))),
    ("too many resources fails due to highest init container cpu",
     pod(R(1, 1), init=(R(3, 1), R(2, 1))), [R(8, 19)], None, (U, _insuff("cpu"))),
    ("too many resources fails due to init container memory", pod(R(1, 1), init=(R(1, 3),)),
     [R(9, 19)], None, (U, _insuff("memory"))),
    ("too many resources fails due to highest init container memory",
     pod(R(1, 1), init=(R(1, 3), R(1, 2))), [R(9, 19)], None, (U, _insuff("memory"))),
    ("init container fits because it's the max, not sum, of containers and init containers",
     pod(R(1, 1), init=(R(1, 1),)), [R(9, 19)], None, None),
    ("multiple init containers fit because it's the max, not sum, of containers and init containers",
     pod(R(1, 1), init=(R(1, 1), R(1, 1))), [R(9, 19)], None, None),
    ("both resources fit", pod(R(1, 1)), [R(5, 5)], None, None),
    ("one resource memory fits", pod(R(2, 1)), [R(9, 5)], None, (U, _insuff("cpu"))),
    ("one resource cpu fits", pod(R(1, 2)), [R(5, 19)], None, (U, _insuff("memory"))),
    ("equal edge case", pod(R(5, 1)), [R(5, 19)], None, None),
    ("equal edge case for init container", pod(R(4, 1), init=(R(5, 1),)), [R(5, 19)], None, None),
    ("extended resource fits", pod(R(ext_a=1)), [R()], None, None),
    ("extended resource fits for init container", pod(R(), init=(R(ext_a=1),)), [R()], None, None),
    ("extended resource capacity enforced", pod(R(1, 1, ext_a=10)), [R(0, 0, ext_a=0)], None,
     (UU, _insuff(EXT_A))),
    ("extended resource capacity enforced for init container", pod(R(), init=(R(1, 1, ext_a=10),)),
     [R(0, 0, ext_a=0)], None, (UU, _insuff(EXT_A))),
    ("extended resource allocatable enforced", pod(R(1, 1, ext_a=1)), [R(0, 0, ext_a=5)], None,
     (U, _insuff(EXT_A))),
    ("extended resource allocatable enforced for init container", pod(R(), init=(R(1, 1, ext_a=1),)),
     [R(0, 0, ext_a=5)], None, (U, _insuff(EXT_A))),
    ("extended resource allocatable enforced for multiple containers",
     pod(R(1, 1, ext_a=3), R(1, 1, ext_a=3)), [R(0, 0, ext_a=2)], None, (UU, _insuff(EXT_A))),
    ("extended resource allocatable admits multiple init containers",
     pod(R(), init=(R(1, 1, ext_a=3), R(1, 1, ext_a=3))), [R(0, 0, ext_a=2)], None, None),
    ("extended resource allocatable enforced for multiple init containers",
     pod(R(), init=(R(1, 1, ext_a=6), R(1, 1, ext_a=3))), [R(0, 0, ext_a=2)], None, (UU, _insuff(EXT_A))),
    ("extended resource allocatable enforced for unknown resource", pod(R(1, 1, ext_b=1)), [R()], None,
     (UU, _insuff(EXT_B))),
    ("extended resource allocatable enforced for unknown resource for init container",
     pod(R(), init=(R(1, 1, ext_b=1),)), [R()], None, (UU, _insuff(EXT_B))),
    ("kubernetes.io resource capacity enforced", pod(R(1, 1, k8s_a=10)), [R()], None,
     (UU, _insuff(K8S_A))),
    ("kubernetes.io resource capacity enforced for init container", pod(R(), init=(R(1, 1, k8s_b=10),)),
     [R()], None, (UU, _insuff(K8S_B))),
    ("hugepages resource capacity enforced", pod(R(1, 1, huge_a=10)), [R(0, 0, huge_a=0)], None,
     (UU, _insuff(HUGE_A))),
    ("hugepages resource capacity enforced for init container", pod(R(), init=(R(1, 1, huge_a=10),)),
     [R(0, 0, huge_a=0)], None, (UU, _insuff(HUGE_A))),
    ("hugepages resource allocatable enforced for multiple containers",
     pod(R(1, 1, huge_a=3), R(1, 1, huge_a=3)), [R(0, 0, huge_a=2)], None, (UU, _insuff(HUGE_A))),
    ("skip checking ignored extended resource", pod(R(1, 1, ext_b=1)), [R()],
     NodeResourcesFitArgs(ignored_resources=(EXT_B,)), None),
    ("resources + pod overhead fits", pod(R(1, 1), overhead={"cpu": "3m", "memory": "13"}), [R(5, 5)],
     None, None),
    ("requests + overhead does not fit for memory", pod(R(1, 1), overhead={"cpu": "1m", "memory": "15"}),
     [R(5, 5)], None, (U, _insuff("memory"))),
    ("skip checking ignored extended resource via resource groups", pod(R(1, 1, ext_b=1, k8s_a=1)), [R()],
     NodeResourcesFitArgs(ignored_resource_groups=("example.com",)), (UU, _insuff(K8S_A))),
    ("skip checking extended resource request with quantity zero via resource groups",
     pod(R(1, 1, ext_a=0)), [R(0, 0, ext_a=6)], None, None),
    ("skip checking resource request with quantity zero", pod(R(ext_a=1)), [R(20, 30, ext_a=1)], None, None),
    ("both pod-level and container-level resources fit",
     pod(R(1, 1), pod_level={"cpu": "1m", "memory": "2"}), [R(5, 5)], None, None),
    ("pod-level cpu resource not fit", pod(R(1, 1), pod_level={"cpu": "7m", "memory": "2"}), [R(5, 5)],
     None, (U, _insuff("cpu"))),
    ("pod-level memory resource not fit", pod(R(1, 1), pod_level={"cpu": "3m", "memory": "2"}),
     [R(5, 19)], None, (U, _insuff("memory"))),
    ("pod-level hugepages resource fit", pod(pod_level={"cpu": "3m", "memory": "2", HUGE_A: "5"}), [],
     None, None),
    ("both pod-level and container-level hugepages resource fit",
     pod(R(1, 1, huge_a=3), pod_level={"cpu": "3m", "memory": "2", HUGE_A: "5"}), [], None, None),
    ("pod-level hugepages resource not fit", pod(pod_level={"cpu": "3m", "memory": "2", HUGE_A: "10"}), [],
     None, (UU, _insuff(HUGE_A))),
    ("one pod-level cpu resource fits and all init and non-init containers resources fit",
     pod(R(1, 1), init=(R(1, 1),), pod_level={"cpu": "3m", "memory": "2"}), [R(5, 19)], None,
     (U, _insuff("memory"))),
    ("extended resource backed by DRA not enabled", pod(R(1, 1, dra=1)), [R()], None, (UU, _insuff(DRA_RES))),
]


@pytest.mark.parametrize("p,existing,args,want", [c[1:] for c in ENOUGH_REQUESTS],
                         ids=[c[0] for c in ENOUGH_REQUESTS])
def test_enough_requests(p: Pod, existing: list[dict[str, str]], args: NodeResourcesFitArgs | None,
                         want: Any) -> None:
    got = run_filter(p, existing, make_resources(10, 20, 32, 5, 20, 5), args)
    assert got == [want, want]


NOT_ENOUGH = [
    ("even without specified resources, predicate fails when there's no space for additional pod",
     pod(), [R(10, 20)]),
    ("even if both resources fit, predicate fails when there's no space for additional pod",
     pod(R(1, 1)), [R(5, 5)]),
    ("even for equal edge case, predicate fails when there's no space for additional pod",
     pod(R(5, 1)), [R(5, 19)]),
    ("even for equal edge case, predicate fails when there's no space for additional pod due to init "
     "container", pod(R(5, 1), init=(R(5, 1),)), [R(5, 19)]),
]


@pytest.mark.parametrize("p,existing", [c[1:] for c in NOT_ENOUGH], ids=[c[0] for c in NOT_ENOUGH])
def test_not_enough_requests(p: Pod, existing: list[dict[str, str]]) -> None:
    got = run_filter(p, existing, make_resources(10, 20, 1, 0, 0, 0))
    assert got == [(U, ("Too many pods",))] * 2


STORAGE = [
    ("empty storage requested, and pod fits", pod(R(1, 1)), [R(2, 10)], None),
    ("storage ephemeral local storage request exceeds allocatable", pod(R(eph=25)), [R(2, 2)],
     (UU, _insuff("ephemeral-storage"))),
    ("ephemeral local storage is sufficient", pod(R(eph=5)), [R(2, 2, 10)], None),
    ("pod fits", pod(R(eph=10)), [R(2, 2)], None),
]


@pytest.mark.parametrize("p,existing,want", [c[1:] for c in STORAGE], ids=[c[0] for c in STORAGE])
def test_storage_requests(p: Pod, existing: list[dict[str, str]], want: Any) -> None:
    assert run_filter(p, existing, make_resources(10, 20, 32, 5, 20, 5)) == [want, want]


RESTARTABLE = [  # SidecarContainers is GA (always on) in v1.34
    ("allow pod without restartable init containers if sidecar containers is enabled", pod({}), None),
    ("allow pod with restartable init containers if sidecar containers is enabled",
     pod({}, sidecars=(None,)), None),
    ("allow pod if the total requested resources do not exceed the node's allocatable resources",
     pod({"cpu": "1m"}, sidecars=({"cpu": "1m"},)), None),
    ("not allow pod if the total requested resources do exceed the node's allocatable resources",
     pod({"cpu": "1m"}, sidecars=({"cpu": "2m"},)), (UU, _insuff("cpu"))),
]


@pytest.mark.parametrize("p,want", [c[1:] for c in RESTARTABLE], ids=[c[0] for c in RESTARTABLE])
def test_restartable_init_containers(p: Pod, want: Any) -> None:
    assert run_filter(p, [], make_resources(2, 0, 1, 0, 0, 0)) == [want, want]


def test_events_to_register() -> None:
    """v1.34 defaults: InPlacePodVerticalScaling and SchedulerQueueingHints on, DRA extended off."""
    events = [e.event for e in Fit(None, None).events_to_register()]
    assert [(e.resource, e.action) for e in events] == [
        (Resource.Pod, ActionType.UpdatePodScaleDown | ActionType.Delete),
        (Resource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable),
    ]


Q, SKIP = QueueingHint.Queue, QueueingHint.QueueSkip
POD_CHANGE = [
    ("queue-on-other-pod-deleted", pod({"cpu": "1"}, name="pod1"),
     pod({"cpu": "1"}, name="pod2", node="fake"), None, Q),
    ("skip-queue-on-unscheduled-pod-deleted", pod(), pod(name="other"), None, SKIP),
    ("skip-queue-on-other-unscheduled-pod", pod({"cpu": "1"}, name="pod1", uid="uid0"),
     pod({"cpu": "2"}, name="pod2", uid="uid1"), pod({"cpu": "1"}, name="pod2", uid="uid1"), SKIP),
    ("skip-queue-on-other-pod-unrelated-resource-scaled-down", pod({"cpu": "1"}, name="pod1", uid="pod1"),
     pod({"memory": "2"}, name="pod2", uid="pod2", node="fake"),
     pod({"memory": "1"}, name="pod2", uid="pod2", node="fake"), SKIP),
    ("skip-queue-on-other-pod-unrelated-pod-level-resource-scaled-down",
     pod(name="pod1", uid="pod1", pod_level={"cpu": "1"}),
     pod(name="pod2", uid="pod2", node="fake", pod_level={"memory": "2"}),
     pod(name="pod2", uid="pod2", node="fake", pod_level={"memory": "1"}), SKIP),
    ("queue-on-other-pod-some-resource-scale-down", pod({"cpu": "1"}, name="pod1", uid="pod1"),
     pod({"cpu": "2"}, name="pod2", uid="pod2", node="fake"),
     pod({"cpu": "1"}, name="pod2", uid="pod2", node="fake"), Q),
    ("queue-on-other-pod-some-pod-level-resource-scale-down",
     pod(name="pod1", uid="pod1", pod_level={"cpu": "1"}),
     pod(name="pod2", uid="pod2", node="fake", pod_level={"cpu": "2"}),
     pod(name="pod2", uid="pod2", node="fake", pod_level={"cpu": "1"}), Q),
    ("queue-on-target-pod-some-resource-scale-down", pod({"cpu": "1"}, name="pod1", uid="pod1"),
     pod({"cpu": "2"}, name="pod1", uid="pod1"), pod({"cpu": "1"}, name="pod1", uid="pod1"), Q),
    ("queue-on-target-pod-some-pod-level-resource-scale-down",
     pod(name="pod1", uid="pod1", pod_level={"cpu": "1"}), pod(name="pod1", uid="pod1", pod_level={"cpu": "2"}),
     pod(name="pod1", uid="pod1", pod_level={"cpu": "1"}), Q),
]


@pytest.mark.parametrize("p,old,new,want", [c[1:] for c in POD_CHANGE], ids=[c[0] for c in POD_CHANGE])
def test_is_schedulable_after_pod_change(p: Pod, old: Pod | None, new: Pod | None, want: QueueingHint) -> None:
    assert Fit(None, None).hint_after_pod_event(p, old, new) == want


def _cap(**res: str) -> Node:
    return st_node({_SCALAR_NAMES.get(k, k): v for k, v in res.items()})


NODE_CHANGE = [
    ("skip-queue-on-node-add-without-sufficient-resources", pod(R(mem=2)), None, _cap(memory="1"), SKIP),
    ("skip-queue-on-node-add-without-required-resource-type", pod(R(ext_a=1)), None, _cap(ext_b="1"), SKIP),
    ("queue-on-node-add-with-sufficient-resources", pod(R(mem=2, ext_a=1)), None,
     _cap(memory="4", ext_a="2"), Q),
    ("skip-queue-on-node-unrelated-changes", pod(R(mem=2, ext_a=1)), _cap(memory="2", ext_a="2"),
     _cap(memory="2", ext_a="1", ext_b="2"), SKIP),
    ("queue-on-pod-requested-resources-increase", pod(R(mem=2, ext_a=1)), _cap(memory="2", ext_a="1"),
     _cap(memory="2", ext_a="2"), Q),
    ("skip-queue-on-node-changes-from-suitable-to-unsuitable", pod(R(mem=2, ext_a=1)),
     _cap(memory="4", ext_a="2"), _cap(memory="1", ext_a="2"), SKIP),
    ("queue-on-node-changes-from-unsuitable-to-suitable", pod(R(mem=2, ext_a=1)),
     _cap(memory="1", ext_a="2"), _cap(memory="4", ext_a="2"), Q),
]


@pytest.mark.parametrize("p,old,new,want", [c[1:] for c in NODE_CHANGE], ids=[c[0] for c in NODE_CHANGE])
def test_is_schedulable_after_node_change(p: Pod, old: Node | None, new: Node, want: QueueingHint) -> None:
    assert Fit(None, None).hint_after_node_change(p, old, new) == want


# -- args (validation_pluginargs_test.go) ---------------------------------------------------
DEFAULT_STRATEGY = ScoringStrategy("LeastAllocated", (ResourceSpec("cpu", 1), ResourceSpec("memory", 1)))

VALIDATE_FIT_ARGS = [
    ("IgnoredResources: too long value", NodeResourcesFitArgs(ignored_resources=("longvalue" + "a" * 64,)),
     "name part must be no more than 63 characters"),
    ("IgnoredResources: name is empty", NodeResourcesFitArgs(ignored_resources=("example.com/",)),
     "name part must be non-empty"),
    ("IgnoredResources: name has too many slash", NodeResourcesFitArgs(ignored_resources=("example.com/aaa/bbb",)),
     "a qualified name must consist of alphanumeric characters"),
    ("IgnoredResources: valid args", NodeResourcesFitArgs(ignored_resources=("example.com",)), None),
    ("IgnoredResourceGroups: valid args", NodeResourcesFitArgs(ignored_resource_groups=("example.com",)), None),
    ("IgnoredResourceGroups: illegal args", NodeResourcesFitArgs(ignored_resource_groups=("example.com/",)),
     "name part must be non-empty"),
    ("IgnoredResourceGroups: name is too long", NodeResourcesFitArgs(ignored_resource_groups=("a" * 64,)),
     "name part must be no more than 63 characters"),
    ("IgnoredResourceGroups: name cannot be contain slash",
     NodeResourcesFitArgs(ignored_resource_groups=("example.com/aa",)), "resource group name can't contain '/'"),
]


@pytest.mark.parametrize("args,expect", [c[1:] for c in VALIDATE_FIT_ARGS], ids=[c[0] for c in VALIDATE_FIT_ARGS])
def test_validate_fit_args(args: NodeResourcesFitArgs, expect: str | None) -> None:
    errs = validate_fit_args(args)
    if expect is None:
        assert errs == []
    else:
        assert any(expect in body for _, body in errs), errs
        with pytest.raises(ProfileError, match="."):
            parse_fit_args(args)


def _res(*specs: tuple[str, int]) -> tuple[ResourceSpec, ...]:
    return tuple(ResourceSpec(n, w) for n, w in specs)


STRATEGY_RESOURCES = [
    ("default config", (), []),
    ("multi valid resources", _res(("cpu", 1), ("memory", 10)), []),
    ("weight less than min", _res(("cpu", 0)), ["resources[0].weight"]),
    ("weight greater than max", _res(("cpu", 101)), ["resources[0].weight"]),
    ("multi invalid resources", _res(("cpu", 0), ("memory", 101)), ["resources[0].weight", "resources[1].weight"]),
]


@pytest.mark.parametrize("strategy", ["LeastAllocated", "MostAllocated"])
@pytest.mark.parametrize("resources,want", [c[1:] for c in STRATEGY_RESOURCES],
                         ids=[c[0] for c in STRATEGY_RESOURCES])
def test_validate_allocated_scoring_strategy(strategy: str, resources: tuple[ResourceSpec, ...],
                                             want: list[str]) -> None:
    errs = validate_fit_args(NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(strategy, resources)))
    assert [f for f, _ in errs] == [f"scoringStrategy.{w}" for w in want]
    assert all(body.startswith("Invalid value: ") for _, body in errs)


def _shape(*pts: tuple[int, int]) -> tuple[UtilizationShapePoint, ...]:
    return tuple(UtilizationShapePoint(u, s) for u, s in pts)


RTCR_VALIDATION = [
    ("no shapes", (), (), [("shape", "Required value")]),
    ("weight greater than max", _res(("cpu", 101)), _shape((30, 3)), [("resources[0].weight", "Invalid value")]),
    ("weight less than min", _res(("cpu", 0)), _shape((30, 3)), [("resources[0].weight", "Invalid value")]),
    ("valid shapes", (), _shape((30, 3)), []),
    ("utilization less than min", (), _shape((-1, 3)), [("shape[0].utilization", "Invalid value")]),
    ("utilization greater than max", (), _shape((101, 3)), [("shape[0].utilization", "Invalid value")]),
    ("duplicated utilization values", (), _shape((10, 3), (10, 3)), [("shape[1].utilization", "Invalid value")]),
    ("increasing utilization values", (), _shape((10, 3), (20, 3), (30, 3)), []),
    ("non-increasing utilization values", (), _shape((10, 3), (20, 3), (15, 3)),
     [("shape[2].utilization", "Invalid value")]),
    ("score less than min", (), _shape((10, -1)), [("shape[0].score", "Invalid value")]),
    ("score greater than max", (), _shape((10, 11)), [("shape[0].score", "Invalid value")]),
]


@pytest.mark.parametrize("resources,shape,want", [c[1:] for c in RTCR_VALIDATION], ids=[c[0] for c in RTCR_VALIDATION])
def test_validate_requested_to_capacity_ratio_scoring_strategy(
        resources: tuple[ResourceSpec, ...], shape: tuple[UtilizationShapePoint, ...],
        want: list[tuple[str, str]]) -> None:
    args = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy("RequestedToCapacityRatio", resources, shape))
    errs = validate_fit_args(args)
    assert [(f, b.split(":")[0]) for f, b in errs] == [(f"scoringStrategy.{f}", t) for f, t in want]


def test_validate_unsupported_strategy_message() -> None:
    with pytest.raises(ProfileError) as e:
        parse_fit_args({"scoringStrategy": {"type": "Foo"}}, "profiles[0].pluginConfig[0].args")
    assert str(e.value) == ('profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "Foo": '
                            'supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"')


def test_parse_fit_args_defaults() -> None:
    """v1 SetDefaults_NodeResourcesFitArgs: LeastAllocated cpu/memory weight 1; weight 0 -> 1."""
    assert parse_fit_args(None, "") == NodeResourcesFitArgs(scoring_strategy=DEFAULT_STRATEGY)
    got = parse_fit_args({"scoringStrategy": {"type": "MostAllocated",
                                              "resources": [{"name": "cpu"}, {"name": "x.com/y", "weight": 3}]}}, "")
    assert got.scoring_strategy == ScoringStrategy("MostAllocated", _res(("cpu", 1), ("x.com/y", 3)))
    got = parse_fit_args({"scoringStrategy": {"type": "RequestedToCapacityRatio",
                                              "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 10},
                                                                                     {"utilization": 100}]}}}, "")
    assert got.scoring_strategy == ScoringStrategy("RequestedToCapacityRatio", DEFAULT_STRATEGY.resources,
                                                   _shape((0, 10), (100, 0)))
    with pytest.raises(ProfileError) as e:
        parse_fit_args({"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 101}]},
                        "ignoredResourceGroups": ["a/b"]}, "args")
    assert str(e.value).startswith("[args.ignoredResourceGroups[0]: Invalid value: \"a/b\": resource group name "
                                   "can't contain '/', ")
    assert "args.scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid " \
           "range (0, 100]]" in str(e.value)
