"""The one reader of request bodies: every body that enters the API server (a create,
update, patch of any kind, server-side apply, DeleteOptions, an access review; JSON, YAML or
protobuf) is decoded here into plain JSON values that every later step can handle, or
refused with a 4xx ``Status`` before anything unbounded is built.

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
  laughs"; go-yaml refuses "excessive aliasing") nor name a node that contains them
  (``&a [*a]``; go-yaml: "anchor 'a' value contains itself"), checked from the parser's
  events before a value is built (:mod:`kubesched.api.yamlshape`).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np
import orjson
import yaml

from kubesched.api.jsontext import has_long_digit_run
from kubesched.api.yamlshape import EXCESSIVE_ALIASING, SELF_REFERENCE, ShapeError, check_shape
from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.protobuf import decode as protobuf

MAX_DEPTH = 100
MAX_YAML_NODES = 400_000  # go-yaml decodes at least this many values before judging aliasing
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml", "application/apply-patch+yaml")


def decode_body(raw: bytes, content_type: str) -> Any:
    """The body as plain JSON values, or an ApiError (400 malformed, 415 unknown type)."""
    ct = content_type.split(";")[0].strip().lower()
    if not raw.strip():
        raise E.bad_request("the request body is empty")
    if ct == protobuf.MEDIA_TYPE:
        return _shallow(protobuf.decode(raw))
    if ct not in ("", "application/json", "*/*") and not ct.endswith("+json") and "yaml" not in ct:
        raise E.ApiError(415, "UnsupportedMediaType", 'the body of the request was in an unknown format - '
                         'accepted media types include: application/json, application/yaml, '
                         'application/vnd.kubernetes.protobuf')
    if ct in _YAML_TYPES:
        return decode_yaml(raw)
    return decode_json(raw)


def _shallow(value: Any) -> Any:
    """``value`` if it nests no deeper than :data:`MAX_DEPTH` (a protobuf body's messages
    are bounded by their schema, but the JSON inside ``fieldsV1`` is not), else a 400."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        cur, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise E.bad_request(f"couldn't get version/kind; json parse error: exceeded max depth of {MAX_DEPTH}")
        if isinstance(cur, dict):
            stack.extend((v, depth + 1) for v in cur.values() if isinstance(v, (dict, list)))
        elif isinstance(cur, list):
            stack.extend((v, depth + 1) for v in cur if isinstance(v, (dict, list)))
    return value


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


def decode_yaml(raw: bytes) -> Any:
    """A YAML body as plain JSON values, refused (400) before anything is built when it
    nests too deeply, refers to itself or expands past :data:`MAX_YAML_NODES` values
    (:func:`kubesched.api.yamlshape.check_shape`, the bound the manifest reader uses too)."""
    try:
        check_shape(raw, max_depth=MAX_DEPTH, max_nodes=MAX_YAML_NODES, loader=_Loader)
        value = yaml.load(raw, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except ShapeError as exc:
        raise E.bad_request(f"error converting YAML to JSON: {_go_yaml_words(exc)}") from None
    except yaml.YAMLError as exc:
        raise E.bad_request(f"error converting YAML to JSON: {exc}") from None
    return _clean(value)


def _go_yaml_words(exc: ShapeError) -> str:
    """How go-yaml (sigs.k8s.io/yaml, kube-apiserver's YAML reader) words the refusal; the
    depth bound is this server's own (see the module docstring)."""
    if exc.message == SELF_REFERENCE:
        return f"yaml: anchor '{exc.anchor}' value contains itself"
    if exc.message == EXCESSIVE_ALIASING:
        return f"yaml: {EXCESSIVE_ALIASING}"
    return exc.message


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
