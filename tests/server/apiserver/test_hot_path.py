"""The shortcuts of the API server's hot writes give what the general code gives (issue 16).

Each shortcut is checked against the code it stands in for, on good and bad input:

* :class:`.ApiRequest`'s dict headers against Starlette's ``Headers`` (first header value,
  case-insensitive names), its query parameters (the request's one parse,
  :class:`.requestinfo.Query`) against Starlette's ``QueryParams`` except that a repeated
  parameter is its first value, as Go's ``url.Values.Get``, and :func:`.url_path` against
  ``Request.url.path``;
* the orjson path of :func:`.decoding.decode_json` against the standard library with Go's
  number rules (:func:`.decoding.decode_json_stdlib`): same values, same Python types, same
  error texts;
* :func:`.validate.surely_unique` never hides a duplicate field :func:`.duplicate_fields`
  finds;
* the create shortcut of :func:`.managed.track_update` against its general update path;
* :func:`.strategy.rfc3339`'s cached second against datetime's formatting;
* :func:`.bodies.read_body` without ``wait_for``: the 413, the 408 and the disconnect;
* whole requests through the app's fast path and through Starlette's router (plain
  ``Request``): the same status codes and bodies for good and bad writes.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from starlette.datastructures import Headers, QueryParams
from starlette.requests import ClientDisconnect, Request

from kubesched.server.apiserver import decoding
from kubesched.server.apiserver.http import bodies
from kubesched.server.apiserver.app import build_app
from kubesched.server.apiserver.apply.managed import track_update
from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.authz.requestinfo import Query
from kubesched.server.apiserver.http.fastrequest import ApiRequest, DictHeaders, url_path
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.apiserver.strategies.base import rfc3339
from kubesched.server.apiserver.typedefs import definition_for
from kubesched.server.apiserver.typedefs.validate import duplicate_fields, surely_unique
from kubesched.server.store import Store


def scope(path: str = "/api/v1/namespaces/default/pods", query: bytes = b"",
          headers: list[tuple[bytes, bytes]] | None = None, method: str = "POST") -> dict[str, Any]:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
            "scheme": "http", "server": ("127.0.0.1", 6443), "client": ("127.0.0.1", 5000), "root_path": "",
            "path": path, "raw_path": path.encode(), "query_string": query,
            "headers": headers if headers is not None else [(b"host", b"127.0.0.1:6443")], "state": {}}


# -- headers, query parameters, path ----------------------------------------------------------
HEADER_LISTS = [
    [(b"host", b"h"), (b"accept", b"application/json"), (b"content-type", b"application/json")],
    [(b"accept", b"a1"), (b"accept", b"a2"), (b"x-y", b"")],  # a repeated header: the first value
    [(b"Content-Type", b"text/plain"), (b"user-agent", b"kubectl/v1.34 (linux)")],  # a name not lower-cased
    [(b"warning", b"\xe9t\xe9")],  # latin-1 values
    [],
]


@pytest.mark.parametrize("raw", HEADER_LISTS, ids=["plain", "repeated", "upper-case-name", "latin-1", "none"])
def test_dict_headers_answer_as_starlette_headers(raw: list[tuple[bytes, bytes]]) -> None:
    mine, theirs = DictHeaders(scope(headers=list(raw))), Headers(scope=scope(headers=list(raw)))
    for key in ("accept", "Accept", "ACCEPT", "content-type", "Content-Type", "user-agent", "x-y", "warning",
                "missing"):
        assert mine.get(key) == theirs.get(key), key
        assert mine.get(key, "dflt") == theirs.get(key, "dflt"), key
        assert (key in mine) == (key in theirs), key
        assert mine.getlist(key) == theirs.getlist(key), key
        if key in theirs:
            assert mine[key] == theirs[key]
        else:
            with pytest.raises(KeyError):
                mine[key]
    assert list(mine.items()) == list(theirs.items()) and len(mine) == len(theirs)


@pytest.mark.parametrize("qs", [b"", b"dryRun=All", b"dryRun=All&dryRun=x&fieldManager=m", b"a=&b",
                                b"fieldManager=k%2Fs+x&watch=1", b"labelSelector=app%3Dweb%2Ctier+in+(a)"])
def test_query_answers_as_starlette_query_params_but_with_the_first_value(qs: bytes) -> None:
    mine, theirs = Query(qs), QueryParams(qs)
    for key in ("dryRun", "fieldManager", "a", "b", "watch", "labelSelector", "missing"):
        first = theirs.getlist(key)[0] if key in theirs else None
        assert mine.get(key) == first, key
        assert mine.get(key, "d") == (first if key in theirs else "d"), key
        assert mine.getlist(key) == theirs.getlist(key), key
        assert (key in mine) == (key in theirs), key
    assert mine.multi_items() == theirs.multi_items() and str(mine) == str(theirs)


@pytest.mark.parametrize("path", ["/api/v1/namespaces/default/pods", "/apis/events.k8s.io/v1/namespaces/x/events",
                                  "/api/v1/namespaces/default/pods/a?b", "/api/v1/pods/a#b", "/api/v1/x\\y",
                                  "/api//v1/", "/apis"])
def test_url_path_is_request_url_path(path: str) -> None:
    s = scope(path=path, query=b"watch=1")
    assert url_path(ApiRequest(s, _never, _ignore)) == Request(s).url.path
    req = ApiRequest(s, _never, _ignore)
    assert req.query_params.get("watch") == "1" and req.headers.get("host") == "127.0.0.1:6443"


# -- JSON bodies ------------------------------------------------------------------------------
def _typed(v: Any) -> Any:
    """``v`` with every scalar tagged with its type (1, 1.0 and True differ)."""
    if isinstance(v, dict):
        return {k: _typed(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_typed(x) for x in v]
    return (type(v).__name__, v if v == v else "nan")


def _either(raw: bytes, fn: Any) -> Any:
    try:
        return "ok", _typed(fn(raw))
    except ApiError as exc:
        return "error", exc.code, exc.message


BODIES = [
    b'{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}}',
    b'{"a": 123456789012345678, "b": -123456789012345678, "c": 0, "d": -0, "e": -0.0}',
    b'{"a": 1234567890123456789}', b'{"a": 9223372036854775808}', b'{"a": 99999999999999999999999}',
    b'{"a": 1.5e300, "b": 1e-400, "c": 2.5e-324, "d": 1E+2, "e": 0.1}', b'{"a": 1e309}', b'{"a": -1e999}',
    b'{"a": 0.1234567890123456789}', b'{"a": NaN}', b'{"a": Infinity}', b'[-Infinity]',
    b'{"a": "\\ud800"}', b'{"a": "\\ud83d\\ude00"}', b'{"\\udc00": 1}', b'{"a": "\xed\xa0\x80"}',
    b'{"a": "\\u00e9\\n\\t\\/"}', '{"a": "é😀"}'.encode(), b'\xef\xbb\xbf{"a": 1}', '{"a": 1}'.encode("utf-16"),
    b'{"a": 1, "a": 2, "b": 3}', b' {"a" : [ ] } ', b'{"a": 1,}', b'{"a": 01}', b'{"a": .5}', b'{"a": 1.}',
    b'{"a": "x\x01y"}', b'{"a": tru}', b'{"a": 1} x', b'"text"', b'123', b'null', b'[1, 2.0, true, null]',
    b'{"a": ' + b"[" * 99 + b"]" * 99 + b"}", b'{"a": ' + b"[" * 101 + b"]" * 101 + b"}",
]


@pytest.mark.parametrize("raw", BODIES, ids=[f"b{i}" for i in range(len(BODIES))])
def test_orjson_path_gives_the_standard_librarys_values_and_errors(raw: bytes) -> None:
    def reference(b: bytes) -> Any:
        if decoding.json_depth(b) > decoding.MAX_DEPTH:
            return decoding.decode_json(b)  # the depth error is raised before either decoder runs
        return decoding.decode_json_stdlib(b)

    assert _either(raw, decoding.decode_json) == _either(raw, reference)


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(1 << 70), max_value=1 << 70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(_json_values, st.booleans())
def test_orjson_path_equals_the_standard_library_on_random_json(value: Any, ascii_only: bool) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert _either(raw, decoding.decode_json) == _either(raw, decoding.decode_json_stdlib)


def _objects_text(draw: Any, depth: int = 0) -> str:
    """A JSON text whose objects may repeat keys, spaced in any of JSON's ways."""
    space = draw(st.sampled_from(["", " ", "\n", " \t"]))
    if depth < 3 and draw(st.booleans()):
        keys = draw(st.lists(st.sampled_from(["a", "b", 'c"', "d\\", ":", '":', "e"]), max_size=5))
        members = [json.dumps(k) + space + ":" + space + _objects_text(draw, depth + 1) for k in keys]
        return "{" + space + ("," + space).join(members) + "}"
    if depth < 3 and draw(st.booleans()):
        return "[" + ",".join(_objects_text(draw, depth + 1) for _ in range(draw(st.integers(0, 3)))) + "]"
    return json.dumps(draw(st.sampled_from(["x", '":', 'a\\":', 1, None, '"', "\\"])))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_surely_unique_never_hides_a_duplicate(data: Any) -> None:
    raw = _objects_text(data.draw).encode()
    if surely_unique(raw, json.loads(raw)):
        assert duplicate_fields(raw) == []


