"""The declared types (kubesched.api.types) against k8s.io/api v0.34: field numbers from
core/v1 and meta/v1 ``generated.proto``, Go types, pointers, embedding and list semantics
(``+listType``/``+listMapKey``) from ``core/v1/types.go`` and ``apps/v1/types.go``; and the
protobuf tables derived from them, checked on bytes worked out by hand from the wire format."""

from __future__ import annotations

import pytest

from kubesched.api.types import TYPES, ref
from kubesched.api.types.grammar import Field, parse_field
from kubesched.server.apiserver.protobuf import encode
from kubesched.server.apiserver.protobuf.tables import SCHEMA

# (group, message, json name) -> (protobuf number, Go type, declared type); generated.proto / types.go
UPSTREAM = {
    ("core", "Toleration", "key"): (1, "string", "s"),
    ("core", "Toleration", "operator"): (2, "TolerationOperator", "s"),
    ("core", "Toleration", "value"): (3, "string", "s"),
    ("core", "Toleration", "effect"): (4, "TaintEffect", "s"),
    ("core", "Toleration", "tolerationSeconds"): (5, "*int64", "i64"),
    ("core", "Taint", "timeAdded"): (4, "*metav1.Time", "t"),
    ("core", "PodSpec", "containers"): (2, "[]Container", "[map=name]@core:Container"),
    ("core", "PodSpec", "tolerations"): (22, "[]Toleration", "[atomic]@core:Toleration"),
    ("core", "PodSpec", "topologySpreadConstraints"): (
        33, "[]TopologySpreadConstraint", "[map=topologyKey,whenUnsatisfiable]@core:TopologySpreadConstraint"),
    ("core", "PodSpec", "schedulingGates"): (38, "[]PodSchedulingGate", "[map=name]@core:PodSchedulingGate"),
    ("core", "PodSpec", "overhead"): (32, "ResourceList", "{}q"),
    ("core", "NodeStatus", "volumesInUse"): (9, "[]UniqueVolumeName", "[atomic]s"),
    ("meta", "ObjectMeta", "uid"): (5, "types.UID", "s"),
    ("core", "Container", "ports"): (6, "[]ContainerPort", "[map=containerPort,protocol]@core:ContainerPort"),
    ("core", "ServiceSpec", "ports"): (1, "[]ServicePort", "[map=port,protocol]@core:ServicePort"),
    ("core", "Volume", "VolumeSource"): (2, "VolumeSource", "@core:VolumeSource"),
    ("meta", "ObjectMeta", "managedFields"): (17, "[]ManagedFieldsEntry", "[atomic]@meta:ManagedFieldsEntry"),
    ("apps", "DeploymentSpec", "replicas"): (1, "*int32", "i32"),
}


@pytest.mark.parametrize("key", sorted(UPSTREAM))
def test_declared_field_matches_upstream(key: tuple[str, str, str]) -> None:
    group, message, json = key
    field = TYPES[(group, message)].field(json)
    assert field is not None
    assert (field.number, field.go_type, field.type) == UPSTREAM[key]


def test_embedded_struct_and_required_flags() -> None:
    """types.go: ``Volume`` embeds ``VolumeSource`` (``json:",inline"``) and its ``name`` is required."""
    volume = TYPES[("core", "Volume")]
    source = volume.field("VolumeSource")
    name = volume.field("name")
    assert source is not None and source.embedded and not source.pointer
    assert name is not None and name.required


def test_field_notation() -> None:
    assert parse_field("tolerationSeconds i64 5p") == Field("tolerationSeconds", "i64", False, 5, True, False)
    assert parse_field("name! s") == Field("name", "s", True)
    assert parse_field("VolumeSource @core:VolumeSource 2n").embedded
    assert parse_field("effect s<TaintEffect> 4") == Field("effect", "s", False, 4, named="s<TaintEffect>")
    assert parse_field("capacity {ResourceList}q 1").go_type == "ResourceList"


def test_numbers_and_names_are_unique_per_message() -> None:
    for message in TYPES.values():
        numbers = [f.number for f in message.fields if f.number is not None]
        names = [f.json for f in message.fields]
        assert len(numbers) == len(set(numbers)), message.name
        assert len(names) == len(set(names)), message.name


def test_references_resolve() -> None:
    """Every referenced message is declared (the subresources' statuses included)."""
    missing = {ref(f.type) for m in TYPES.values() for f in m.fields if ref(f.type) not in (None, *TYPES)}
    assert missing == set()


def test_derived_protobuf_table_of_toleration() -> None:
    assert SCHEMA["Toleration"] == {1: ("key", "s", ""), 2: ("operator", "s", ""), 3: ("value", "s", ""),
                                    4: ("effect", "s", ""), 5: ("tolerationSeconds", "i", "p")}
    assert SCHEMA["PodSpec"][22] == ("tolerations", "m:Toleration", "r")
    assert SCHEMA["Volume"][2] == ("VolumeSource", "m:VolumeSource", "n")


def test_toleration_encodes_as_upstream() -> None:
    """Field 1 (LEN) "k": 0a 01 6b; field 2 "Exists": 12 06 ...; field 5 varint 30: 28 1e."""
    raw = encode.encode_message("Toleration", {"key": "k", "operator": "Exists", "tolerationSeconds": 30})
    assert raw == b"\x0a\x01k" + b"\x12\x06Exists" + b"\x28\x1e"


def test_events_of_two_groups_are_kept_apart() -> None:
    """core/v1 Event and events.k8s.io/v1 Event share a Go name, not their fields (generated.proto)."""
    assert SCHEMA["v1/Event"][2] == ("involvedObject", "m:ObjectReference", "")
    assert SCHEMA["events.k8s.io/v1/Event"][8] == ("regarding", "m:ObjectReference", "")
    assert "Event" not in SCHEMA
