"""API-server defaulting and admission applied to raw objects.

Expected values are upstream facts, ported from:
- pkg/apis/core/v1/defaults_test.go (TestSetDefaultRequestsPod, TestSetMinimumScalePod,
  TestSetDefaultNodeStatusAllocatable, TestSetDefaultPodSpecHostNetwork,
  TestSetDefaultSchedulerName, TestDefaultRequestIsNotSetForReplicationController, the
  ``Ports[0].Protocol: "TCP"`` entry of TestPodDefaults) and the rules of
  pkg/apis/core/v1/defaults.go (defaultPodRequests / defaultHugePagePodLimits, KEP-2837:
  https://github.com/kubernetes/enhancements/tree/master/keps/sig-node/2837-pod-level-resource-spec);
- plugin/pkg/admission/priority/admission_test.go (TestPodAdmission, TestDefaultPriority,
  TestPriorityClassAdmission) and https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/
  ("If there is no PriorityClass with globalDefault set, the priority of Pods with no
  priorityClassName is zero"; "Pods with priorityClassName set to a class that does not exist
  are rejected");
- pkg/apis/scheduling/validation/validation_test.go (TestValidatePriorityClass);
- plugin/pkg/admission/defaulttolerationseconds/admission_test.go (TestForgivenessAdmission).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.api.defaults import (
    SYSTEM_PRIORITY_CLASSES, apply_metadata_defaults, apply_node_defaults, apply_pod_defaults,
    default_manifest, default_object, default_priority_class, validate_priority_class,
)
from kubesched.api.errors import DecodeError
from kubesched.api.objects import Pod
from kubesched.api.policy import PriorityClass

NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"


def pod(spec: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", **meta},
            "spec": {"containers": [{"name": "c"}]} if spec is None else spec}


def container(requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None,
              **extra: Any) -> dict[str, Any]:
    res: dict[str, Any] = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    return {"name": "c", "resources": res, **extra}


def pc(name: str, value: int, default: bool = False, policy: str = "PreemptLowerPriority") -> PriorityClass:
    return PriorityClass(name, value, default, policy)


DEFAULT1 = pc("default1", 1000, True)
DEFAULT2 = pc("default2", 2000, True)
NONDEFAULT1 = pc("nondefault1", 2000)
SYSTEM_CC = pc("system-cluster-critical", 2_000_000_000, True)  # upstream test fixture (globalDefault)
NEVER_CLASS = pc("nopreemptionpolicy", 2000, True, "Never")
LOWER_CLASS = pc("nopreemptionpolicy", 2000, True, "PreemptLowerPriority")


def classes(*pcs: PriorityClass) -> dict[str, PriorityClass]:
    return {p.name: p for p in pcs}


# -- container requests from limits (SetDefaults_Pod) and rounding (SetDefaults_ResourceList)
def test_requests_default_to_limits_and_zero_request_is_kept() -> None:
    """TestSetDefaultRequestsPod: cpu request "100m" from the limit, memory request "0" kept."""
    c = container(requests={"memory": "0"}, limits={"cpu": "100m", "memory": "1Gi"})
    out = apply_pod_defaults(pod({"containers": [c], "initContainers": [copy.deepcopy(c)]}))
    for key in ("containers", "initContainers"):
        assert out["spec"][key][0]["resources"]["requests"] == {"memory": "0", "cpu": "100m"}
        assert out["spec"][key][0]["resources"]["limits"] == {"cpu": "100m", "memory": "1Gi"}


def test_no_limits_no_requests() -> None:
    """TestSetDefaultRequestsPod, second half: nothing is defaulted without limits."""
    out = apply_pod_defaults(pod({"containers": [{"name": "c"}], "initContainers": [{"name": "i"}]}))
    assert "resources" not in out["spec"]["containers"][0]
    assert "resources" not in out["spec"]["initContainers"][0]
    assert Pod.from_dict(out).requests.get("cpu", 0) == 0


def test_minimum_scale_rounds_up_to_milli() -> None:
    """TestSetMinimumScalePod: "1n" memory request and "2n" cpu limit (hence request) become 1m."""
    c = container(requests={"memory": "1n"}, limits={"cpu": "2n"})
    out = apply_pod_defaults(pod({"containers": [c], "initContainers": [copy.deepcopy(c)]}))
    for key in ("containers", "initContainers"):
        res = out["spec"][key][0]["resources"]
        assert res["requests"] == {"memory": "1m", "cpu": "1m"}
        assert res["limits"] == {"cpu": "1m"}


@pytest.mark.parametrize("value, want", [
    pytest.param("1000m", "1", id="canonical"), pytest.param(2, "2", id="yaml-int"),
    pytest.param(0.5, "500m", id="yaml-float"), pytest.param("1500u", "2m", id="round-up"),
    pytest.param("1Gi", "1Gi", id="binary-kept"), pytest.param("100m", "100m", id="kept"),
])
def test_quantities_written_as_the_server_returns_them(value: Any, want: str) -> None:
    out = apply_pod_defaults(pod({"containers": [container(requests={"cpu": value})]}))
    assert out["spec"]["containers"][0]["resources"]["requests"]["cpu"] == want


def test_ephemeral_containers_do_not_get_requests_from_limits() -> None:
    """SetDefaults_Pod copies limits only for containers and initContainers."""
    spec = {"containers": [{"name": "c"}], "ephemeralContainers": [container(limits={"cpu": "1"})]}
    out = apply_pod_defaults(pod(spec))
    assert out["spec"]["ephemeralContainers"][0]["resources"] == {"limits": {"cpu": "1"}}


def test_replication_controller_template_is_not_defaulted() -> None:
    """TestDefaultRequestIsNotSetForReplicationController: only Pods get requests from limits."""
    rc = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc"},
          "spec": {"template": {"spec": {"containers": [container(limits={"cpu": "100m"})]}}}}
    out = default_object(rc, {})
    assert out["spec"]["template"]["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "100m"}}


# -- pod-level resources (PodLevelResources, beta and on in v1.34) --------------------------
@pytest.mark.parametrize("spec, want_limits, want_requests", [
    pytest.param({"resources": {"limits": {"cpu": "2", "memory": "1Gi"}},
                  "containers": [container(requests={"cpu": "500m", "memory": "128Mi"}),
                                 container(requests={"cpu": "250m"})]},
                 {"cpu": "2", "memory": "1Gi"}, {"cpu": "750m", "memory": "128Mi"},
                 id="requests-from-container-requests"),
    pytest.param({"resources": {"limits": {"cpu": "1", "memory": "100Mi"}}, "containers": [{"name": "c"}]},
                 {"cpu": "1", "memory": "100Mi"}, {"cpu": "1", "memory": "100Mi"},
                 id="requests-from-pod-limits"),
    pytest.param({"resources": {"limits": {"cpu": "1"}},
                  "containers": [container(limits={"hugepages-2Mi": "2Mi"}),
                                 container(limits={"hugepages-2Mi": "2Mi"})]},
                 {"cpu": "1", "hugepages-2Mi": "4Mi"}, {"cpu": "1", "hugepages-2Mi": "4Mi"},
                 id="hugepage-limits-from-containers"),
    pytest.param({"resources": {"limits": {"cpu": "2"}},
                  "containers": [container(requests={"cpu": "100m"})],
                  "initContainers": [container(requests={"cpu": "200m"}, restartPolicy="Always"),
                                     container(requests={"cpu": "1"})]},
                 {"cpu": "2"}, {"cpu": "1200m"}, id="sidecar-aware-aggregate"),
    pytest.param({"resources": {"requests": {"cpu": "1"}}, "containers": [{"name": "c"}]},
                 None, {"cpu": "1"}, id="requests-only-unchanged"),
])
def test_pod_level_resources(spec: dict[str, Any], want_limits: Any, want_requests: Any) -> None:
    res = apply_pod_defaults(pod(spec))["spec"]["resources"]
    assert res.get("limits") == want_limits
    assert res.get("requests") == want_requests


def test_no_pod_level_resources_no_defaults() -> None:
    out = apply_pod_defaults(pod({"containers": [container(limits={"cpu": "1"})]}))
    assert "resources" not in out["spec"]


# -- host ports, protocol, scheduler name, metadata, phase ----------------------------------
def test_host_network_ports() -> None:
    """TestSetDefaultPodSpecHostNetwork: hostPort defaults to containerPort (8080)."""
    spec = {"hostNetwork": True, "containers": [{"name": "c", "ports": [{"containerPort": 8080}]}],
            "initContainers": [{"name": "i", "ports": [{"containerPort": 8080}]}]}
    out = apply_pod_defaults(pod(spec))
    for key in ("containers", "initContainers"):
        assert out["spec"][key][0]["ports"] == [{"containerPort": 8080, "protocol": "TCP", "hostPort": 8080}]
    assert [p.host_port for p in Pod.from_dict(out).host_ports] == [8080]


def test_ports_without_host_network() -> None:
    out = apply_pod_defaults(pod({"containers": [{"name": "c", "ports": [{"containerPort": 80}]}]}))
    assert out["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]


def test_scheduler_name_namespace_uid() -> None:
    """TestSetDefaultSchedulerName; namespace "default"; a deterministic uid."""
    out = apply_pod_defaults(pod())
    assert out["spec"]["schedulerName"] == "default-scheduler"
    assert out["metadata"]["namespace"] == "default"
    assert out["metadata"]["uid"] == apply_pod_defaults(pod())["metadata"]["uid"]
    assert out["metadata"]["uid"] != apply_pod_defaults(pod(namespace="other"))["metadata"]["uid"]
    kept = apply_pod_defaults(pod(uid="u-1", namespace="ns"))
    assert kept["metadata"]["uid"] == "u-1" and kept["metadata"]["namespace"] == "ns"
    custom = apply_pod_defaults(pod({"schedulerName": "mine", "containers": []}))
    assert custom["spec"]["schedulerName"] == "mine"


@pytest.mark.parametrize("spec, status, want", [
    pytest.param({"containers": []}, None, {"phase": "Pending"}, id="unbound"),
    pytest.param({"containers": [], "nodeName": "n1"}, None, {"phase": "Running"}, id="bound"),
    pytest.param({"containers": [], "nodeName": "n1"}, {"phase": "Succeeded"}, {"phase": "Succeeded"}, id="kept"),
    pytest.param({"containers": [], "nodeName": "n1"}, {"startTime": "2024-01-01T00:00:00Z"},
                 {"startTime": "2024-01-01T00:00:00Z", "phase": "Running"}, id="start-time-kept"),
])
def test_phase(spec: dict[str, Any], status: Any, want: dict[str, Any]) -> None:
    raw = pod(spec)
    if status is not None:
        raw["status"] = status
    assert apply_pod_defaults(raw)["status"] == want


def test_input_is_not_mutated() -> None:
    raw = pod({"hostNetwork": True, "resources": {"limits": {"cpu": "1"}},
               "containers": [container(limits={"cpu": "1"}, ports=[{"containerPort": 1}])],
               "tolerations": [{"key": "a", "operator": "Exists"}]})
    before = copy.deepcopy(raw)
    apply_pod_defaults(raw, classes(DEFAULT1))
    assert raw == before
    node = {"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "1"}}}
    before = copy.deepcopy(node)
    apply_node_defaults(node)
    assert node == before


# -- nodes --------------------------------------------------------------------------------
CAPACITY = {"cpu": "1000m", "memory": "10G"}
ALLOCATABLE = {"cpu": "500m", "memory": "5G"}


@pytest.mark.parametrize("capacity, allocatable, want", [
    pytest.param(CAPACITY, ALLOCATABLE, {"cpu": "500m", "memory": "5G"}, id="everything-set"),
    pytest.param(None, ALLOCATABLE, {"cpu": "500m", "memory": "5G"}, id="allocatable-set"),
    pytest.param(CAPACITY, None, {"cpu": "1", "memory": "10G"}, id="allocatable-from-capacity"),
    pytest.param(None, None, None, id="nothing-set"),
])
def test_node_allocatable(capacity: Any, allocatable: Any, want: Any) -> None:
    """TestSetDefaultNodeStatusAllocatable (quantities written canonically: 1000m is "1")."""
    status = {k: v for k, v in (("capacity", capacity), ("allocatable", allocatable)) if v is not None}
    out = apply_node_defaults({"kind": "Node", "metadata": {"name": "n"}, "status": status})
    assert out["status"].get("allocatable") == want
    assert "namespace" not in out["metadata"] and out["metadata"]["uid"]


# -- Priority admission ---------------------------------------------------------------------
@pytest.mark.parametrize("existing, spec, ns, want_priority, want_error", [
    pytest.param([DEFAULT1, NONDEFAULT1], {"priorityClassName": "default1"}, "namespace", 1000, None,
                 id="pod-with-priority-class"),
    pytest.param([DEFAULT1], {}, "namespace", 1000, None, id="pod-without-priority-class"),
    pytest.param([], {}, "namespace", 0, None, id="no-class-no-existing-class"),
    pytest.param([NONDEFAULT1], {}, "namespace", 0, None, id="no-class-no-default-class"),
    pytest.param([SYSTEM_CC], {"priorityClassName": "system-cluster-critical"}, "kube-system",
                 2_000_000_000, None, id="system-priority-class"),
    pytest.param([DEFAULT1, NONDEFAULT1], {"priorityClassName": "non-existing"}, "namespace", None,
                 ("spec.priorityClassName", "no PriorityClass with name non-existing was found"),
                 id="non-existing-priority-class"),
    pytest.param([], {"priorityClassName": "default1", "priority": 1000}, "namespace", None,
                 ("spec.priorityClassName", "no PriorityClass with name default1 was found"),
                 id="integer-priority"),
    pytest.param([SYSTEM_CC], {"priorityClassName": "system-cluster-critical"}, "non-system-namespace",
                 2_000_000_000, None, id="system-class-in-non-system-namespace"),
    pytest.param([NONDEFAULT1], {"priority": 0}, "non-system-namespace", 0, None,
                 id="priority-matches-computed"),
    pytest.param([DEFAULT2], {"priority": 2000}, "non-system-namespace", 2000, None,
                 id="priority-matches-default"),
    pytest.param([SYSTEM_CC], {"priorityClassName": "system-cluster-critical", "priority": 2_000_000_000},
                 "kube-system", 2_000_000_000, None, id="priority-matches-resolved"),
    pytest.param([LOWER_CLASS], {"priorityClassName": "nopreemptionpolicy", "priority": 2000}, "kube-system",
                 2000, None, id="nil-preemption-policy"),
    pytest.param([LOWER_CLASS], {"priorityClassName": "nopreemptionpolicy", "priority": 2000,
                                 "preemptionPolicy": "PreemptLowerPriority"}, "kube-system", 2000, None,
                 id="preemption-policy-matches"),
    pytest.param([LOWER_CLASS], {"priorityClassName": "nopreemptionpolicy", "priority": 2000,
                                 "preemptionPolicy": "Never"}, "kube-system", None,
                 ("spec.preemptionPolicy", "the string value of PreemptionPolicy (Never) must not be provided in "
                  "pod spec; priority admission controller computed PreemptLowerPriority from the given "
                  "PriorityClass name"), id="preemption-policy-mismatch"),
    pytest.param([], {"priority": 7}, "namespace", None,
                 ("spec.priority", "the integer value of priority (7) must not be provided in pod spec; priority "
                  "admission controller computed 0 from the given PriorityClass name"), id="priority-mismatch"),
])
def test_pod_admission(existing: list[PriorityClass], spec: dict[str, Any], ns: str,
                       want_priority: int | None, want_error: tuple[str, str] | None) -> None:
    """TestPodAdmission."""
    raw = pod({"containers": [{"name": "c"}], **spec}, namespace=ns)
    if want_error:
        with pytest.raises(DecodeError) as exc:
            apply_pod_defaults(raw, classes(*existing))
        assert (exc.value.field, exc.value.message) == want_error
        return
    out = apply_pod_defaults(raw, classes(*existing))
    assert out["spec"]["priority"] == want_priority
    assert Pod.from_dict(out).priority == want_priority


@pytest.mark.parametrize("existing, want_name, want_value", [
    pytest.param([DEFAULT1], "default1", 1000, id="simple-resolution"),
    pytest.param([NONDEFAULT1], "", 0, id="no-default-class"),
    pytest.param([NONDEFAULT1, DEFAULT1], "default1", 1000, id="add-a-default-class"),
    pytest.param([DEFAULT1, DEFAULT2], "default1", 1000, id="multiple-defaults-lowest-value"),
    pytest.param([DEFAULT2, DEFAULT1], "default1", 1000, id="multiple-defaults-any-order"),
    pytest.param([], "", 0, id="no-classes"),
    pytest.param([pc("default1", 1000, False)], "", 0, id="global-default-removed"),
])
def test_default_priority(existing: list[PriorityClass], want_name: str, want_value: int) -> None:
    """TestDefaultPriority: the class name is written to the pod, the value to spec.priority."""
    dpc = default_priority_class(classes(*existing))
    assert (dpc.name if dpc else "", dpc.value if dpc else 0) == (want_name, want_value)
    spec = apply_pod_defaults(pod(), classes(*existing))["spec"]
    assert spec.get("priorityClassName", "") == want_name
    assert spec["priority"] == want_value
    assert spec["preemptionPolicy"] == "PreemptLowerPriority"


def test_preemption_policy_from_class() -> None:
    """The pod gets the class's preemptionPolicy (Never here) when it sets none."""
    spec = apply_pod_defaults(pod(), classes(NEVER_CLASS))["spec"]
    assert (spec["priorityClassName"], spec["priority"], spec["preemptionPolicy"]) == \
        ("nopreemptionpolicy", 2000, "Never")
    assert Pod.from_dict(apply_pod_defaults(pod(), classes(NEVER_CLASS))).preemption_policy == "Never"


