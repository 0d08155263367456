"""Workload objects in manifests: decoding, upstream's API defaulting that matters to the
scheduler (core/v1 ``SetDefaults_ReplicationController``: an RC without a selector takes
its template's labels; a missing namespace is ``default``), and one-line errors naming the
file, the object and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.api.decode import load_manifests
from kubesched.api.errors import DecodeError
from kubesched.api.selectors import LabelSelector, Requirement
from kubesched.api.workloads import controller_of


def _load(tmp_path: Path, *objs: dict[str, Any]) -> Any:
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump_all(list(objs)))
    return load_manifests([str(path)])


def test_rc_without_selector_takes_template_labels(tmp_path: Path) -> None:
    m = _load(tmp_path, {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "db"},
                         "spec": {"template": {"metadata": {"labels": {"app": "db", "tier": "be"}}}}})
    (rc,) = m.workloads
    assert (rc.kind, rc.namespace, rc.name) == ("ReplicationController", "default", "db")
    assert rc.label_selector == {"app": "db", "tier": "be"}


def test_rc_with_selector_keeps_it(tmp_path: Path) -> None:
    m = _load(tmp_path, {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "db"},
                         "spec": {"selector": {"app": "db"},
                                  "template": {"metadata": {"labels": {"app": "db", "tier": "be"}}}}})
    assert m.workloads[0].label_selector == {"app": "db"}


def test_service_selector_nil_and_set(tmp_path: Path) -> None:
    m = _load(tmp_path, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ext", "namespace": "a"},
                         "spec": {"type": "ExternalName", "externalName": "example.com"}},
              {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "a"},
               "spec": {"selector": {"app": "web"}}})
    assert [(w.name, w.label_selector) for w in m.workloads] == [("ext", None), ("web", {"app": "web"})]


def test_replicaset_selector_parsed(tmp_path: Path) -> None:
    m = _load(tmp_path, {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"},
                         "spec": {"selector": {"matchLabels": {"app": "web"}}}})
    assert m.workloads[0].selector == LabelSelector((Requirement("app", "In", frozenset(["web"])),))


@pytest.mark.parametrize("obj, message", [
    ({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "ss"},
      "spec": {"selector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}}},
     'StatefulSet default/ss: spec.selector.matchExpressions[0].operator: Unsupported value: "Near"'),
    ({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"selector": ["app"]}},
     "Service default/s: spec.selector: json: cannot unmarshal array into Go struct field ServiceSpec.spec.selector "
     "of type map[string]string"),  # core/v1 types.go: Selector map[string]string
    ({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc"}, "spec": "x"},
     "ReplicationController default/rc: spec: json: cannot unmarshal string into Go struct field "
     "ReplicationController.spec of type v1.ReplicationControllerSpec"),
    ({"apiVersion": "extensions/v1beta1", "kind": "ReplicaSet", "metadata": {"name": "rs"}},
     'no matches for kind "ReplicaSet" in version "extensions/v1beta1"'),
])
def test_bad_workloads_are_one_line_errors(tmp_path: Path, obj: dict[str, Any], message: str) -> None:
    with pytest.raises(DecodeError) as exc:
        _load(tmp_path, obj)
    assert str(exc.value).startswith(f"{tmp_path / 'w.yaml'}: ")
    assert message in str(exc.value)


def test_controller_of_is_the_first_controller_reference() -> None:
    raw = {"metadata": {"ownerReferences": [
        {"apiVersion": "v1", "kind": "ReplicationController", "name": "a", "controller": False},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "b", "controller": True},
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "c", "controller": True}]}}
    ref = controller_of(raw)
    assert ref is not None and (ref.api_version, ref.kind, ref.name) == ("apps/v1", "ReplicaSet", "b")
    assert controller_of({"metadata": {}}) is None
