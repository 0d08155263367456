"""Protobuf request bodies (what client-go >= 1.32 typed clients send), decoded to JSON.

The encoder below writes the wire format the way gogo-protobuf does for k8s.io/api
(every non-pointer field, zero values included), with field numbers from upstream's
``generated.proto``."""

from __future__ import annotations

import pytest

from kubesched.server.apiserver.protobuf import decode as protobuf
from kubesched.server.apiserver.errors import ApiError


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def f_bytes(num: int, data: bytes) -> bytes:
    return varint(num << 3 | 2) + varint(len(data)) + data


def f_str(num: int, s: str) -> bytes:
    return f_bytes(num, s.encode())


def f_int(num: int, n: int) -> bytes:
    return varint(num << 3) + varint(n)


def entry(k: str, v: bytes) -> bytes:
    return f_str(1, k) + f_bytes(2, v)


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = f_str(1, api_version) + f_str(2, kind)
    return protobuf.MAGIC + f_bytes(1, type_meta) + f_bytes(2, raw) + f_str(3, "") + f_str(4, "")


def object_meta(name: str, labels: dict[str, str] | None = None) -> bytes:
    out = f_str(1, name) + f_str(2, "") + f_str(3, "") + f_str(4, "") + f_str(5, "") + f_str(6, "") + f_int(7, 0)
    out += f_bytes(8, b"")  # creationTimestamp: an empty Time
    for k, v in (labels or {}).items():
        out += f_bytes(11, f_str(1, k) + f_str(2, v))
    return out


def test_namespace() -> None:
    raw = f_bytes(1, object_meta("team")) + f_bytes(2, b"") + f_bytes(3, f_str(1, ""))
    assert protobuf.decode(envelope("v1", "Namespace", raw)) == {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}, "spec": {}, "status": {}}


def test_deployment_as_kubectl_create_deployment_sends_it() -> None:
    quantity = f_str(1, "250m")
    container = (f_str(1, "nginx") + f_str(2, "nginx:1.27") + f_bytes(6, f_str(1, "") + f_int(2, 0) + f_int(3, 80)
                 + f_str(4, "") + f_str(5, "")) + f_bytes(8, f_bytes(2, entry("cpu", quantity))) + f_str(13, "")
                 + f_str(20, "") + f_str(14, "") + f_int(16, 0))
    pod_spec = f_bytes(2, container) + f_str(3, "") + f_str(6, "") + f_str(19, "")
    template = f_bytes(1, object_meta("", {"app": "web"})) + f_bytes(2, pod_spec)
    selector = f_bytes(1, f_str(1, "app") + f_str(2, "web"))
    strategy = f_str(1, "")
    spec = f_int(1, 3) + f_bytes(2, selector) + f_bytes(3, template) + f_bytes(4, strategy) + f_int(5, 0) + f_int(7, 0)
    status = f_int(1, 0) + f_int(2, 0)
    obj = protobuf.decode(envelope("apps/v1", "Deployment", f_bytes(1, object_meta("web", {"app": "web"}))
                                   + f_bytes(2, spec) + f_bytes(3, status)))
    assert obj == {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "strategy": {},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27",
                                                       "ports": [{"containerPort": 80}],
                                                       "resources": {"requests": {"cpu": "250m"}}}]}}},
        "status": {}}


def test_eviction_keeps_explicit_zero_grace_period() -> None:
    opts = f_int(1, 0) + f_bytes(2, b"") + f_str(4, "Background")
    obj = protobuf.decode(envelope("policy/v1", "Eviction", f_bytes(1, object_meta("p")) + f_bytes(2, opts)))
    assert obj["deleteOptions"] == {"gracePeriodSeconds": 0, "preconditions": {}, "propagationPolicy": "Background"}


def test_negative_int32() -> None:
    obj = protobuf.decode(envelope("scheduling.k8s.io/v1", "PriorityClass",
                                   f_bytes(1, object_meta("neg")) + f_int(2, -5) + f_int(3, 1)))
    assert obj["value"] == -5 and obj["globalDefault"] is True


@pytest.mark.parametrize("body", [
    b"not protobuf",
    envelope("autoscaling/v2", "HorizontalPodAutoscaler", f_bytes(1, object_meta("p"))),  # a kind outside the table
    envelope("v1", "Namespace", f_bytes(1, object_meta("n")) + f_str(9, "unexpected data")),
    protobuf.MAGIC + b"\x0a\xff",  # truncated
], ids=["no-envelope", "unknown-kind", "unknown-field-with-data", "truncated"])
def test_unsupported_is_415(body: bytes) -> None:
    with pytest.raises(ApiError) as info:
        protobuf.decode(body)
    assert info.value.code == 415