@pytest.mark.parametrize("raw,unique", [
    (b'{"a": 1, "b": {"c": [{"d": 1}, {"d": 2}]}}', True),
    (b'{"a":1,"a":2}', False), (b'{"a" : 1, "a": 2}', False), (b'{"a": {"b": 1, "b": 1}}', False),
    (b'{"a": "x\\":", "a": 1}', False), (b'{"a": "\\":"}', False),  # escaped quotes: not judged here
])
def test_surely_unique_cases(raw: bytes, unique: bool) -> None:
    assert surely_unique(raw, json.loads(raw)) is unique
    assert (duplicate_fields(raw) == []) is (unique or raw in (b'{"a": "\\":"}',))


# -- managed fields of a create ---------------------------------------------------------------
OBJECTS = [
    ("Pod", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d", "labels": {"a": "b"},
                                                            "uid": "u", "creationTimestamp": "t"},
             "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}],
                                      "resources": {"requests": {"cpu": "1"}}}],
                      "tolerations": [{"key": "k", "operator": "Exists"}], "nodeSelector": {}},
             "status": {"phase": "Pending"}}),
    ("Event", {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e", "namespace": "d"},
               "regarding": {"kind": "Pod", "name": "p"}, "note": "n", "reason": "Scheduled", "type": "Normal"}),
    ("Service", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "finalizers": ["x", "y"]},
                 "spec": {"ports": [{"port": 80}, {"port": 81, "protocol": "UDP"}], "selector": {"a": "b"}}}),
    ("ConfigMap", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),  # nothing owned
]


