"""Protobuf for the kinds client-go's typed clients read, against a real ``kubesched serve``
and the real kubectl: ``kubectl describe pod/node`` (typed clients, Accept protobuf first)
decode the Pod, PodList and Node this server encodes; ``kubectl events --watch`` reads a
protobuf watch stream; a raw watch gets length-prefixed ``WatchEvent`` frames
(``k8s.io/apimachinery/pkg/util/framer``: 4-byte big-endian length) labelled
``application/vnd.kubernetes.protobuf;stream=watch`` as kube-apiserver labels them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import urllib.request
from collections.abc import Callable

import pytest
from serve_harness import Server, eventually, kubectl_path, pod_manifest

from kubesched.server.apiserver.protobuf import decode as protobuf

pytestmark = pytest.mark.slow
PB = "application/vnd.kubernetes.protobuf"


def test_kubectl_describe_pod_and_node_read_protobuf(spawn: Callable[..., Server]) -> None:
    server = spawn("--nodes", "2")
    server.kubectl("create", "-f", "-", input=json.dumps(pod_manifest("described", cpu="250m")))
    node = eventually(lambda: server.request("GET", "/api/v1/namespaces/default/pods/described")[1]
                      .get("spec", {}).get("nodeName"))
    eventually(lambda: server.request("GET", "/api/v1/namespaces/default/pods/described")[1]
               .get("status", {}).get("phase") == "Running")
    out = server.kubectl("describe", "pod", "described", "-v=8")
    assert f"Content-Type: {PB}" in out.stderr
    assert re.search(r"^Status:\s+Running$", out.stdout, re.M) and re.search(rf"^Node:\s+{node}/", out.stdout, re.M)
    assert "registry.example/app:1" in out.stdout and re.search(r"cpu:\s+250m", out.stdout)
    assert re.search(r"PodScheduled\s+True", out.stdout)
    out = server.kubectl("describe", "node", node, "-v=8")
    assert f"Content-Type: {PB}" in out.stderr
    assert "Capacity:" in out.stdout and "described" in out.stdout  # the node's pods: a PodList
    assert "250m (" in out.stdout  # the pod's request in the node's allocated resources


def _raw_watch(server: Server, path: str) -> tuple[str, list[tuple[str, dict[str, object]]]]:
    hdrs, ctx = server._auth()
    req = urllib.request.Request(server.url + path, headers={**hdrs, "Accept": f"{PB}, application/json"})
    events: list[tuple[str, dict[str, object]]] = []
    with urllib.request.urlopen(req, timeout=30, context=ctx) as resp:
        ctype = resp.headers.get("Content-Type", "")
        while header := resp.read(4):
            frame = resp.read(int.from_bytes(header, "big"))
            fields = {num: value for num, _, value in protobuf.fields(frame)}
            raw = {num: value for num, _, value in protobuf.fields(bytes(fields[2]))}[1]
            events.append((bytes(fields[1]).decode(), protobuf.decode(bytes(raw))))
    return ctype, events


def test_raw_watch_is_length_prefixed_watch_events(spawn: Callable[..., Server]) -> None:
    server = spawn("--nodes", "1", "--no-scheduler", "--no-node-agent")
    assert server.request("POST", "/api/v1/namespaces/default/pods", pod_manifest("w1"))[0] == 201
    ctype, events = _raw_watch(server, "/api/v1/namespaces/default/pods?watch=1&resourceVersion=0&timeoutSeconds=2")
    assert ctype == f"{PB};stream=watch"
    assert [(t, o["metadata"]["name"]) for t, o in events] == [("ADDED", "w1")]  # type: ignore[index]
    _, as_json = server.request("GET", "/api/v1/namespaces/default/pods/w1")
    assert events[0][1] == as_json
    ctype, events = _raw_watch(server, "/api/v1/nodes?watch=1&resourceVersion=0&timeoutSeconds=2")
    assert ctype == f"{PB};stream=watch" and events[0][1]["kind"] == "Node"


def test_kubectl_events_watch_reads_a_protobuf_stream(spawn: Callable[..., Server]) -> None:
    server = spawn("--nodes", "1")
    proc = subprocess.Popen([kubectl_path(), "events", "--watch", "-v=8"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                            env={**os.environ, "KUBECONFIG": str(server.kubeconfig)})
    lines: list[str] = []
    errs: list[str] = []
    pumps = [threading.Thread(target=lambda s=s, into=into: into.extend(iter(s.readline, "")), daemon=True)
             for s, into in ((proc.stdout, lines), (proc.stderr, errs))]
    for t in pumps:
        t.start()
    try:
        eventually(lambda: any("stream=watch" in e for e in errs), timeout=60)
        assert server.request("POST", "/api/v1/namespaces/default/pods", pod_manifest("evented"))[0] == 201
        eventually(lambda: any("Scheduled" in ln and "evented" in ln for ln in lines), timeout=60)
        assert any(f"Content-Type: {PB};stream=watch" in e for e in errs)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        for t in pumps:
            t.join(timeout=10)
        for stream in (proc.stdout, proc.stderr):
            assert stream is not None
            stream.close()
