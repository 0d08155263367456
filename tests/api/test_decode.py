"""Loading manifests: formats, directories, order, and the one-line errors.

Expected messages follow upstream where upstream has one: the Priority admission plugin
(plugin/pkg/admission/priority/admission.go: ``no PriorityClass with name X was found``),
PriorityClass validation (pkg/apis/scheduling/validation/validation.go), quantity parsing
(apimachinery resource.ParseQuantity's ``quantities must match the regular expression``),
selector validation (``Unsupported value: ...``) and kubectl's ``no matches for kind``.
Volume scheduling is rejected because kubesched does not implement it yet; DRA objects are validated.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.api.decode import Manifest, load_manifests
from kubesched.api.errors import DecodeError
from kubesched.api.quantity import ERR_FORMAT_WRONG


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return str(path)


def _docs(*objs: dict[str, Any]) -> str:
    return yaml.safe_dump_all(list(objs), sort_keys=False)


def _pod(name: str, ns: str | None = None, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if ns:
        meta["namespace"] = ns
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "img"}], **spec}}


def _node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def _pc(name: str, value: int, default: bool = False) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": value, "globalDefault": default}


def _error(tmp_path: Path, text: str, name: str = "m.yaml") -> str:
    path = _write(tmp_path, name, text)
    with pytest.raises(DecodeError) as exc:
        load_manifests([path])
    return str(exc.value).replace(str(tmp_path) + "/", "")


# -- loading ------------------------------------------------------------------------------
def test_multi_document_yaml_keeps_file_order_and_sets_seq(tmp_path: Path) -> None:
    path = _write(tmp_path, "m.yaml", _docs(_pod("b"), _node("n1"), _pod("a"), _node("n0")))
    m = load_manifests([path])
    assert [p.name for p in m.pods] == ["b", "a"]
    assert [p.seq for p in m.pods] == [0, 1]
    assert [n.name for n in m.nodes] == ["n1", "n0"]


def test_empty_documents_are_skipped(tmp_path: Path) -> None:
    path = _write(tmp_path, "m.yaml", "---\n---\n" + _docs(_pod("a")) + "---\n")
    assert [p.name for p in load_manifests([path]).pods] == ["a"]


def test_kind_list_and_typed_list(tmp_path: Path) -> None:
    """``kubectl get -o yaml`` gives ``kind: List``; the API's PodList leaves kind off items."""
    lst = {"apiVersion": "v1", "kind": "List", "items": [_node("n1"), _pod("a")]}
    bare = _pod("b")
    del bare["kind"], bare["apiVersion"]
    typed = {"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": [bare]}
    path = _write(tmp_path, "m.yaml", _docs(lst, typed))
    m = load_manifests([path])
    assert [p.name for p in m.pods] == ["a", "b"]
    assert m.pods[1].raw["kind"] == "Pod"
    assert [n.name for n in m.nodes] == ["n1"]


def test_json_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "m.json", json.dumps({"apiVersion": "v1", "kind": "List",
                                                   "items": [_pod("a"), _node("n")]}))
    m = load_manifests([path])
    assert [p.name for p in m.pods] == ["a"] and [n.name for n in m.nodes] == ["n"]


def test_directory_recursive_sorted_by_name(tmp_path: Path) -> None:
    _write(tmp_path, "d/b.yaml", _docs(_pod("from-b")))
    _write(tmp_path, "d/a/z.yml", _docs(_pod("from-a-z")))
    _write(tmp_path, "d/c.json", json.dumps(_pod("from-c")))
    _write(tmp_path, "d/a.yaml", _docs(_pod("from-a")))
    _write(tmp_path, "d/notes.txt", "not a manifest")
    _write(tmp_path, "d/e/README.md", "# ignored")
    m = load_manifests([str(tmp_path / "d")])
    assert [p.name for p in m.pods] == ["from-a-z", "from-a", "from-b", "from-c"]
    assert [p.seq for p in m.pods] == [0, 1, 2, 3]