@pytest.mark.parametrize("kind,obj", OBJECTS, ids=[k for k, _ in OBJECTS])
@pytest.mark.parametrize("has_status", [True, False])
def test_create_managed_fields_as_the_general_update_path(kind: str, obj: dict[str, Any], has_status: bool) -> None:
    group, version = ("events.k8s.io", "v1") if kind == "Event" else ("", "v1")
    root = definition_for(group, version, kind)
    fast, general = json.loads(json.dumps(obj)), json.loads(json.dumps(obj))
    fast["metadata"]["managedFields"] = general["metadata"]["managedFields"] = [{"manager": "stale"}]
    track_update(None, fast, "kubectl", obj["apiVersion"], "", has_status, "2026-01-01T00:00:00Z", root)
    # the general path from an empty stored object: the same comparison against nothing
    track_update({}, general, "kubectl", obj["apiVersion"], "", has_status, "2026-01-01T00:00:00Z", root)
    if kind == "ConfigMap":  # no field owned: no entry (the general path from {} short-cuts to "unchanged")
        assert "managedFields" not in fast["metadata"]
        return
    assert fast == general
    if kind == "Pod":
        assert fast["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:containers"]['k:{"name":"c"}'][
            "f:ports"]['k:{"containerPort":80,"protocol":"TCP"}'] == {".": {}, "f:containerPort": {}}


