"""The OpenAPI definitions derived from the declared types, against upstream's published
OpenAPI v3 documents of Kubernetes 1.34 (``api/openapi-spec/v3/api__v1_openapi.json``):
byte maps, sets with a patch strategy, atomic structs, list-map keys and kinds' GVKs."""

from __future__ import annotations

from kubesched.server.apiserver.typedefs import definition_for
from kubesched.server.apiserver.typedefs.dsl import DEFS, def_schema, schema_of

CORE = "io.k8s.api.core.v1."
META = "io.k8s.apimachinery.pkg.apis.meta.v1."


def _prop(defname: str, field: str) -> dict[str, object]:
    out = schema_of(DEFS[defname].fields[field])
    out.pop("description", None)
    return out


def test_configmap_binary_data_is_a_map_of_bytes() -> None:
    assert _prop(CORE + "ConfigMap", "binaryData") == {
        "type": "object", "additionalProperties": {"type": "string", "format": "byte"}}


def test_finalizers_are_a_set_merged_by_patch() -> None:
    assert _prop(META + "ObjectMeta", "finalizers") == {
        "type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set",
        "x-kubernetes-patch-strategy": "merge"}


def test_owner_reference_and_label_selector_are_atomic_structs() -> None:
    assert def_schema(DEFS[META + "OwnerReference"])["x-kubernetes-map-type"] == "atomic"
    assert def_schema(DEFS[META + "LabelSelector"])["x-kubernetes-map-type"] == "atomic"
    assert def_schema(DEFS[META + "OwnerReference"])["required"] == ["apiVersion", "kind", "name", "uid"]


def test_node_config_source_is_described() -> None:
    """Upstream wraps a described reference in ``allOf``."""
    assert _prop(CORE + "NodeSpec", "configSource") == {
        "allOf": [{"$ref": f"#/components/schemas/{CORE}NodeConfigSource"}]}


def test_pod_tolerations_and_containers() -> None:
    assert _prop(CORE + "PodSpec", "tolerations")["x-kubernetes-list-type"] == "atomic"
    containers = _prop(CORE + "PodSpec", "containers")
    assert containers["x-kubernetes-list-map-keys"] == ["name"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert "containers" in def_schema(DEFS[CORE + "PodSpec"])["required"]


def test_kinds_carry_their_group_version_kind() -> None:
    assert definition_for("", "v1", "Pod") == CORE + "Pod"
    assert definition_for("coordination.k8s.io", "v1", "Lease") == "io.k8s.api.coordination.v1.Lease"
    assert def_schema(DEFS[CORE + "Pod"])["x-kubernetes-group-version-kind"] == [
        {"group": "", "version": "v1", "kind": "Pod"}]