def test_several_paths_in_the_given_order(tmp_path: Path) -> None:
    a = _write(tmp_path, "a.yaml", _docs(_pod("a")))
    b = _write(tmp_path, "b.yaml", _docs(_pod("b")))
    assert [p.name for p in load_manifests([b, a]).pods] == ["b", "a"]


def test_all_kinds_sorted_into_the_manifest(tmp_path: Path) -> None:
    objs = [
        _pc("high", 1000),
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"},
         "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}}},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "labels": {"a": "b"}}},
        {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
         "metadata": {"name": "g", "namespace": "team"}, "spec": {"minMember": 2}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {}},
        _pod("a", priorityClassName="high"),
    ]
    m = load_manifests([_write(tmp_path, "m.yaml", _docs(*objs))])
    assert isinstance(m, Manifest)
    assert [(pc.name, pc.value) for pc in m.priority_classes] == [("high", 1000)]
    assert [(p.namespace, p.name) for p in m.pdbs] == [("default", "pdb")]
    assert [n.name for n in m.namespaces] == ["team"]
    assert [g.name for g in m.pod_groups] == ["g"]
    assert m.pod_groups[0].raw["metadata"]["uid"]  # defaulted like every object
    assert [o["kind"] for o in m.others] == ["Deployment", "Service"]
    assert m.others[0]["metadata"]["namespace"] == "default"
    assert m.pods[0].priority == 1000


def test_unknown_fields_are_kept_in_raw(tmp_path: Path) -> None:
    pod = _pod("a")
    pod["spec"]["futureField"] = {"x": 1}
    pod["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z"
    text = _docs(pod).replace("'2024-01-01T00:00:00Z'", "2024-01-01T00:00:00Z")  # unquoted
    m = load_manifests([_write(tmp_path, "m.yaml", text)])
    assert m.pods[0].raw["spec"]["futureField"] == {"x": 1}
    assert m.pods[0].raw["metadata"]["creationTimestamp"] == "2024-01-01T00:00:00Z"


def test_generate_name_is_deterministic_and_unique(tmp_path: Path) -> None:
    pod = _pod("x")
    del pod["metadata"]["name"]
    pod["metadata"]["generateName"] = "web-"
    path = _write(tmp_path, "m.yaml", _docs(pod, pod))
    names = [p.name for p in load_manifests([path]).pods]
    assert names == [p.name for p in load_manifests([path]).pods]
    assert len(set(names)) == 2 and all(n.startswith("web-") and len(n) == 9 for n in names)


def test_bound_pod_on_existing_node(tmp_path: Path) -> None:
    m = load_manifests([_write(tmp_path, "m.yaml", _docs(_pod("a", nodeName="n1"), _node("n1")))])
    assert m.pods[0].node_name == "n1" and m.pods[0].phase == "Running"


# -- errors -------------------------------------------------------------------------------
@pytest.mark.parametrize("text, message", [
    pytest.param("- a\n- b\n", "m.yaml: document 1: must be an object with apiVersion and kind, got a list",
                 id="not-a-mapping"),
    pytest.param("---\nkind: Pod\nmetadata: {name: a}\n---\nhello\n",
                 "m.yaml: document 1: apiVersion: apiVersion is required", id="missing-apiVersion"),
    pytest.param("apiVersion: v1\nmetadata: {name: a}\n", "m.yaml: document 1: kind: kind is required",
                 id="missing-kind"),
    pytest.param(_docs(_pod("a"), _node("n"), {"apiVersion": "v1", "kind": "Foo", "metadata": {"name": "f"}}),
                 'm.yaml: document 3: kind: unknown kind "Foo" (apiVersion v1)', id="unknown-kind"),
    pytest.param(_docs({"apiVersion": "v1", "kind": "List",
                        "items": [_pod("a"), {"apiVersion": "v1", "kind": "Foo"}]}),
                 'm.yaml: document 1: items[1].kind: unknown kind "Foo" (apiVersion v1)',
                 id="unknown-kind-in-list"),
    pytest.param(_docs({"apiVersion": "policy/v1beta1", "kind": "PodDisruptionBudget", "metadata": {"name": "p"}}),
                 'm.yaml: document 1: apiVersion: no matches for kind "PodDisruptionBudget" in version '
                 '"policy/v1beta1" (kubesched reads policy/v1)', id="wrong-apiVersion"),
    pytest.param(_docs({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "l"}}),
                 "m.yaml: document 1: kind: LimitRange: LimitRanger admission (default requests and limits) "
                 "is not supported by kubesched yet", id="unsupported-kind"),
    pytest.param(_docs({"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": {}}),
                 "m.yaml: document 1: metadata.name: name or generateName is required", id="no-name"),
])
def test_document_errors(tmp_path: Path, text: str, message: str) -> None:
    assert _error(tmp_path, text) == message


