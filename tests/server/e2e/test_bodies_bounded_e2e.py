"""Every way a body enters a real ``kubesched serve`` goes through one bounded reader: a body
that cannot be read is a 400 ``Status`` at once, and nothing a few bytes long makes the
server build something without end. Objects over upstream's size limits are refused as
kube-apiserver refuses them.

Expected answers, and where they come from upstream:

* a YAML alias that names the node containing it: go-yaml v2 (sigs.k8s.io/yaml, which
  kube-apiserver decodes YAML with) ``decode.go`` ``alias``: "anchor '%s' value contains
  itself", wrapped by ``YAMLToJSON`` as "error converting YAML to JSON: yaml: ..." (400);
* protobuf: gogo-protobuf's generated ``Unmarshal`` refuses a field sent with the wrong
  wire type ("proto: wrong wireType"); a decode error is a 400;
* JSON patch: ``apiserver/pkg/endpoints/handlers/patch.go`` refuses more than
  ``maxJSONPatchOperations`` (10000) with ``NewRequestEntityTooLargeError`` ("Request entity
  too large: The allowed maximum operations in a JSON patch is 10000, got N", 413);
  ``JSONPatchMaxCopyBytes`` (3 MiB, ``server/config.go``) is json-patch v4's
  ``AccumulatedCopySizeLimit``: "Unable to complete the copy, the accumulated size increase
  of copy is N, exceeding the limit 3145728" (``errors.go``), answered with 422;
* a ConfigMap: ``pkg/apis/core/validation`` ``ValidateConfigMap`` sums ``len`` of every
  ``data`` and ``binaryData`` value and, past ``MaxSecretSize`` (1 MiB), adds
  ``field.TooLong(field.NewPath(""), cfg, MaxSecretSize)``: apimachinery's ``TooLong`` detail
  is "may not be more than 1048576 bytes" after the type's "Too long", and ``Path.String``
  of a root named "" prints ``[]`` (``field/path.go``), so ``NewInvalid`` says
  ``ConfigMap "big" is invalid: []: Too long: may not be more than 1048576 bytes``.
"""

from __future__ import annotations

import base64
import http.client
import json
from typing import Any

import pytest
from serve_harness import Server

pytestmark = pytest.mark.slow

NS = "/api/v1/namespaces/default"
MIB = 1024 * 1024


def call(server: Server, method: str, path: str, body: bytes, content_type: str,
         timeout: float = 20) -> tuple[int, Any]:
    """One request on its own connection; a server that never answers fails the test."""
    host, port = server.url.split("//")[1].rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        conn.request(method, path, body=body, headers={"Content-Type": content_type})
        resp = conn.getresponse()
        raw = resp.read()
    finally:
        conn.close()
    try:
        return resp.status, json.loads(raw)
    except ValueError:
        return resp.status, raw.decode(errors="replace")


def bad_request(code: int, body: Any) -> str:
    assert code == 400 and isinstance(body, dict) and body.get("kind") == "Status", (code, body)
    assert body["reason"] == "BadRequest" and body["code"] == 400, body
    return str(body["message"])


