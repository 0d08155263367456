"""Protobuf for the kinds whose field numbers come from the declared types of every group:
StatefulSet, ResourceSlice (maps of messages), ControllerRevision (RawExtension) and a
PodDisruptionBudget's status (a map of Time). Field numbers are those of k8s.io/api v0.34.1
``apps/v1/generated.proto``, ``resource/v1/generated.proto`` and ``policy/v1/generated.proto``;
the bytes are worked out by hand from the protobuf wire format (a key byte is
``number << 3 | wire type``, 2 for length-delimited, 0 for a varint; a map entry is a message
``{key = 1; value = 2}``)."""

from __future__ import annotations

from typing import Any

from kubesched.server.apiserver.protobuf import decode as protobuf
from kubesched.server.apiserver.protobuf import encode as protobuf_encode

STATEFULSET: dict[str, Any] = {
    "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
    "spec": {"replicas": 2, "serviceName": "web", "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
    "status": {"replicas": 2, "availableReplicas": 1}}

LABEL = b"\x0a\x03app\x12\x03web"  # a map entry: key = 1 "app", value = 2 "web" (10 bytes)
STATEFULSET_BYTES = (
    b"\x0a\x05" + b"\x0a\x03web"  # metadata = 1 (5 bytes): ObjectMeta.name = 1
    + b"\x12\x33"  # spec = 2 (51 bytes): StatefulSetSpec
    + b"\x08\x02"  # replicas = 1, varint 2
    + b"\x12\x0c" + b"\x0a\x0a" + LABEL  # selector = 2 (12 bytes): LabelSelector.matchLabels = 1
    + b"\x1a\x1c"  # template = 3 (28 bytes): PodTemplateSpec
    + b"\x0a\x0c" + b"\x5a\x0a" + LABEL  # metadata = 1 (12 bytes): ObjectMeta.labels = 11 (11 << 3 | 2 = 0x5a)
    + b"\x12\x0c" + b"\x12\x0a"  # spec = 2 (12 bytes): PodSpec.containers = 2 (10 bytes)
    + b"\x0a\x01c" + b"\x12\x05nginx"  # Container.name = 1, image = 2
    + b"\x2a\x03web"  # serviceName = 5
    + b"\x1a\x04"  # status = 3 (4 bytes): StatefulSetStatus
    + b"\x10\x02" + b"\x58\x01")  # replicas = 2; availableReplicas = 11 (11 << 3 = 0x58)


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    """``k8s\\0`` + runtime.Unknown {typeMeta = 1 {apiVersion = 1; kind = 2}; raw = 2}."""
    type_meta = bytes([0x0a, len(api_version)]) + api_version.encode() + bytes([0x12, len(kind)]) + kind.encode()
    return b"k8s\x00" + bytes([0x0a, len(type_meta)]) + type_meta + b"\x12" + bytes([len(raw)]) + raw


def test_statefulset_encodes_to_hand_computed_bytes_and_back() -> None:
    assert len(STATEFULSET_BYTES) == 2 + 5 + 2 + 51 + 2 + 4
    wire = envelope("apps/v1", "StatefulSet", STATEFULSET_BYTES)
    assert protobuf_encode.encode(STATEFULSET) == wire
    assert protobuf.decode(wire) == STATEFULSET
    assert protobuf_encode.streamable("apps/v1", "StatefulSet")


def test_resource_slice_device_maps_of_messages() -> None:
    """Device {name = 1; map<string, DeviceAttribute> attributes = 2; map<string,
    DeviceCapacity> capacity = 3}; DeviceAttribute.string = 4; DeviceCapacity.value = 1, a
    Quantity {string = 1}."""
    device = {"name": "gpu-0", "attributes": {"model": {"string": "a100"}},
              "capacity": {"memory": {"value": "40Gi"}}}
    attribute = b"\x0a\x05model" + b"\x12\x06" + b"\x22\x04a100"  # entry: key = 1, value = 2 (string = 4)
    capacity = b"\x0a\x06memory" + b"\x12\x08" + b"\x0a\x06" + b"\x0a\x0440Gi"  # value = 1: Quantity.string = 1
    want = b"\x0a\x05gpu-0" + b"\x12\x0f" + attribute + b"\x1a\x12" + capacity
    assert protobuf_encode.encode_message("Device", device) == want
    assert protobuf.decode_message("Device", want) == device
    slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "gpus"},
              "spec": {"driver": "gpu.example.com", "nodeName": "node-1", "devices": [device],
                       "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1}}}
    assert protobuf.decode(protobuf_encode.encode(slice_)) == slice_


def test_controller_revision_data_is_raw_json() -> None:
    """ControllerRevision {metadata = 1; RawExtension data = 2; revision = 3}; RawExtension
    {bytes raw = 1} holds the object's JSON."""
    revision = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "r"},
                "data": {"a": 1}, "revision": 5}
    raw = b"\x0a\x03\x0a\x01r" + b"\x12\x09" + b"\x0a\x07" + b'{"a":1}' + b"\x18\x05"
    assert protobuf_encode.encode(revision) == envelope("apps/v1", "ControllerRevision", raw)
    assert protobuf.decode(envelope("apps/v1", "ControllerRevision", raw)) == revision


def test_disruption_budget_status_map_of_times() -> None:
    """PodDisruptionBudgetStatus {map<string, Time> disruptedPods = 2; disruptionsAllowed = 3 ...};
    Time {int64 seconds = 1}: 2024-01-02T03:04:05Z is 19724 days * 86400 + 11045 s = 1704164645,
    whose 7-bit groups from the lowest are 37, 122, 77, 44, 6: the varint a5 fa cd ac 06."""
    status = {"disruptedPods": {"p1": "2024-01-02T03:04:05Z"}, "disruptionsAllowed": 1}
    time = b"\x08" + bytes([0xa5, 0xfa, 0xcd, 0xac, 0x06])  # 6 bytes
    want = b"\x12\x0c" + b"\x0a\x02p1" + b"\x12\x06" + time + b"\x18\x01"  # entry: 4 + 2 + 6 bytes
    assert protobuf_encode.encode_message("PodDisruptionBudgetStatus", status) == want
    assert protobuf.decode_message("PodDisruptionBudgetStatus", want) == status