def test_malformed_yaml_reports_line(tmp_path: Path) -> None:
    msg = _error(tmp_path, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  labels: a: b\n")
    # libyaml says "... in this context", the pure-Python parser "... here".
    assert msg.startswith("m.yaml: invalid YAML at line 5, column 12: mapping values are not allowed")
    assert "\n" not in msg


def test_malformed_json_reports_line(tmp_path: Path) -> None:
    assert _error(tmp_path, '{"kind": "Pod",\n "x": }\n', "m.json") == \
        "m.json: invalid JSON at line 2, column 7: Expecting value"


@pytest.mark.parametrize("obj, message", [
    pytest.param(_pod("web", containers=[{"name": "c", "resources": {"requests": {"cpu": "abc"}}}]),
                 f"m.yaml: Pod default/web: spec.containers[0].resources.requests.cpu: {ERR_FORMAT_WRONG}",
                 id="pod-invalid-quantity"),
    pytest.param({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                  "status": {"capacity": {"memory": "1Gb"}}},
                 f"m.yaml: Node n1: status.capacity.memory: {ERR_FORMAT_WRONG}", id="node-invalid-quantity"),
    pytest.param(_pod("web", "prod", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Foo", "values": ["v"]}]}]}}}),
                 "m.yaml: Pod prod/web: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
                 ".nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: \"Foo\": "
                 "not a valid selector operator",
                 id="invalid-selector-operator"),
    pytest.param(_pod("web", nodeName="n9"),
                 'm.yaml: Pod default/web: spec.nodeName: node "n9" not found in the manifests',
                 id="unknown-node"),
    pytest.param(_pod("web", priorityClassName="gold"),
                 "m.yaml: Pod default/web: spec.priorityClassName: no PriorityClass with name gold was found",
                 id="missing-priority-class"),
    pytest.param(_pod("web", volumes=[{"name": "cfg", "configMap": {"name": "c"}},
                                      {"name": "data", "persistentVolumeClaim": {}}]),
                 "m.yaml: Pod default/web: spec.volumes[1].persistentVolumeClaim.claimName: Required value",
                 id="pvc-volume-without-claim"),
    pytest.param(_pod("web", volumes=[{"name": "scratch", "ephemeral": {}}]),
                 "m.yaml: Pod default/web: spec.volumes[0].ephemeral.volumeClaimTemplate: Required value",
                 id="ephemeral-volume-without-template"),
    pytest.param(_pod("web", resourceClaims=[{"name": "gpu", "resourceClaimName": "g",
                                               "resourceClaimTemplateName": "t"}]),
                 "m.yaml: Pod default/web: spec.resourceClaims[0]: must specify one of: `resourceClaimName`, "
                 "`resourceClaimTemplateName`", id="resource-claim-both-names"),
    pytest.param({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
                  "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu",
                                                                                 "count": 0}}]}}},
                 "m.yaml: ResourceClaim default/c: spec.devices.requests[0].exactly.count: Invalid value: 0: must "
                 "be greater than zero", id="claim-count-zero"),
    pytest.param({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t"},
                  "spec": {"spec": {"devices": {"requests": [
                      {"name": "gpu", "exactly": {"deviceClassName": "gpu", "allocationMode": "Some"}}]}}}},
                 "m.yaml: ResourceClaimTemplate default/t: spec.spec.devices.requests[0].exactly.allocationMode: "
                 'Unsupported value: "Some": supported values: "All", "ExactCount"', id="template-bad-mode"),
    pytest.param({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
                  "spec": {"driver": "gpu.example.com", "pool": {"name": "p", "resourceSliceCount": 1}}},
                 "m.yaml: ResourceSlice s: spec: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                 "`perDeviceNodeSelection` is required", id="slice-no-node"),
    pytest.param(_pod("web", runtimeClassName="gvisor"),
                 "m.yaml: Pod default/web: spec.runtimeClassName: RuntimeClass admission (overhead, scheduling "
                 "constraints) is not supported by kubesched yet", id="runtime-class"),
    pytest.param(_pod("web", priority=5),
                 "m.yaml: Pod default/web: spec.priority: the integer value of priority (5) must not be provided "
                 "in pod spec; priority admission controller computed 0 from the given PriorityClass name",
                 id="priority-mismatch"),
    pytest.param(_pc("system-special", 10),
                 "m.yaml: PriorityClass system-special: metadata.name: Forbidden: priority class names with "
                 "'system-' prefix are reserved for system use only. error: system-special is not a known "
                 "system priority class", id="reserved-system-prefix"),
    pytest.param(_pc("huge", 1_000_000_001),
                 "m.yaml: PriorityClass huge: value: Forbidden: maximum allowed value of a user defined "
                 "priority is 1000000000", id="priority-too-high"),
])
def test_object_errors(tmp_path: Path, obj: dict[str, Any], message: str) -> None:
    assert _error(tmp_path, _docs(obj)) == message