def test_system_classes_are_always_known() -> None:
    spec = apply_pod_defaults(pod({"priorityClassName": "system-node-critical", "containers": []}))["spec"]
    assert spec["priority"] == SYSTEM_PRIORITY_CLASSES["system-node-critical"].value == 2_000_001_000


@pytest.mark.parametrize("cls, existing, error", [
    pytest.param(pc("tier1", 100), [], None, id="no-description"),
    pytest.param(pc("system-node-critical", 2_000_001_000), [], None, id="system-node-critical"),
    pytest.param(pc("system-node-critical", 0), [], ("metadata.name", "value of system-node-critical "
                 "PriorityClass must be 2000001000"), id="incorrect-system-class-value"),
    pytest.param(pc("system-something", 2_000_001_000), [], ("metadata.name", "system-something is not a "
                 "known system priority class"), id="incorrect-system-class-name"),
    pytest.param(pc("default2", 2000, True), [DEFAULT1], ("globalDefault", "PriorityClass default1 is "
                 "already marked as default. Only one default can exist"), id="second-default"),
    pytest.param(DEFAULT1, [], None, id="first-default"),
])
def test_validate_priority_class(cls: PriorityClass, existing: list[PriorityClass],
                                 error: tuple[str, str] | None) -> None:
    """TestValidatePriorityClass and TestPriorityClassAdmission (create)."""
    if error is None:
        validate_priority_class(cls, existing)
        return
    with pytest.raises(DecodeError) as exc:
        validate_priority_class(cls, existing)
    assert exc.value.field == error[0] and error[1] in exc.value.message


