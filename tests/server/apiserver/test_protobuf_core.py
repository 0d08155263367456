"""Protobuf Pods, Nodes, their lists and watch frames. Field numbers are facts from
``k8s.io/api/core/v1/generated.proto`` (Pod 1 metadata / 2 spec / 3 status; PodSpec 2
containers, 1 volumes; Container 1 name / 2 image / 8 resources; ResourceRequirements
2 requests; Quantity {string string = 1}; Volume 1 name / 2 embedded VolumeSource whose
emptyDir is 2; PodStatus 1 phase; NodeSpec 5 taints; Taint 1 key / 3 effect; NodeStatus 1
capacity) and ``apimachinery/pkg/apis/meta/v1/generated.proto`` (ObjectMeta 1 name,
8 creationTimestamp; Time {seconds = 1, nanos = 2}; WatchEvent 1 type / 2 object;
RawExtension 1 raw; Status 6 code); the stream framing is apimachinery's
``util/framer`` (4-byte big-endian length). The bytes below are written out by hand."""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.server.apiserver.http import negotiate
from kubesched.server.apiserver.protobuf import decode as protobuf
from kubesched.server.apiserver.protobuf import encode as protobuf_encode
from kubesched.server.apiserver.errors import ApiError

REPO = Path(__file__).resolve().parents[3]

SMALL_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
             "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]},
             "status": {"phase": "Pending"}}
# Container: name (0a 01 'c'), image (12 01 'i'), resources (field 8, wire 2 = 0x42, 12 bytes):
#   ResourceRequirements.requests (12 0a): map entry key (0a 03 'cpu'), value Quantity (12 03 [0a 01 '1'])
CONTAINER = (b"\x0a\x01c" b"\x12\x01i"
             b"\x42\x0c" b"\x12\x0a" b"\x0a\x03cpu" b"\x12\x03" b"\x0a\x011")  # 20 bytes
SMALL_POD_RAW = (b"\x0a\x03" b"\x0a\x01p"                     # metadata {name "p"}
                 b"\x12\x16" b"\x12\x14" + CONTAINER +        # spec {containers [container]}
                 b"\x1a\x09" b"\x0a\x07Pending")              # status {phase "Pending"}
# k8s\0, Unknown {typeMeta (0a 09) {apiVersion "v1", kind "Pod"}, raw (12, 5 + 24 + 11 = 40 bytes = 0x28)}
SMALL_POD_BYTES = (b"k8s\x00" b"\x0a\x09" b"\x0a\x02v1" b"\x12\x03Pod" b"\x12\x28" + SMALL_POD_RAW)


def test_small_pod_encodes_to_hand_computed_bytes_and_back() -> None:
    assert len(SMALL_POD_RAW) == 0x28
    assert protobuf_encode.encode(SMALL_POD) == SMALL_POD_BYTES
    assert protobuf.decode(SMALL_POD_BYTES) == SMALL_POD


def test_node_with_time_taint_and_capacity() -> None:
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "n", "creationTimestamp": "1970-01-01T00:02:30Z"},
            "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]},
            "status": {"capacity": {"pods": "110"}}}
    raw = (b"\x0a\x08" b"\x0a\x01n" b"\x42\x03\x08\x96\x01"           # 150 s = varint 96 01; field 8 -> 0x42
           b"\x12\x11" b"\x2a\x0f" b"\x0a\x01k" b"\x1a\x0aNoSchedule"  # spec.taints (field 5 -> 0x2a): 3 + 12
           b"\x1a\x0f" b"\x0a\x0d" b"\x0a\x04pods" b"\x12\x05\x0a\x03110")  # status.capacity
    expected = b"k8s\x00" b"\x0a\x0a" b"\x0a\x02v1" b"\x12\x04Node" b"\x12" + bytes([len(raw)]) + raw
    assert protobuf_encode.encode(node) == expected
    assert protobuf.decode(expected) == node