def test_second_global_default_is_rejected(tmp_path: Path) -> None:
    """Upstream TestPriorityClassAdmission: "create operator with one existing default class"."""
    assert _error(tmp_path, _docs(_pc("default1", 1000, True), _pc("default2", 2000, True))) == (
        "m.yaml: PriorityClass default2: globalDefault: PriorityClass default1 is already marked as "
        "default. Only one default can exist")


def test_duplicate_names_name_both_places(tmp_path: Path) -> None:
    a = _write(tmp_path, "a.yaml", _docs(_node("n"), _pod("web")))
    b = _write(tmp_path, "b.yaml", _docs(_pod("other"), _pod("web", "default")))
    with pytest.raises(DecodeError) as exc:
        load_manifests([a, b])
    assert str(exc.value) == (f'{b}: Pod default/web: metadata.name: Duplicate value: "web": first defined '
                              f"in {a}, document 2; again in document 2")


def test_same_name_in_other_namespace_or_kind_is_fine(tmp_path: Path) -> None:
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}}
    path = _write(tmp_path, "m.yaml", _docs(_pod("web"), _pod("web", "prod"), _node("web"), svc))
    assert len(load_manifests([path]).pods) == 2


@pytest.mark.parametrize("name, content, message", [
    pytest.param("m.txt", "x", "m.txt: unsupported file type: expected .yaml, .yml or .json", id="extension"),
    pytest.param(None, None, "missing.yaml: no such file or directory", id="missing"),
])
def test_path_errors(tmp_path: Path, name: str | None, content: str | None, message: str) -> None:
    path = _write(tmp_path, name, content) if name and content else str(tmp_path / "missing.yaml")
    with pytest.raises(DecodeError) as exc:
        load_manifests([path])
    assert str(exc.value).replace(str(tmp_path) + "/", "") == message


def test_errors_are_one_line(tmp_path: Path) -> None:
    msg = _error(tmp_path, _docs(_pod("web", priorityClassName="gold")))
    assert "\n" not in msg and "Traceback" not in msg
