"""List semantics informers and tools rely on, against a real ``kubesched serve``: kubectl's
``--chunk-size`` paging (limit/continue) over many pods, continue pages consistent with the
first page while the collection changes, ``resourceVersionMatch=Exact``, and
``PartialObjectMetadataList`` (the Accept header client-go's metadata client sends, from
``k8s.io/client-go/metadata/metadata.go``).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse

import pytest
from serve_harness import Server, eventually, pod_manifest

pytestmark = pytest.mark.slow

PARTIAL_LIST = ("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
                "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json")


def _create(server: Server, ns: str, names: list[str]) -> None:
    server.kubectl("create", "namespace", ns, check=False)
    for n in names:
        assert server.request("POST", f"/api/v1/namespaces/{ns}/pods", pod_manifest(n))[0] == 201


def test_kubectl_chunk_size_pages_through_every_pod(server: Server) -> None:
    names = [f"chunk-{i:02d}" for i in range(9)]
    _create(server, "chunks", names)
    out = server.kubectl("get", "pods", "-n", "chunks", "--chunk-size=2", "-o", "name", "-v=6")
    assert out.stdout.split() == [f"pod/{n}" for n in names]
    # kubectl really paged: 5 requests with limit=2, 4 of them with a continue token
    gets = [line for line in out.stderr.splitlines() if "GET " in line and "/namespaces/chunks/pods" in line]
    assert len([g for g in gets if "limit=2" in g]) == 5, gets
    assert len([g for g in gets if "continue=" in g]) == 4, gets


def test_continue_is_consistent_while_the_collection_changes(server: Server) -> None:
    names = [f"snap-{i}" for i in range(6)]
    _create(server, "snap", names)
    status, first = server.request("GET", "/api/v1/namespaces/snap/pods?limit=2")
    assert status == 200 and [p["metadata"]["name"] for p in first["items"]] == names[:2]
    rv = first["metadata"]["resourceVersion"]
    server.kubectl("delete", "pod", "snap-3", "-n", "snap", "--grace-period=0", "--force")
    assert server.request("POST", "/api/v1/namespaces/snap/pods", pod_manifest("snap-25"))[0] == 201
    seen, token = [], first["metadata"]["continue"]
    while token:
        status, page = server.request("GET", "/api/v1/namespaces/snap/pods?limit=2&continue="
                                      + urllib.parse.quote(token))
        assert status == 200 and page["metadata"]["resourceVersion"] == rv
        seen += [p["metadata"]["name"] for p in page["items"]]
        token = page["metadata"].get("continue")
    assert seen == names[2:]  # snap-3 still there, snap-25 not yet: the first page's snapshot
    status, exact = server.request("GET", f"/api/v1/namespaces/snap/pods?resourceVersion={rv}"
                                          "&resourceVersionMatch=Exact")
    assert status == 200 and [p["metadata"]["name"] for p in exact["items"]] == names
    assert exact["metadata"]["resourceVersion"] == rv


def test_partial_object_metadata(server: Server) -> None:
    _create(server, "meta", ["m1", "m2"])
    status, lst = server.request("GET", "/api/v1/namespaces/meta/pods", headers={"Accept": PARTIAL_LIST})
    assert status == 200
    assert (lst["kind"], lst["apiVersion"]) == ("PartialObjectMetadataList", "meta.k8s.io/v1")
    assert [i["kind"] for i in lst["items"]] == ["PartialObjectMetadata"] * 2
    assert [set(i) for i in lst["items"]] == [{"kind", "apiVersion", "metadata"}] * 2
    assert [i["metadata"]["name"] for i in lst["items"]] == ["m1", "m2"]
    status, one = server.request("GET", "/api/v1/namespaces/meta/pods/m1",
                                 headers={"Accept": PARTIAL_LIST.replace("MetadataList", "Metadata")})
    assert status == 200 and one["kind"] == "PartialObjectMetadata" and "spec" not in one
    status, err = server.request("GET", "/api/v1/namespaces/meta/pods/m1", headers={"Accept": PARTIAL_LIST})
    assert status == 406 and err["reason"] == "NotAcceptable"
    # the official client's metadata-less calls are unchanged
    from kubernetes import client

    names = [p.metadata.name for p in client.CoreV1Api(server.client()).list_namespaced_pod("meta").items]
    assert names == ["m1", "m2"]


def _raw_get(server: Server, path: str, accept: str) -> tuple[str, bytes]:
    import urllib.request

    hdrs, ctx = server._auth()
    req = urllib.request.Request(server.url + path, headers={**hdrs, "Accept": accept})
    with urllib.request.urlopen(req, timeout=30, context=ctx) as resp:
        return resp.headers.get("Content-Type", ""), resp.read()


def test_protobuf_responses_when_asked_first(server: Server) -> None:
    """client-go's default Accept; a Lease, a Pod and a Deployment with its status (built-in
    kinds) come back as protobuf that decodes to the JSON form; a PodGroup (a custom resource,
    which has no protobuf form) comes back as JSON, or 406 NotAcceptable when the client
    accepts protobuf only."""
    from kubesched.server.apiserver.protobuf import decode as protobuf

    accept = "application/vnd.kubernetes.protobuf, application/json"
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "pb"},
             "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15}}
    assert server.request("POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases", lease)[0] == 201
    ctype, body = _raw_get(server, "/apis/coordination.k8s.io/v1/namespaces/default/leases/pb", accept)
    assert ctype == "application/vnd.kubernetes.protobuf" and body.startswith(b"k8s\x00")
    _, as_json = server.request("GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/pb")
    assert protobuf.decode(body) == as_json
    ctype, body = _raw_get(server, "/apis/coordination.k8s.io/v1/namespaces/default/leases", accept)
    assert ctype == "application/vnd.kubernetes.protobuf" and b"\tLeaseList" in body[:60]
    assert server.request("POST", "/api/v1/namespaces/default/pods", pod_manifest("pb-pod"))[0] == 201
    ctype, body = _raw_get(server, "/api/v1/namespaces/default/pods/pb-pod", accept)
    _, as_json = server.request("GET", "/api/v1/namespaces/default/pods/pb-pod")
    assert ctype == "application/vnd.kubernetes.protobuf" and protobuf.decode(body) == as_json
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "pb-deploy"},
              "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "pb"}},
                       "template": {"metadata": {"labels": {"app": "pb"}},
                                    "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}
    assert server.request("POST", "/apis/apps/v1/namespaces/default/deployments", deploy)[0] == 201
    path = "/apis/apps/v1/namespaces/default/deployments/pb-deploy"
    eventually(lambda: server.request("GET", path)[1].get("status") or None)

    def same_as_json() -> bool:
        ctype, body = _raw_get(server, path, accept)
        _, as_json = server.request("GET", path)
        # DeploymentStatus's counts are omitempty: Go's JSON (and protobuf's zero values) leave out a 0
        as_go = {**as_json, "status": {k: v for k, v in as_json["status"].items() if v != 0}}
        return ctype == "application/vnd.kubernetes.protobuf" and protobuf.decode(body) == as_go

    eventually(same_as_json)
    group = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": "pb-pg"},
             "spec": {"minMember": 1}}
    path = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups"
    assert server.request("POST", path, group)[0] == 201
    path += "/pb-pg"
    ctype, body = _raw_get(server, path, accept)
    assert ctype == "application/json" and body.startswith(b"{")
    with pytest.raises(urllib.error.HTTPError) as err:
        _raw_get(server, path, "application/vnd.kubernetes.protobuf")
    assert err.value.code == 406
    status = json.loads(err.value.read())
    assert status["reason"] == "NotAcceptable"
    assert status["message"] == "only the following media types are accepted: application/json, application/yaml"


def test_kubectl_describe_decodes_our_protobuf(server: Server) -> None:
    """kubectl describe uses client-go's typed clients (Accept: protobuf first): a real
    client-go decoder reads the ConfigMap, Lease and Namespace this server encodes."""
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "described"},
             "spec": {"holderIdentity": "holder-x", "leaseDurationSeconds": 15,
                      "renewTime": "2024-01-02T03:04:05.250000Z"}}
    assert server.request("POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases", lease)[0] == 201
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "described"}, "data": {"key": "value-1"}}
    assert server.request("POST", "/api/v1/namespaces/default/configmaps", cm)[0] == 201
    out = server.kubectl("describe", "lease", "described", "-v=8")
    assert "Content-Type: application/vnd.kubernetes.protobuf" in out.stderr
    assert "holder-x" in out.stdout and "2024-01-02T03:04:05.250000Z" in out.stdout
    out = server.kubectl("describe", "configmap", "described", "-v=8")
    assert "Content-Type: application/vnd.kubernetes.protobuf" in out.stderr
    assert "value-1" in out.stdout
    out = server.kubectl("describe", "namespace", "default")
    assert "Active" in out.stdout
