"""Hostile requests against a real ``kubesched serve`` get kube-apiserver's 4xx ``Status``
answers, and change nothing they should not.

Expected answers, and where they come from upstream:

* 405 for a method a path does not serve: go-restful's router error wrapped by
  ``apiserver/pkg/server/handler.go`` (``NewGenericServerResponse``: reason
  MethodNotAllowed, cause ``405: Method Not Allowed``); the verbs of each path are those
  ``apiserver/pkg/endpoints/installer.go`` registers (``/api/v1/pods`` across namespaces:
  list and watch only);
* ``dryRun``: ``apimachinery/pkg/apis/meta/v1/validation.ValidateDryRun`` through the
  create handler's ``NewInvalid(CreateOptions.meta.k8s.io)`` (a 422), the bad value
  printed by ``field.Error.ErrorBody`` as Go's ``%#v`` of a ``[]string``;
* a list from a future resourceVersion: ``storage.NewTooLargeResourceVersionError`` after
  the watch cache's 3 s ``blockTimeout``, retry after 1 s (``cacher/watch_cache.go``); a
  streaming list (``sendInitialEvents``) gets the same Status as an ERROR event
  (``cacher_test`` "allowWatchBookmarks=true, sendInitialEvents=true");
* bodies: Go's JSON has no ``NaN``/``Infinity`` and fails on float64 overflow; a
  DeleteOptions field of the wrong type is a decode error (400).
"""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest
from serve_harness import Server, pod_manifest

pytestmark = pytest.mark.slow

NS = "/api/v1/namespaces/default"


def call(server: Server, method: str, path: str, body: bytes | None = None,
         content_type: str = "application/json") -> tuple[int, dict[str, str], Any]:
    host, port = server.url.split("//")[1].rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request(method, path, body=body, headers={"Content-Type": content_type} if body is not None else {})
        resp = conn.getresponse()
        raw = resp.read()
        headers = {k.lower(): v for k, v in resp.getheaders()}
    finally:
        conn.close()
    try:
        return resp.status, headers, json.loads(raw)
    except ValueError:
        return resp.status, headers, raw.decode(errors="replace")


def is_status(body: Any, code: int, reason: str) -> bool:
    return isinstance(body, dict) and body.get("kind") == "Status" and body.get("code") == code \
        and body.get("reason") == reason and body.get("status") == "Failure"


@pytest.fixture(scope="module")
def pod(server: Server) -> str:
    code, _ = server.request("POST", f"{NS}/pods", pod_manifest("keeper"))
    assert code == 201
    return "keeper"


@pytest.mark.parametrize("method,path", [
    ("OPTIONS", f"{NS}/pods"), ("TRACE", "/api/v1/nodes"), ("FOO", f"{NS}/pods/keeper"),
    ("DELETE", "/api/v1/pods"), ("POST", "/api/v1/pods"), ("PUT", "/api/v1/pods"),
    ("DELETE", "/apis/"), ("DELETE", "/apis"), ("DELETE", "/api"), ("POST", "/apis/apps/v1"),
    ("DELETE", "/apis/apps"), ("POST", "/version"), ("DELETE", "/openapi/v2"),
    ("DELETE", f"{NS}/pods/keeper/status"), ("DELETE", f"{NS}/pods/keeper/binding"),
    ("GET", f"{NS}/pods/keeper/binding"), ("GET", f"{NS}/pods/keeper/eviction"),
    ("POST", f"{NS}/pods/keeper"), ("DELETE", "/api/v1/namespaces"),
], ids=lambda v: v.replace("/", "_") if isinstance(v, str) and "/" in v else v)
def test_unserved_methods_are_405_status_and_change_nothing(server: Server, pod: str, method: str,
                                                            path: str) -> None:
    code, _, body = call(server, method, path)
    assert code == 405 and is_status(body, 405, "MethodNotAllowed"), body
    assert body["message"] == "the server does not allow this method on the requested resource"
    assert body["details"]["causes"] == [{"reason": "UnexpectedServerResponse", "message": "405: Method Not Allowed"}]
    assert server.request("GET", f"{NS}/pods/{pod}")[0] == 200
    assert server.request("GET", "/api/v1/namespaces/kube-system")[0] == 200


def test_namespaced_deletecollection_stays(server: Server) -> None:
    """installer.go registers DELETECOLLECTION on /namespaces/{ns}/pods: it still deletes there only."""
    for name in ("gone-1", "gone-2"):
        assert server.request("POST", "/api/v1/namespaces/scratch/pods", pod_manifest(name))[0] == 201
    code, body = server.request("DELETE", "/api/v1/namespaces/scratch/pods")
    assert code == 200 and {i["metadata"]["name"] for i in body["items"]} == {"gone-1", "gone-2"}
    assert server.request("GET", "/api/v1/namespaces/scratch/pods")[1]["items"] == []


