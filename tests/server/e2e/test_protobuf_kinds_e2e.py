"""Protobuf for the built-in kinds beyond pods and nodes, against a real ``kubesched serve``
and the real kubectl, as kube-apiserver serves protobuf for every built-in kind: a
StatefulSet POSTed as protobuf and read back (also by ``kubectl describe``, whose typed
client decodes it with client-go), a ResourceSlice read and watched as protobuf, and
a Job and a Service that kubectl creates, read back as protobuf. Field numbers are
k8s.io/api v0.34.1 ``generated.proto``'s; the bytes of the StatefulSet are checked by hand
in ``tests/server/apiserver/test_protobuf_kinds.py``."""

from __future__ import annotations

import re
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
from serve_harness import API_ONLY, Server

from kubesched.server.apiserver.protobuf import decode as protobuf
from kubesched.server.apiserver.protobuf import encode as protobuf_encode

pytestmark = pytest.mark.slow
PB = "application/vnd.kubernetes.protobuf"
ACCEPT = f"{PB}, application/json"


def _get(server: Server, path: str) -> tuple[str, bytes]:
    hdrs, ctx = server._auth()
    req = urllib.request.Request(server.url + path, headers={**hdrs, "Accept": ACCEPT})
    with urllib.request.urlopen(req, timeout=30, context=ctx) as resp:
        return resp.headers.get("Content-Type", ""), resp.read()


def _watch(server: Server, path: str) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    hdrs, ctx = server._auth()
    req = urllib.request.Request(server.url + path, headers={**hdrs, "Accept": ACCEPT})
    events: list[tuple[str, dict[str, Any]]] = []
    with urllib.request.urlopen(req, timeout=30, context=ctx) as resp:
        ctype = resp.headers.get("Content-Type", "")
        while header := resp.read(4):
            frame = resp.read(int.from_bytes(header, "big"))
            fields = {num: value for num, _, value in protobuf.fields(frame)}
            raw = {num: value for num, _, value in protobuf.fields(bytes(fields[2]))}[1]
            events.append((bytes(fields[1]).decode(), protobuf.decode(bytes(raw))))
    return ctype, events


def test_statefulset_posted_and_read_as_protobuf(spawn: Callable[..., Server]) -> None:
    server = spawn(*API_ONLY)
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
           "spec": {"replicas": 2, "serviceName": "web", "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                                 "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}}
    path = "/apis/apps/v1/namespaces/default/statefulsets"
    status, created = server.request("POST", path, raw=protobuf_encode.encode(sts), content_type=PB)
    assert status == 201, created
    _, as_json = server.request("GET", f"{path}/web")
    assert as_json["spec"]["serviceName"] == "web" and as_json["spec"]["replicas"] == 2
    assert as_json["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    ctype, body = _get(server, f"{path}/web")
    assert ctype == PB and protobuf.decode(body) == as_json
    ctype, body = _get(server, path)
    assert ctype == PB and b"StatefulSetList" in body[:40]
    out = server.kubectl("describe", "statefulset", "web", "-v=8")
    assert f"Content-Type: {PB}" in out.stderr
    assert "nginx:1.27" in out.stdout and re.search(r"^Replicas:\s+2 desired", out.stdout, re.M)


def test_resource_slice_read_and_watched_as_protobuf(spawn: Callable[..., Server]) -> None:
    server = spawn(*API_ONLY)
    slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "gpus"},
              "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
                       "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
                       "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "a100"}},
                                    "capacity": {"memory": {"value": "40Gi"}}}]}}
    path = "/apis/resource.k8s.io/v1/resourceslices"
    assert server.request("POST", path, slice_)[0] == 201
    _, as_json = server.request("GET", f"{path}/gpus")
    ctype, body = _get(server, f"{path}/gpus")
    assert ctype == PB and protobuf.decode(body) == as_json
    ctype, events = _watch(server, f"{path}?watch=1&resourceVersion=0&timeoutSeconds=2")
    assert ctype == f"{PB};stream=watch"
    assert events == [("ADDED", as_json)]


def test_kubectl_created_job_and_service_read_back_as_protobuf(spawn: Callable[..., Server]) -> None:
    """A Job and a Service carry statuses (and a Job spec fields) whose numbers were not
    known before: both now come back in protobuf, also to ``kubectl describe``."""
    server = spawn(*API_ONLY)
    server.kubectl("create", "job", "once", "--image=busybox:1.36")
    server.kubectl("create", "service", "clusterip", "front", "--tcp=80:8080")
    for path in ("/apis/batch/v1/namespaces/default/jobs/once", "/api/v1/namespaces/default/services/front"):
        _, as_json = server.request("GET", path)
        ctype, body = _get(server, path)
        assert ctype == PB and protobuf.decode(body) == as_json
    out = server.kubectl("describe", "job", "once", "-v=8")
    assert f"Content-Type: {PB}" in out.stderr and "busybox:1.36" in out.stdout
