"""Request bodies: read with limits, decoded into plain JSON values that every later step
can handle, or refused with a 4xx ``Status``.

kube-apiserver decodes bodies with Go's JSON and YAML decoders, which give later code only
what JSON can hold: maps with string keys, lists, strings, ``int64`` or ``float64`` numbers,
booleans and null. Python's decoders give more and fail differently, so this module closes
the gaps before a body reaches the registry:

* **nesting depth** is bounded *before* parsing: the parsers and the registry's deep copies
  and patches recurse once per level, and a body nested a thousand deep would otherwise end
  in a RecursionError (a 500). Go's decoders stop at 10,000 levels (``exceeded max depth``);
  CPython cannot recurse that deep, so the bound here is :data:`MAX_DEPTH`, ten times deeper
  than any object of a served kind (a pod's deepest field is ~12 levels down);
* **numbers** as Go decodes them into ``interface{}``: ``NaN``/``Infinity`` are not JSON
  (400); an integer outside int64 becomes a float, and one beyond float64 (``1e999``,
  400 nines) is refused, as Go's ``strconv`` refuses it;
* **strings**: unpaired UTF-16 surrogates (``"\\ud800"``) become U+FFFD, as in Go;
* **YAML**: timestamps stay strings (sigs.k8s.io/yaml does not make them times), keys
  become strings, anything JSON cannot hold (``!!binary``, ``!!set``) is refused, and
  aliases may not expand a document beyond :data:`MAX_YAML_NODES` values (the "billion
  laughs"; go-yaml refuses "excessive aliasing").
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from typing import Any

import numpy as np
import orjson
import yaml
from starlette.requests import ClientDisconnect, Request

from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.protobuf import decode as protobuf
from kubesched.api.jsontext import has_long_digit_run

MAX_DEPTH = 100
MAX_YAML_NODES = 400_000  # go-yaml decodes at least this many values before judging aliasing
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml", "application/apply-patch+yaml")


async def read_body(request: Request, limit: int, timeout: float) -> bytes:
    """The whole body: 413 beyond ``limit`` bytes, 408 if it takes longer than ``timeout``.

    Read from the ASGI ``receive`` as ``Request.stream`` reads it (a disconnect raises
    ``ClientDisconnect``), under ``asyncio.timeout``: no task, async generator or
    ``wait_for`` per request (they were a visible share of a small write's CPU)."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise E.too_large(limit)
    chunks: list[bytes] = []
    size = 0
    receive = request.receive
    try:
        async with asyncio.timeout(timeout):
            while True:
                message = await receive()
                kind = message["type"]
                if kind == "http.request":
                    chunk = message.get("body", b"")
                    if chunk:
                        size += len(chunk)
                        if size > limit:
                            raise E.too_large(limit)
                        chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
                elif kind == "http.disconnect":
                    request._is_disconnected = True
                    raise ClientDisconnect()
    except TimeoutError:
        raise E.ApiError(408, "Timeout", "request body was not received in time") from None
    request._stream_consumed = True  # as Request.stream leaves it: the body is gone
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def decode_body(raw: bytes, content_type: str) -> Any:
    """The body as plain JSON values, or an ApiError (400 malformed, 415 unknown type)."""
    ct = content_type.split(";")[0].strip().lower()
    if not raw.strip():
        raise E.bad_request("the request body is empty")
    if ct == protobuf.MEDIA_TYPE:
        return protobuf.decode(raw)
    if ct not in ("", "application/json", "*/*") and not ct.endswith("+json") and "yaml" not in ct:
        raise E.ApiError(415, "UnsupportedMediaType", 'the body of the request was in an unknown format - '
                         'accepted media types include: application/json, application/yaml, '
                         'application/vnd.kubernetes.protobuf')
    if ct in _YAML_TYPES:
        return decode_yaml(raw)
    return decode_json(raw)


# -- JSON ---------------------------------------------------------------------------------
class _NotJson(ValueError):
    pass


def _constant(name: str) -> Any:
    raise _NotJson(f"invalid character '{name[0]}' looking for beginning of value")


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _NotJson(f"cannot unmarshal number {text[:40]} into a float64: value out of range")
    return value


def _int(text: str) -> int | float:
    if len(text) <= 18:
        return int(text)
    if len(text) <= 20:
        value = int(text)
        if INT64_MIN <= value <= INT64_MAX:
            return value
    return _float(text)  # as Go: beyond int64 a float64, beyond that an error


def json_depth(raw: bytes) -> int:
    """The nesting depth of a JSON text (brackets inside strings do not count)."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return 0  # cannot be deeper than the number of brackets: the common case, no scan
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    codes = np.frombuffer(brackets, dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1)
    return int(np.cumsum(steps, dtype=np.int64).max())


def decode_json(raw: bytes) -> Any:
    """The JSON text ``raw`` decoded as Go decodes it (see the module docstring). orjson
    decodes it where its values are exactly the standard library's with the hooks below: no
    run of 19 digits (every integer up to 18 digits is the same int; longer ones may leave
    int64), no escaped UTF-16 surrogate; NaN, infinities and every text orjson refuses go to
    the standard library, whose answer (and error text) is the reference."""
    if json_depth(raw) > MAX_DEPTH:
        raise E.bad_request(f"couldn't get version/kind; json parse error: exceeded max depth of {MAX_DEPTH}")
    surrogate = b"\\u" in raw and _SURROGATE_ESCAPE.search(raw) is not None  # the regex only if \u is there
    if not has_long_digit_run(raw) and not surrogate:
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    return decode_json_stdlib(raw)


def decode_json_stdlib(raw: bytes) -> Any:
    """:func:`decode_json` by the standard library alone, depth already checked: the
    reference its orjson path must equal."""
    try:
        value = json.loads(raw, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise E.bad_request(f"couldn't get version/kind; json parse error: {exc}") from None
    if _SURROGATE_ESCAPE.search(raw):
        value = _clean(value)
    return value


# -- YAML ---------------------------------------------------------------------------------
class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader without the timestamp resolver (timestamps stay strings), whose
    maps have string keys from the start (``1`` and ``true`` are two keys, as in Go)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        self.flatten_mapping(node)
        return {_key(self.construct_object(k, deep=deep)): self.construct_object(v, deep=deep)
                for k, v in node.value}


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _yaml_shape(raw: bytes) -> None:
    """Depth and alias expansion of a YAML text, from its event stream (no recursion)."""
    depth, total = 0, 0
    anchored: dict[str, int] = {}
    starts: list[tuple[str | None, int]] = []
    for ev in yaml.parse(raw, Loader=_Loader):
        if isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                raise E.bad_request(f"error converting YAML to JSON: exceeded max depth of {MAX_DEPTH}")
            starts.append((ev.anchor, total))
            total += 1
        elif isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
            anchor, began = starts.pop()
            if anchor is not None:
                anchored[anchor] = total - began
        elif isinstance(ev, yaml.ScalarEvent):
            total += 1
            if ev.anchor is not None:
                anchored[ev.anchor] = 1
        elif isinstance(ev, yaml.AliasEvent):
            total += anchored.get(ev.anchor or "", 1)
        if total > MAX_YAML_NODES:
            raise E.bad_request("error converting YAML to JSON: yaml: document contains excessive aliasing")


def decode_yaml(raw: bytes) -> Any:
    try:
        _yaml_shape(raw)
        value = yaml.load(raw, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise E.bad_request(f"error converting YAML to JSON: {exc}") from None
    return _clean(value)


# -- making any decoded value plain JSON --------------------------------------------------
def _key(key: Any) -> str:
    if isinstance(key, str):
        return _scalar(key)  # type: ignore[no-any-return]
    if key is None or isinstance(key, (bool, int, float)):
        return json.dumps(_scalar(key))
    raise E.bad_request(f"error converting YAML to JSON: unsupported map key {type(key).__name__}")


def _scalar(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if INT64_MIN <= value <= INT64_MAX else _float(str(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise E.bad_request(f"json: unsupported value: {value}")
        return value
    raise E.bad_request(f"error converting YAML to JSON: unsupported value of type {type(value).__name__}")


def _clean(value: Any) -> Any:
    """``value`` with every scalar and key made plain JSON (iteratively: depth is bounded
    already, but no recursion is needed)."""
    if not isinstance(value, (dict, list)):
        return _scalar_or_400(value)
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        parent, key = stack.pop()
        item = parent[key]
        if isinstance(item, dict):
            fresh = {_key(k): v for k, v in item.items()}
            parent[key] = fresh
            stack.extend((fresh, k) for k in fresh)
        elif isinstance(item, list):
            fresh_list = list(item)  # aliases share lists: never edit one in place
            parent[key] = fresh_list
            stack.extend((fresh_list, i) for i in range(len(fresh_list)))
        else:
            parent[key] = _scalar_or_400(item)
    return root[0]


def _scalar_or_400(value: Any) -> Any:
    try:
        return _scalar(value)
    except _NotJson as exc:
        raise E.bad_request(f"couldn't get version/kind; json parse error: {exc}") from None