@pytest.mark.parametrize("method,path,kind", [
    ("POST", f"{NS}/pods?dryRun=Bogus", "CreateOptions"),
    ("PUT", f"{NS}/pods/keeper?dryRun=Bogus", "UpdateOptions"),
    ("PATCH", f"{NS}/pods/keeper?dryRun=true", "PatchOptions"),
    ("DELETE", f"{NS}/pods/keeper?dryRun=Bogus", "DeleteOptions"),
])
def test_dry_run_accepts_only_all(server: Server, pod: str, method: str, path: str, kind: str) -> None:
    body = json.dumps(pod_manifest("dry") if method == "POST" else {"metadata": {"labels": {"x": "y"}}}).encode()
    ct = "application/merge-patch+json" if method == "PATCH" else "application/json"
    code, _, status = call(server, method, path, body if method != "DELETE" else None, ct)
    value = path.rsplit("=", 1)[1]
    message = f'Unsupported value: []string{{"{value}"}}: supported values: "All"'
    assert code == 422 and is_status(status, 422, "Invalid"), status
    assert status["message"] == f'{kind}.meta.k8s.io "" is invalid: dryRun: {message}'
    assert status["details"]["causes"] == [{"reason": "FieldValueNotSupported", "message": message, "field": "dryRun"}]
    assert server.request("GET", f"{NS}/pods/dry")[0] == 404
    assert server.request("GET", f"{NS}/pods/{pod}")[0] == 200


def test_dry_run_all_writes_nothing(server: Server, pod: str) -> None:
    assert server.request("POST", f"{NS}/pods?dryRun=All", pod_manifest("dry-all"))[0] == 201
    assert server.request("GET", f"{NS}/pods/dry-all")[0] == 404
    code, _, _ = call(server, "POST", f"{NS}/pods/{pod}/eviction?dryRun=All",
                      json.dumps({"apiVersion": "policy/v1", "kind": "Eviction"}).encode())
    assert code == 201 and server.request("GET", f"{NS}/pods/{pod}")[0] == 200


def test_list_from_a_future_resource_version_is_504_too_large(server: Server) -> None:
    current = int(server.request("GET", f"{NS}/pods")[1]["metadata"]["resourceVersion"])
    future = current + 1_000_000
    code, headers, body = call(server, "GET", f"{NS}/pods?resourceVersion={future}")
    assert code == 504 and is_status(body, 504, "Timeout"), body
    assert body["message"].startswith(f"Timeout: Too large resource version: {future}, current: ")
    assert body["details"]["causes"] == [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]
    assert body["details"]["retryAfterSeconds"] == 1 and headers["retry-after"] == "1"
    assert call(server, "GET", f"{NS}/pods?resourceVersion={current}")[0] == 200
    assert call(server, "GET", f"{NS}/pods?resourceVersion=abc")[0] == 400


def test_streaming_list_from_a_future_resource_version_is_an_error_event(server: Server) -> None:
    current = int(server.request("GET", f"{NS}/pods")[1]["metadata"]["resourceVersion"])
    events = list(server.stream(f"{NS}/pods?watch=true&sendInitialEvents=true&allowWatchBookmarks=true"
                                f"&resourceVersionMatch=NotOlderThan&resourceVersion={current + 1000}"))
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    assert is_status(events[0]["object"], 504, "Timeout")
    # a plain watch from a future revision is admitted and waits (the cacher does not block it)
    assert list(server.stream(f"{NS}/pods?watch=true&resourceVersion={current + 1000}&timeoutSeconds=1")) == []


DEEP = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"extra":' + b"[" * 5000 + b"]" * 5000 + b"}"


@pytest.mark.parametrize("path,raw,content_type,words", [
    (f"{NS}/configmaps", DEEP, "application/json", "exceeded max depth"),
    (f"{NS}/configmaps", b"a:\n" + b"".join(b" " * (2 * i) + b"- \n" for i in range(1, 400)), "application/yaml",
     "exceeded max depth"),
    (f"{NS}/configmaps", b"x: [" * 300 + b"]" * 300, "application/yaml", "exceeded max depth"),
    (f"{NS}/services", b'{"metadata":{"name":"s"},"spec":Infinity}', "application/json", "invalid character 'I'"),
    (f"{NS}/services", b'{"metadata":{"name":"s"},"spec":{"x":NaN}}', "application/json", "invalid character 'N'"),
    (f"{NS}/services", b'{"metadata":{"name":"s"},"spec":{"x":1e999}}', "application/json", "out of range"),
    (f"{NS}/services", b'{"metadata":{"name":"s"},"spec":{"x":' + b"9" * 400 + b"}}", "application/json",
     "out of range"),
    (f"{NS}/services", b"metadata: {name: s}\nspec: {x: .inf}\n", "application/yaml", "unsupported value"),
    (f"{NS}/configmaps", b'a: &a ["x","x","x","x","x","x","x","x","x","x"]\n' + b"".join(
        f'{c}: &{c} [{",".join(["*" + p] * 10)}]\n'.encode() for p, c in zip("abcdefgh", "bcdefghi")),
     "application/yaml", "excessive aliasing"),
    (f"{NS}/pods/keeper/eviction", b'{"apiVersion":"policy/v1","kind":"Eviction","deleteOptions":"x"}',
     "application/json", "Eviction.deleteOptions"),
    (f"{NS}/pods/keeper/binding", b'{"target":"node-01"}', "application/json", "Binding.target"),
], ids=["json-5000-deep", "yaml-block-400-deep", "yaml-flow-300-deep", "infinity", "nan", "1e999", "9x400",
        "yaml-inf", "yaml-billion-laughs", "eviction-deleteOptions-string", "binding-target-string"])
