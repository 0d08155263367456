"""Upstream's field errors (apimachinery ``util/validation/field``) as DecodeErrors.

kube-apiserver reports each problem as ``<path>: <type>: <value>: <detail>``; the
:class:`~kubesched.api.errors.DecodeError` raised here carries the path in ``field`` and
the rest, ``Error.ErrorBody()``, in ``message``: ``Invalid value: "-1": must be greater
than or equal to 0``. Values are printed as upstream prints them: strings with Go's ``%q``,
integers and booleans plainly, named string types and structures as Go's ``json.Marshal``
writes them (which differs from ``%q`` only for unusual characters).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kubesched.api.errors import DecodeError

__all__ = [
    "GoJSON", "GoStruct", "duplicate", "forbidden", "go_json", "go_quote", "invalid", "not_supported",
    "required", "too_long", "type_error",
]

_PLAIN = re.compile(r"[ !#-\[\]-~]*")  # printable ASCII without '"' and '\'
_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
            "\\": "\\\\", '"': '\\"'}
_JSON_HTML = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                            "\u2028": "\\u2028", "\u2029": "\\u2029"})


class GoJSON:
    """A value upstream passes as a named type or struct: printed with ``json.Marshal``."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class GoStruct(dict[str, Any]):
    """A Go struct for :func:`go_json`: fields in declaration order (a plain dict is a Go
    map, whose keys Go sorts)."""


def go_quote(s: str) -> str:
    """Go's ``strconv.Quote`` (``%q``)."""
    if _PLAIN.fullmatch(s):
        return f'"{s}"'
    out = []
    for ch in s:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def go_json(value: Any) -> str:
    """Go's ``json.Marshal`` for the plain values validation reports (maps sorted by key,
    :class:`GoStruct` fields in order)."""
    if isinstance(value, GoStruct):
        return "{" + ",".join(f"{go_json(k)}:{go_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{go_json(str(k))}:{go_json(value[k])}" for k in sorted(value, key=str)) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False).translate(_JSON_HTML)


def _render(value: Any) -> str:
    if isinstance(value, GoJSON):
        return go_json(value.value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, (int, float)):
        return str(value)
    return go_json(value)


def invalid(path: str, value: Any, detail: str) -> DecodeError:
    """``field.Invalid``."""
    return DecodeError(f"Invalid value: {_render(value)}: {detail}", field=path)


def required(path: str, detail: str = "") -> DecodeError:
    """``field.Required``."""
    return DecodeError(f"Required value: {detail}" if detail else "Required value", field=path)


def forbidden(path: str, detail: str) -> DecodeError:
    """``field.Forbidden``."""
    return DecodeError(f"Forbidden: {detail}", field=path)


def duplicate(path: str, value: Any, detail: str = "") -> DecodeError:
    """``field.Duplicate`` (a detail is set by a few callers)."""
    body = f"Duplicate value: {_render(value)}"
    return DecodeError(f"{body}: {detail}" if detail else body, field=path)


def not_supported(path: str, value: Any, supported: Sequence[str]) -> DecodeError:
    """``field.NotSupported``: the supported values in the caller's order."""
    listed = ", ".join(go_quote(v) for v in supported)
    return DecodeError(f"Unsupported value: {_render(value)}: supported values: {listed}", field=path)


def too_long(path: str, max_length: int) -> DecodeError:
    """``field.TooLong`` (the value is not shown)."""
    unit = "byte" if max_length == 1 else "bytes"
    return DecodeError(f"Too long: may not be more than {max_length} {unit}", field=path)


def type_error(path: str, value: Any, go_field: str, want: str = "string") -> DecodeError:
    """What the API server's JSON decoding says of a value of the wrong type, e.g. a YAML
    number as a label value: ``json: cannot unmarshal number into Go struct field
    ObjectMeta.metadata.labels of type string``."""
    return DecodeError(f"json: cannot unmarshal {json_kind(value)} into Go struct field {go_field} "
                       f"of type {want}", field=path)


def json_kind(value: Any) -> str:
    """The JSON type name Go's decoder reports for a decoded YAML/JSON value."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, Iterable):
        return "array"
    return "value"