# -- timestamps -------------------------------------------------------------------------------
def test_rfc3339_cached_second_is_the_formatted_time() -> None:
    times = [0.0, 0.4, 0.99, 1.0, 1_700_000_000.2, 1_700_000_000.7, 1_700_000_001.0, 1_700_000_000.1, 951_782_400.5]
    for t in times + list(reversed(times)):
        expected = dt.datetime.fromtimestamp(int(t), dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        assert rfc3339(t) == expected
    assert rfc3339(951_782_400.5) == "2000-02-29T00:00:00Z"  # computed by hand: 11,016 days after 1970-01-01


# -- body reading -----------------------------------------------------------------------------
async def _never() -> dict[str, Any]:
    await asyncio.sleep(3600)
    raise AssertionError("unreachable")


async def _ignore(message: Any) -> None:
    return None


def _receiver(messages: list[dict[str, Any]]) -> Any:
    it: Iterator[dict[str, Any]] = iter(messages)

    async def receive() -> dict[str, Any]:
        try:
            return next(it)
        except StopIteration:
            return await _never()

    return receive


def test_read_body_chunks_limit_timeout_and_disconnect() -> None:
    def read(messages: list[dict[str, Any]], limit: int = 100, timeout: float = 30.0,
             headers: list[tuple[bytes, bytes]] | None = None) -> bytes:
        req = ApiRequest(scope(headers=headers or []), _receiver(messages), _ignore)
        return asyncio.run(bodies.read_body(req, limit, timeout))

    assert read([{"type": "http.request", "body": b"abc", "more_body": False}]) == b"abc"
    assert read([{"type": "http.request", "body": b"ab", "more_body": True}, {"type": "http.request", "body": b""},
                 ]) == b"ab"
    assert read([{"type": "http.request", "body": b"a", "more_body": True},
                 {"type": "http.request", "body": b"b", "more_body": True},
                 {"type": "http.request", "body": b"c"}]) == b"abc"
    with pytest.raises(ApiError) as info:
        read([{"type": "http.request", "body": b"x" * 60, "more_body": True},
              {"type": "http.request", "body": b"x" * 60}])
    assert info.value.code == 413
    with pytest.raises(ApiError) as info:
        read([], headers=[(b"content-length", b"101")])
    assert info.value.code == 413
    with pytest.raises(ApiError) as info:  # the rest of the body never comes
        read([{"type": "http.request", "body": b"x", "more_body": True}], timeout=0.05)
    assert info.value.code == 408 and info.value.message == "request body was not received in time"
    with pytest.raises(ClientDisconnect):
        read([{"type": "http.request", "body": b"x", "more_body": True}, {"type": "http.disconnect"}])


# -- whole requests: the fast path and Starlette's router -------------------------------------
def _call(app: Any, method: str, path: str, body: bytes | None, query: bytes = b"",
          headers: list[tuple[bytes, bytes]] | None = None) -> tuple[int, dict[str, str], Any]:
    hdrs = [(b"host", b"127.0.0.1:6443"), (b"content-type", b"application/json"), (b"user-agent", b"t/1")]
    hdrs += headers or []
    if body is not None:
        hdrs.append((b"content-length", str(len(body)).encode()))
    out: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        out.append(message)

    asyncio.run(app(scope(path, query, hdrs, method),
                    _receiver([{"type": "http.request", "body": body or b"", "more_body": False}]), send))
    status = out[0]["status"]
    resp_headers = {k.decode(): v.decode() for k, v in out[0]["headers"] if k != b"content-length"}
    raw = b"".join(m.get("body", b"") for m in out[1:])
    return status, resp_headers, json.loads(raw) if raw else None


def _stable(v: Any) -> Any:
    """A response without what differs by time and identity (uid, timestamps, versions)."""
    if isinstance(v, dict):
        return {k: ("*" if k in ("uid", "creationTimestamp", "resourceVersion", "time") else _stable(x))
                for k, x in v.items()}
    if isinstance(v, list):
        return [_stable(x) for x in v]
    return v


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "NAME"},
       "spec": {"containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "10m"}}}]}}
EVENT = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "NAME"},
         "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "default-scheduler",
         "reportingInstance": "default-scheduler-h", "action": "Binding", "reason": "Scheduled",
         "regarding": {"kind": "Pod", "namespace": "default", "name": "p"}, "note": "n", "type": "Normal"}
BINDING = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "NAME"},
           "target": {"kind": "Node", "name": "n1"}}
PODS, EVENTS = "/api/v1/namespaces/default/pods", "/apis/events.k8s.io/v1/namespaces/default/events"
WRITES: list[tuple[str, str, str, Any, bytes, list[tuple[bytes, bytes]]]] = [
    ("pod", "POST", PODS, POD, b"", []),
    ("pod-dry-run", "POST", PODS, POD, b"dryRun=All", []),
    ("pod-field-manager", "POST", PODS, POD, b"fieldManager=me", []),
    ("pod-bad-field-manager", "POST", PODS, POD, b"fieldManager=" + b"m" * 200, []),
    ("pod-bad-dry-run", "POST", PODS, POD, b"dryRun=Some", []),
    ("pod-unknown-field-warns", "POST", PODS, {**POD, "bogus": 1}, b"", []),
    ("pod-unknown-field-strict", "POST", PODS, {**POD, "bogus": 1}, b"fieldValidation=Strict", []),
    ("pod-duplicate-field", "POST", PODS, "DUP", b"fieldValidation=Strict", []),
    ("pod-invalid", "POST", PODS, {**POD, "spec": {"containers": [{"name": "C_", "image": ""}]}}, b"", []),
    ("pod-bad-quantity", "POST", PODS, {**POD, "spec": {"containers": [
        {"name": "c", "image": "i", "resources": {"requests": {"cpu": "lots"}}}]}}, b"", []),
    ("pod-wrong-kind", "POST", PODS, {**POD, "kind": "Node"}, b"", []),
    ("pod-malformed", "POST", PODS, "{", b"", []),
    ("pod-nan", "POST", PODS, '{"a": NaN}', b"", []),
    ("pod-table", "POST", PODS, POD, b"", [(b"accept", b"application/json;as=Table;v=v1;g=meta.k8s.io")]),
    ("event", "POST", EVENTS, EVENT, b"", []),
    ("event-invalid", "POST", EVENTS, {**EVENT, "reportingController": ""}, b"", []),
    ("binding", "POST", PODS + "/NAME/binding", BINDING, b"", []),
    ("binding-missing-pod", "POST", PODS + "/absent/binding", BINDING, b"", []),
    ("binding-no-target", "POST", PODS + "/NAME/binding", {**BINDING, "target": {}}, b"", []),
    ("unknown-resource", "POST", "/api/v1/namespaces/default/bogus", POD, b"", []),
]


