"""``fieldValidation``: unknown and duplicate fields of a request body, as upstream reports them.

``Strict`` refuses the request (400 ``strict decoding error: unknown field "spec.foo"``),
``Warn`` (the default) answers with one ``Warning: 299 - "unknown field \\"spec.foo\\""``
header per field, ``Ignore`` says nothing. Fields are unknown when their struct is
described completely (:mod:`.dsl`); under an open definition nothing is reported.
Patch directives (``$patch``, ``$setElementOrder/...``) are not fields.
"""

from __future__ import annotations

import json
import re
from typing import Any

from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.typedefs import definition_for
from kubesched.server.apiserver.typedefs.dsl import DEFS, T, resolve

MODES = ("Strict", "Warn", "Ignore")


def unknown_fields(value: Any, defname: str, keyed: bool = False) -> list[str]:
    """Paths of the unknown fields of ``value``: list items by index (``spec.containers[0].bar``,
    as the JSON decoder says it), or with ``keyed`` by their list-map keys
    (``spec.containers[name="c"].bar``, as server-side apply says it)."""
    out: list[str] = []
    d = DEFS[defname]
    if _any_unknown(value, d):  # paths are made only when there is one to name
        _walk(value, d, "", out, keyed)
    return out


def _any_unknown(value: Any, d: Any) -> bool:
    """Whether :func:`_walk` would find an unknown field in ``value`` (the same descent)."""
    if not isinstance(value, dict):
        return False
    fields, closed = d.fields, not d.open
    for k, v in value.items():
        t = fields.get(k)
        if t is None:
            if closed and not k.startswith("$"):
                return True
            continue
        if k.startswith("$"):
            continue
        if _any_unknown_type(v, t):
            return True
    return False


def _any_unknown_type(value: Any, t: T) -> bool:
    d = resolve(t)
    if d is not None:
        return _any_unknown(value, d)
    if t.kind == "array" and isinstance(value, list) and t.item is not None:
        return any(_any_unknown_type(v, t.item) for v in value)
    if t.kind == "map" and isinstance(value, dict) and t.item is not None:
        return any(_any_unknown_type(v, t.item) for v in value.values())
    return False


def _item(v: Any, i: int, t: T, keyed: bool) -> str:
    if keyed and t.list_type == "map" and isinstance(v, dict):
        return "[" + ",".join(f"{k}={json.dumps(v.get(k))}" for k in sorted(t.keys) if k in v) + "]"
    if keyed and t.list_type == "set":
        return f"[={json.dumps(v)}]"
    return f"[{i}]"


def _walk_type(value: Any, t: T, path: str, out: list[str], keyed: bool) -> None:
    d = resolve(t)
    if d is not None:
        _walk(value, d, path, out, keyed)
    elif t.kind == "array" and isinstance(value, list) and t.item is not None:
        for i, v in enumerate(value):
            _walk_type(v, t.item, path + _item(v, i, t, keyed), out, keyed)
    elif t.kind == "map" and isinstance(value, dict) and t.item is not None:
        for k, v in value.items():
            _walk_type(v, t.item, f"{path}[{k}]" if not keyed else f"{path}.{k}", out, keyed)


def _walk(value: Any, d: Any, path: str, out: list[str], keyed: bool) -> None:
    if not isinstance(value, dict):
        return
    for k, v in value.items():
        if k.startswith("$"):
            continue
        child = f"{path}.{k}" if path else k
        t = d.fields.get(k)
        if t is None:
            if not d.open:
                out.append(child)
            continue
        _walk_type(v, t, child, out, keyed)


_KEY_SPACE = re.compile(rb'"[ \t\r\n]+:')


def _members(value: Any) -> int:
    """How many members the objects in ``value`` have, nested ones included."""
    n, todo = 0, [value]
    while todo:
        v = todo.pop()
        if type(v) is dict:
            n += len(v)
            todo.extend(v.values())
        elif type(v) is list:
            todo.extend(v)
    return n


def surely_unique(raw: bytes, body: Any) -> bool:
    """True only if no JSON object in ``raw`` names a field twice, judged from ``body`` (what
    ``raw`` decoded to) without parsing ``raw`` again. In a JSON text a key is a string
    followed by ``:`` (after optional whitespace), and nothing else is: a value string is
    followed by ``,``, ``}``, ``]`` or whitespace, and a ``"`` inside a string is escaped.
    So with no ``\\"`` and no whitespace between a string and ``:``, the count of ``":`` is
    the count of keys written, which exceeds the members of the decoded objects exactly
    when some key is repeated. (False just means: ask :func:`duplicate_fields`.)"""
    if b'\\"' in raw or _KEY_SPACE.search(raw) is not None:
        return False
    return raw.count(b'":') == _members(body)


def duplicate_fields(raw: bytes) -> list[str]:
    """Fields named twice in one JSON object of ``raw`` (empty for YAML or invalid JSON)."""
    dups: list[str] = []

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for k, _v in pairs:
            if k in seen:
                dups.append(k)
            seen.add(k)
        return dict(pairs)

    try:
        json.loads(raw, object_pairs_hook=hook)
    except (ValueError, UnicodeDecodeError):
        return []
    return dups


def check(mode: str | None, group: str, version: str, kind: str, body: Any, raw: bytes,
          apply: bool = False, where: str = "") -> list[str]:
    """The warnings for ``body`` under ``mode``; raises the 400 of ``Strict``."""
    mode = mode or "Warn"
    if mode not in MODES:
        raise E.bad_request(f'invalid fieldValidation directive: {mode!r}: must be one of "Ignore", '
                            f'"Warn" or "Strict"')
    if mode == "Ignore" or not isinstance(body, dict):
        return []
    unknown = unknown_fields(body, definition_for(group, version, kind), keyed=apply)
    problems = [f'unknown field "{p}"' for p in unknown]
    if raw and not surely_unique(raw, body):
        problems += [f'json: duplicate field "{k}"' for k in duplicate_fields(raw)]
    if not problems:
        return []
    if mode == "Strict":
        if apply:
            gv = f"{group}/{version}" if group else f"/{version}"
            fields = "; ".join("." + p for p in unknown)
            raise E.bad_request(f"failed to create typed patch object ({where}; {gv}, Kind={kind}): "
                                f"{fields}: field not declared in schema")
        raise E.bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: strict decoding error: '
                            + ", ".join(problems))
    return problems


def validate_fields(query: Any, target: Any, method: str, content_type: str, body: Any, raw: bytes) -> list[str]:
    """The hook of the request handler: which writes are checked, against which kind."""
    ct = content_type.split(";")[0].strip().lower()
    if target.subresource not in ("", "status") or (method == "POST" and target.name is not None):
        return []
    if method == "PATCH" and ct == "application/json-patch+json":
        return []
    res = target.resource
    apply = ct == "application/apply-patch+yaml"
    where = f"{target.namespace}/{target.name}" if target.namespace else str(target.name)
    return check(query.get("fieldValidation"), res.group, res.version, res.kind, body, raw if not apply else b"",
                 apply=apply, where=where)


def warning_header(problem: str) -> str:
    return '299 - "' + problem.replace("\\", "\\\\").replace('"', '\\"') + '"'