def configmap(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def ensure(server: Server, obj: dict[str, Any]) -> None:
    assert server.request("POST", f"{NS}/configmaps", obj)[0] in (201, 409)


@pytest.mark.parametrize("method,path,content_type,raw,anchor", [
    ("POST", f"{NS}/pods", "application/yaml", b"&a [*a]", "a"),
    ("POST", f"{NS}/configmaps", "application/yaml",
     b"apiVersion: v1\nkind: ConfigMap\nmetadata: &m {name: selfref, x: *m}\n", "m"),
    ("PATCH", f"{NS}/configmaps/target?fieldManager=t", "application/apply-patch+yaml",
     b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: target}\ndata: &d {a: *d}\n", "d"),
], ids=["seven-bytes-pod", "configmap-metadata", "server-side-apply"])
def test_a_yaml_alias_that_contains_itself_is_400_at_once(server: Server, method: str, path: str,
                                                         content_type: str, raw: bytes, anchor: str) -> None:
    ensure(server, configmap("target", a="1"))
    code, body = call(server, method, path, raw, content_type)
    assert bad_request(code, body) == f"error converting YAML to JSON: yaml: anchor '{anchor}' value contains itself"
    assert server.request("GET", f"{NS}/configmaps/target")[1]["data"] == {"a": "1"}  # unchanged, still serving


def _field(number: int, wire_type: int) -> bytes:
    return bytes([(number << 3) | wire_type])


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _delimited(number: int, payload: bytes) -> bytes:
    return _field(number, 2) + _varint(len(payload)) + payload


def test_a_protobuf_field_of_the_wrong_wire_type_is_400_not_a_huge_allocation(server: Server) -> None:
    # ObjectMeta.name (field 1, a string) sent as the varint 2**36: read as a length, it
    # would ask for 64 GiB
    meta = _field(1, 0) + _varint(1 << 36)
    type_meta = _delimited(1, b"v1") + _delimited(2, b"ConfigMap")
    body = b"k8s\x00" + _delimited(1, type_meta) + _delimited(2, _delimited(1, meta))
    code, answer = call(server, "POST", f"{NS}/configmaps", body, "application/vnd.kubernetes.protobuf")
    assert bad_request(code, answer).startswith("proto: wrong wireType")


def test_json_patch_operations_are_bounded(server: Server) -> None:
    ensure(server, configmap("patched", a="1"))
    ops = [{"op": "test", "path": "/data/a", "value": "1"}] * 10_001
    code, body = call(server, "PATCH", f"{NS}/configmaps/patched", json.dumps(ops).encode(),
                      "application/json-patch+json")
    assert code == 413 and body["reason"] == "RequestEntityTooLarge", body
    assert body["message"] == ("Request entity too large: The allowed maximum operations in a JSON patch is "
                               "10000, got 10001")


def test_json_patch_copies_are_bounded(server: Server) -> None:
    # each copy adds the JSON of a 700,000-character string ("..." quoted: 700,002 bytes);
    # the fifth takes the sum past 3 MiB (4 x 700,002 = 2,800,008 <= 3,145,728 < 3,500,010)
    ensure(server, configmap("copied", a="x" * 700_000))
    ops = [{"op": "copy", "from": "/data/a", "path": f"/data/c{i}"} for i in range(5)]
    code, body = call(server, "PATCH", f"{NS}/configmaps/copied", json.dumps(ops).encode(),
                      "application/json-patch+json")
    assert code == 422 and body["reason"] == "Invalid", body
    assert body["message"] == ("Unable to complete the copy, the accumulated size increase of copy is 3500010, "
                               "exceeding the limit 3145728")
    assert set(server.request("GET", f"{NS}/configmaps/copied")[1]["data"]) == {"a"}


@pytest.mark.parametrize("data,binary", [
    ({"a": "x" * (MIB - 10), "b": "y" * 11}, {}),
    ({"a": "x" * (MIB // 2)}, {"b": base64.b64encode(b"\0" * (MIB // 2 + 1)).decode()}),
    ({"a": "\u00e9" * (MIB // 2 + 1)}, {}),  # two UTF-8 bytes each: Go's len counts bytes
], ids=["data", "data-and-binaryData", "utf8-bytes"])
def test_a_configmap_over_1_mib_is_422_as_upstream(server: Server, data: dict[str, str],
                                                   binary: dict[str, str]) -> None:
    obj = {**configmap("big", **data), "binaryData": binary}
    code, body = call(server, "POST", f"{NS}/configmaps", json.dumps(obj, ensure_ascii=False).encode(),
                      "application/json")
    assert code == 422 and body["reason"] == "Invalid", body
    assert body["message"] == 'ConfigMap "big" is invalid: []: Too long: may not be more than 1048576 bytes'
    assert body["details"]["causes"] == [{"reason": "FieldValueTooLong", "field": "[]",
                                          "message": "Too long: may not be more than 1048576 bytes"}]
    assert server.request("GET", f"{NS}/configmaps/big")[0] == 404


def test_a_configmap_of_exactly_1_mib_is_kept_and_may_not_grow(server: Server) -> None:
    code, _ = call(server, "POST", f"{NS}/configmaps", json.dumps(configmap("full", a="x" * MIB)).encode(),
                   "application/json")
    assert code == 201
    patch = json.dumps({"data": {"b": "y"}}).encode()
    code, body = call(server, "PATCH", f"{NS}/configmaps/full", patch, "application/merge-patch+json")
    assert code == 422 and body["details"]["causes"][0]["field"] == "[]", body


def test_a_continue_token_nested_too_deeply_is_400(server: Server) -> None:
    """A continue token is decoded JSON too; apiserver answers any it cannot read with
    "continue key is not valid: ..." (storage/etcd3 ``decodeContinue``), a 400."""
    token = base64.urlsafe_b64encode(b"[" * 20_000).decode().rstrip("=")
    code, body = server.request("GET", f"{NS}/configmaps?limit=1&continue={token}")
    assert code == 400 and body["reason"] == "BadRequest", body
    assert body["message"].startswith("continue key is not valid")