@pytest.fixture
def two_apps(tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    """The whole app (its fast path), and the Starlette app under it reached through the
    router (what served ``/api`` before the fast path), over two stores."""
    stores = [Store(tmp_path / f"db{i}") for i in range(2)]
    apps = []
    for store in stores:
        reg = Registry(store, clock=lambda: 1_700_000_000.0)
        reg.bootstrap()
        reg.create("nodes", None, {"metadata": {"name": "n1"}})
        apps.append(build_app(reg)[0])
    routed = apps[1]
    while hasattr(routed, "app"):  # RequestMetrics → ... → ApiFastPath → Starlette
        routed = routed.app
    yield apps[0], routed
    for store in stores:
        store.close()


def test_fast_path_answers_as_the_router(two_apps: tuple[Any, Any]) -> None:
    fast, routed = two_apps
    for i, (label, method, path, body, query, headers) in enumerate(WRITES):
        name = f"p{i}"
        if body == "DUP":
            raw = b'{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "%s", "name": "%s"}}' % (
                name.encode(), name.encode())
        elif isinstance(body, str):
            raw = body.encode()
        else:
            raw = json.dumps(body).replace("NAME", name).encode()
        if "binding" in label:  # the pod to bind, created first on both sides
            for app in (fast, routed):
                assert _call(app, "POST", PODS, json.dumps(POD).replace("NAME", name).encode())[0] == 201
        p = path.replace("NAME", name)
        a, b = _call(fast, method, p, raw, query, headers), _call(routed, method, p, raw, query, headers)
        assert (a[0], a[1], _stable(a[2])) == (b[0], b[1], _stable(b[2])), label
        assert a[0] in (200, 201, 400, 404, 422), label



# -- unknown fields: the one-pass judgement and the walk that names them ----------------------
def _dict_nodes(v: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    todo = [v]
    while todo:
        x = todo.pop()
        if isinstance(x, dict):
            out.append(x)
            todo.extend(x.values())
        elif isinstance(x, list):
            todo.extend(x)
    return out


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(OBJECTS + [("Pod", {**POD, "spec": {**POD["spec"], "affinity": {"nodeAffinity": {
    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "a", "operator": "In", "values": ["b"]}]}]}}}}})]),
       st.lists(st.tuples(st.integers(0, 1000), st.sampled_from(["bogus", "$patch", "x-y"])), max_size=3))
def test_unknown_fields_one_pass_agrees_with_the_walk(kind_obj: tuple[str, dict[str, Any]],
                                                      inserts: list[tuple[int, str]]) -> None:
    from kubesched.server.apiserver.typedefs.dsl import DEFS
    from kubesched.server.apiserver.typedefs.validate import _any_unknown, _walk

    kind, obj = kind_obj
    obj = json.loads(json.dumps(obj))
    nodes = _dict_nodes(obj)
    for where, key in inserts:
        nodes[where % len(nodes)][key] = {"n": 1}
    group = "events.k8s.io" if kind == "Event" else ""
    defname = definition_for(group, "v1", kind)
    walked: list[str] = []
    _walk(obj, DEFS[defname], "", walked, False)  # the walk that names them, on its own
    assert _any_unknown(obj, DEFS[defname]) is bool(walked)


def test_unknown_fields_found_and_named() -> None:
    pod = json.loads(json.dumps(POD))
    pod["spec"]["containers"][0]["bogus"] = 1
    pod["metadata"]["labels"] = {"free": "form"}  # a map: any key
    pod["$patch"] = "x"  # directives are not fields
    from kubesched.server.apiserver.typedefs.validate import unknown_fields
    assert unknown_fields(pod, definition_for("", "v1", "Pod")) == ["spec.containers[0].bogus"]
    assert unknown_fields(POD, definition_for("", "v1", "Pod")) == []
