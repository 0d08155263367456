"""The OpenAPI v3 documents built from the type descriptions, and ``fieldValidation``.

Expected values: list semantics and extensions as kube-apiserver v1.34 publishes them for
core/v1 (``x-kubernetes-list-type: map`` with ``x-kubernetes-list-map-keys: [name]`` and
``x-kubernetes-patch-merge-key: name`` on ``PodSpec.containers``; ``[containerPort, protocol]``
on ``Container.ports``; LabelSelector ``x-kubernetes-map-type: atomic``), and upstream's
messages for strict decoding (``strict decoding error: unknown field "spec.foo"``) and its
``Warning: 299`` header."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.http.openapi import document
from kubesched.server.apiserver.registry.resources import TABLE
from kubesched.server.apiserver.typedefs.validate import check, duplicate_fields, unknown_fields, warning_header
from kubesched.server.apiserver.typedefs import definition_for

CORE = "io.k8s.api.core.v1."


def refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        out = [node["$ref"]] if "$ref" in node else []
        return out + [r for v in node.values() for r in refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in refs(v)]
    return []


def test_core_document_has_pod_schema_with_list_semantics() -> None:
    doc = document(TABLE, "", "v1")
    assert doc is not None
    schemas = doc["components"]["schemas"]
    pod = schemas[CORE + "Pod"]
    assert pod["x-kubernetes-group-version-kind"] == [{"group": "", "version": "v1", "kind": "Pod"}]
    containers = schemas[CORE + "PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-list-type"] == "map"
    assert containers["x-kubernetes-list-map-keys"] == ["name"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    ports = schemas[CORE + "Container"]["properties"]["ports"]
    assert ports["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    assert schemas[CORE + "PodSpec"]["required"] == ["containers"]
    assert schemas["io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"]["x-kubernetes-map-type"] == "atomic"
    assert schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"] == "int-or-string"
    # every reference resolves inside the document
    for r in refs(doc["components"]):
        assert r.removeprefix("#/components/schemas/") in schemas, r
    # every served kind of the group-version has a schema naming its kind
    kinds = {e["kind"] for s in schemas.values() for e in s.get("x-kubernetes-group-version-kind", [])}
    assert {"Pod", "Node", "Namespace", "ConfigMap", "Service", "Event"} <= kinds
    json.dumps(doc)  # serialisable


def test_apps_document_describes_deployments() -> None:
    doc = document(TABLE, "apps", "v1")
    assert doc is not None
    spec = doc["components"]["schemas"]["io.k8s.api.apps.v1.DeploymentSpec"]
    assert spec["required"] == ["selector", "template"]
    assert spec["properties"]["replicas"] == {"type": "integer", "format": "int32",
                                              "description": "Desired number of pods."}


POD_DEF = definition_for("", "v1", "Pod")


def test_unknown_fields_of_described_structs() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"any": "x"}, "bogus": 1},
           "spec": {"foo": 1, "containers": [{"name": "c", "bar": 2, "resources": {"requests": {"cpu": "1"}}}],
                    "affinity": {"nodeAffinity": {"whatever": 1}}}}
    # labels are a map (any key); affinity is described field by field (NodeAffinity has no "whatever")
    assert unknown_fields(pod, POD_DEF) == ["metadata.bogus", "spec.foo", "spec.containers[0].bar",
                                            "spec.affinity.nodeAffinity.whatever"]
    # server-side apply names list items by their keys (structured-merge-diff's path format)
    assert unknown_fields(pod, POD_DEF, keyed=True) == ["metadata.bogus", "spec.foo", 'spec.containers[name="c"].bar',
                                                        "spec.affinity.nodeAffinity.whatever"]


def test_open_kinds_report_nothing() -> None:
    """A kind not described field by field (scheduler-plugins' PodGroup CRD) is open under
    metadata; Services are described (core/v1 ServiceSpec has no "anything")."""
    pg = definition_for("scheduling.x-k8s.io", "v1alpha1", "PodGroup")
    assert unknown_fields({"spec": {"anything": 1}, "metadata": {"name": "s"}}, pg) == []
    assert unknown_fields({"spec": {}, "metadata": {"nope": 1}}, pg) == ["metadata.nope"]
    svc = definition_for("", "v1", "Service")
    assert unknown_fields({"spec": {"anything": 1, "ports": [{"port": 80, "bogus": 1}]}}, svc) == [
        "spec.anything", "spec.ports[0].bogus"]


def test_check_modes() -> None:
    body = {"metadata": {"name": "p"}, "spec": {"foo": 1, "containers": []}}
    with pytest.raises(ApiError) as err:
        check("Strict", "", "v1", "Pod", body, b"")
    assert err.value.code == 400
    assert err.value.message == ('Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
                                 'unknown field "spec.foo"')
    assert check(None, "", "v1", "Pod", body, b"") == ['unknown field "spec.foo"']  # Warn is the default
    assert check("Ignore", "", "v1", "Pod", body, b"") == []
    with pytest.raises(ApiError) as err:
        check("Strict", "", "v1", "Pod", body, b"", apply=True, where="default/p")
    assert err.value.message == ('failed to create typed patch object (default/p; /v1, Kind=Pod): .spec.foo: '
                                 'field not declared in schema')
    with pytest.raises(ApiError) as err:
        check("strict", "", "v1", "Pod", body, b"")
    assert err.value.code == 400


def test_duplicates_and_warning_header() -> None:
    assert duplicate_fields(b'{"a": 1, "b": {"c": 1, "c": 2}, "a": 3}') == ["c", "a"]
    assert duplicate_fields(b"a: 1\na: 2\n") == []  # not JSON: the YAML decoder's business
    assert warning_header('unknown field "spec.foo"') == '299 - "unknown field \\"spec.foo\\""'