def test_malformed_bodies_are_400(server: Server, pod: str, path: str, raw: bytes, content_type: str,
                                  words: str) -> None:
    code, _, body = call(server, "POST", path, raw, content_type)
    assert code == 400 and is_status(body, 400, "BadRequest"), body
    assert words in body["message"], body["message"]
    assert server.request("GET", f"{NS}/pods/{pod}")[0] == 200


def test_delete_options_of_the_wrong_type_are_400(server: Server, pod: str) -> None:
    for options, field in (({"gracePeriodSeconds": "soon"}, "gracePeriodSeconds"),
                           ({"preconditions": []}, "preconditions"), ({"dryRun": "All"}, "dryRun"),
                           ({"propagationPolicy": 5}, "propagationPolicy")):
        code, _, body = call(server, "DELETE", f"{NS}/pods/{pod}", json.dumps(options).encode())
        assert code == 400 and f"DeleteOptions.{field}" in body["message"], body
    assert server.request("GET", f"{NS}/pods/{pod}")[0] == 200


def test_plain_json_values_within_bounds_are_kept(server: Server) -> None:
    nested: Any = "leaf"
    for _ in range(40):
        nested = {"n": [nested]}
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kept"}, "data": {"a": "\ud800"},
           "extra": {"deep": nested, "big": 2**70, "small": -(2**63)}}
    raw = json.dumps(obj).encode()  # ensure_ascii: the lone surrogate travels as \\ud800
    code, _, body = call(server, "POST", f"{NS}/configmaps", raw)
    assert code == 201, body
    stored = server.request("GET", f"{NS}/configmaps/kept")[1]
    assert stored["data"] == {"a": "\ufffd"}  # as Go decodes an unpaired surrogate
    assert stored["extra"]["big"] == float(2**70) and stored["extra"]["small"] == -(2**63)
    depth, cur = 0, stored["extra"]["deep"]
    while isinstance(cur, dict):
        cur, depth = cur["n"][0], depth + 1
    assert (depth, cur) == (40, "leaf")
    yaml_body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: when\n  annotations:\n    at: 2020-01-01\n"
    assert call(server, "POST", f"{NS}/configmaps", yaml_body, "application/yaml")[0] == 201
    assert server.request("GET", f"{NS}/configmaps/when")[1]["metadata"]["annotations"] == {"at": "2020-01-01"}


def test_a_grace_period_beyond_any_date_is_capped(server: Server) -> None:
    """Go wraps now + grace*1s in int64 nanoseconds; we cap the period at 2**31-1 s."""
    bound = pod_manifest("forever")
    bound["spec"]["nodeName"] = "node-01"
    assert server.request("POST", f"{NS}/pods", bound)[0] == 201
    code, _, body = call(server, "DELETE", f"{NS}/pods/forever?gracePeriodSeconds=9223372036854775807")
    assert code == 200 and body["metadata"]["deletionGracePeriodSeconds"] == 2**31 - 1, body
    assert server.request("DELETE", f"{NS}/pods/forever?gracePeriodSeconds=0")[0] == 200


@pytest.mark.parametrize("query,field,message", [
    ("resourceVersionMatch=Exact", "resourceVersionMatch",
     "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"),
    ("resourceVersion=1&resourceVersionMatch=Bogus", "resourceVersionMatch",
     'Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""'),
    ("resourceVersion=0&resourceVersionMatch=Exact", "resourceVersionMatch",
     'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'),
    ("sendInitialEvents=true", "sendInitialEvents", "Forbidden: sendInitialEvents is forbidden for list"),
    ("watch=true&sendInitialEvents=true", "resourceVersionMatch",
     "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"),
    ("watch=true&resourceVersionMatch=NotOlderThan", "resourceVersionMatch",
     "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"),
], ids=["match-without-rv", "match-bogus", "exact-rv-0", "list-initial-events", "watch-initial-without-match",
        "watch-match-without-initial"])
def test_list_options_as_validate_list_options(server: Server, query: str, field: str, message: str) -> None:
    """apimachinery/pkg/apis/meta/internalversion/validation.ValidateListOptions, through the
    list handler's NewInvalid(ListOptions.meta.k8s.io)."""
    code, _, body = call(server, "GET", f"{NS}/pods?{query}")
    assert code == 422 and is_status(body, 422, "Invalid"), body
    assert body["message"] == f'ListOptions.meta.k8s.io "" is invalid: {field}: {message}'
    reason = "FieldValueForbidden" if message.startswith("Forbidden") else "FieldValueNotSupported"
    assert body["details"]["causes"] == [{"reason": reason, "field": field, "message": message}]