# -- DefaultTolerationSeconds ---------------------------------------------------------------
def tol(key: str, effect: str = "NoExecute", seconds: int = 700, **kw: Any) -> dict[str, Any]:
    t = {"key": key, "operator": "Exists", "tolerationSeconds": seconds, **kw}
    if effect:
        t["effect"] = effect
    return t


ADDED_NOT_READY = {"key": NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
ADDED_UNREACHABLE = {"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
FOO = {"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule", "tolerationSeconds": 700}
WILDCARD = {"operator": "Exists", "tolerationSeconds": 700}


@pytest.mark.parametrize("given, want", [
    pytest.param(None, [ADDED_NOT_READY, ADDED_UNREACHABLE], id="no-tolerations"),
    pytest.param([FOO], [FOO, ADDED_NOT_READY, ADDED_UNREACHABLE], id="unrelated-toleration"),
    pytest.param([tol(NOT_READY)], [tol(NOT_READY), ADDED_UNREACHABLE], id="not-ready-given"),
    pytest.param([tol(UNREACHABLE)], [tol(UNREACHABLE), ADDED_NOT_READY], id="unreachable-given"),
    pytest.param([tol(NOT_READY), tol(UNREACHABLE)], [tol(NOT_READY), tol(UNREACHABLE)], id="both-given"),
    pytest.param([tol(UNREACHABLE, effect="")], [tol(UNREACHABLE, effect=""), ADDED_NOT_READY],
                 id="unreachable-any-effect"),
    pytest.param([WILDCARD], [WILDCARD], id="wildcard"),
])
def test_default_toleration_seconds(given: list[dict[str, Any]] | None, want: list[dict[str, Any]]) -> None:
    """TestForgivenessAdmission."""
    spec: dict[str, Any] = {"containers": []}
    if given is not None:
        spec["tolerations"] = given
    assert apply_pod_defaults(pod(spec))["spec"]["tolerations"] == want


# -- whole manifests ------------------------------------------------------------------------
def test_default_manifest_uses_classes_among_objects_and_names_files() -> None:
    objs = [pod(), {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                    "metadata": {"name": "d"}, "value": 5, "globalDefault": True}]
    out = default_manifest(objs)
    assert out[0]["spec"]["priority"] == 5 and out[1]["preemptionPolicy"] == "PreemptLowerPriority"
    with pytest.raises(DecodeError) as exc:
        default_manifest([pod({"priorityClassName": "x", "containers": []})], {}, files=["f.yaml"])
    assert str(exc.value) == ("f.yaml: Pod default/p: spec.priorityClassName: "
                              "no PriorityClass with name x was found")


def test_metadata_defaults_for_cluster_scoped_kinds() -> None:
    out = apply_metadata_defaults({"kind": "PersistentVolume", "metadata": {"name": "pv"}})
    assert "namespace" not in out["metadata"] and out["metadata"]["uid"]