def test_embedded_volume_source_and_pointer_zero_values() -> None:
    """``VolumeSource`` is embedded in ``Volume``: its members sit beside ``name`` in JSON
    and inside field 2 on the wire. A pointer's zero (automountServiceAccountToken: false,
    field 21 -> key a8 01) is kept; a non-pointer's zero (hostNetwork, field 11) is dropped,
    as Go's JSON omits it."""
    spec_raw = (b"\x0a\x07" b"\x0a\x01v" b"\x12\x02" b"\x12\x00"   # volumes [{name v, {emptyDir {}}}]
                b"\x58\x00"                                        # hostNetwork false
                b"\xa8\x01\x00")                                    # automountServiceAccountToken false
    raw = b"\x12" + bytes([len(spec_raw)]) + spec_raw
    body = b"k8s\x00" b"\x0a\x09" b"\x0a\x02v1" b"\x12\x03Pod" b"\x12" + bytes([len(raw)]) + raw
    pod = protobuf.decode(body)
    assert pod["spec"] == {"volumes": [{"name": "v", "emptyDir": {}}], "automountServiceAccountToken": False}
    back = protobuf_encode.encode(pod)
    assert b"\x0a\x07\x0a\x01v\x12\x02\x12\x00" in back and protobuf.decode(back) == pod


def test_watch_frame_is_length_prefixed() -> None:
    frame = protobuf_encode.watch_frame("ADDED", SMALL_POD)
    event = b"\x0a\x05ADDED" b"\x12" + bytes([len(SMALL_POD_BYTES) + 2]) + b"\x0a" + bytes([len(SMALL_POD_BYTES)])
    event += SMALL_POD_BYTES
    assert frame == len(event).to_bytes(4, "big") + event
    status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "code": 410,
              "reason": "Expired", "message": "too old resource version: 1 (5)"}
    frame = protobuf_encode.watch_frame("ERROR", status)
    inner = {n: v for n, _, v in protobuf.fields(frame[4:])}
    raw = {n: v for n, _, v in protobuf.fields(bytes(inner[2]))}[1]
    assert bytes(inner[1]) == b"ERROR" and b"\x30\x9a\x03" in bytes(raw)  # code 410 = varint 9a 03
    assert protobuf.decode(bytes(raw)) == status


def _fixtures() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            if x.get("kind") in ("Pod", "Node") and isinstance(x.get("metadata"), dict):
                found.append({"apiVersion": "v1", **x})
                return
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    for path in sorted(glob.glob(str(REPO / "tests" / "**" / "*.yaml"), recursive=True)):
        try:
            docs = list(yaml.load_all(Path(path).read_text(), Loader=yaml.CSafeLoader))
        except yaml.YAMLError:
            continue
        for doc in docs:
            walk(doc)
    return found


@pytest.mark.slow
def test_every_pod_and_node_fixture_round_trips() -> None:
    """Every Pod and Node in the test fixtures (scenarios, fidelity cases) is covered by the
    table, and decoding its encoding gives the object back."""
    objs = _fixtures()
    assert len(objs) > 1000
    for obj in objs:
        assert protobuf.decode(protobuf_encode.encode(obj)) == obj, obj["metadata"].get("name")
    pods = {"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "7"},
            "items": [o for o in objs if o["kind"] == "Pod"][:50]}
    assert protobuf_encode.encode(pods).startswith(b"k8s\x00\x0a\x0d\x0a\x02v1\x12\x07PodList")


def test_negotiation_falls_back_or_refuses_as_upstream() -> None:
    # a member outside apps/v1 generated.proto's DeploymentStatus: no protobuf form
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
              "status": {"replicas": 1, "unknownField": 1}}
    both = "application/vnd.kubernetes.protobuf, application/json"
    assert negotiate.respond(both, SMALL_POD).media_type == protobuf.MEDIA_TYPE
    assert negotiate.respond(both, deploy).media_type == "application/json"
    with pytest.raises(ApiError) as err:
        negotiate.respond("application/vnd.kubernetes.protobuf", deploy)
    assert err.value.code == 406 and err.value.reason == "NotAcceptable"
    assert negotiate.accepts_json("") and negotiate.accepts_json("*/*")
    assert not negotiate.accepts_json("application/vnd.kubernetes.protobuf")
    assert protobuf_encode.streamable("v1", "Pod") and protobuf_encode.streamable("v1", "Node")
    assert protobuf_encode.streamable("apps/v1", "Deployment") and protobuf_encode.streamable("apps/v1", "StatefulSet")
    assert not protobuf_encode.streamable("scheduling.x-k8s.io/v1alpha1", "PodGroup")  # a CRD: JSON only


def test_unknown_kind_body_is_415() -> None:
    body = b"k8s\x00" b"\x0a\x12" b"\x0a\x0aexample/v1" b"\x12\x04Thin" b"\x12\x00"
    with pytest.raises(ApiError) as err:
        protobuf.decode(body)
    assert err.value.code == 415 and "protobuf encoding of kind 'Thin' is not supported" in str(err.value.status())
