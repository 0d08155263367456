"""Serving ``application/vnd.kubernetes.protobuf``: the reverse of :mod:`.protobuf`, over
the same field table (field numbers from upstream's ``generated.proto`` files).

A response is protobuf only when the client asks for it first in ``Accept`` (client-go's
default, ``application/vnd.kubernetes.protobuf, application/json``) and when every field
of the object is in the table: a field the table does not know (a custom resource's, or
a member no declared type has) makes the encoder give up and the response is JSON, which
the same clients accept, so nothing is ever dropped. Lists are ``<Kind>List {ListMeta metadata = 1;
repeated <Kind> items = 2}``; the envelope is ``k8s\\0`` + ``runtime.Unknown {TypeMeta
typeMeta = 1; bytes raw = 2; contentEncoding = 3; contentType = 4}``.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from typing import Any

from kubesched.server.apiserver.protobuf.decode import MAGIC, MEDIA_TYPE
from kubesched.server.apiserver.protobuf.tables import SCHEMA



class CannotEncode(Exception):
    """The object has a field the table does not cover: answer in JSON instead."""


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _ld(num: int, payload: bytes) -> bytes:
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _vi(num: int, n: int) -> bytes:
    return _varint(num << 3) + _varint(n)


def _time(value: Any) -> bytes:
    if value is None:
        return b""
    if not isinstance(value, str):
        raise CannotEncode("time")
    try:
        when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise CannotEncode("time") from None
    secs = int(when.timestamp() // 1)
    nanos = when.microsecond * 1000
    return (_vi(1, secs) if secs else b"") + (_vi(2, nanos) if nanos else b"")


def _scalar(num: int, t: str, value: Any, lenient: bool = False) -> bytes:
    if t == "s":
        if not isinstance(value, str):
            raise CannotEncode(str(num))
        return _ld(num, value.encode())
    if t == "i":
        if isinstance(value, bool) or not isinstance(value, int):
            raise CannotEncode(str(num))
        return _vi(num, value)
    if t == "b":
        if not isinstance(value, bool):
            raise CannotEncode(str(num))
        return _vi(num, int(value))
    if t in ("t", "mt"):
        return _ld(num, _time(value))
    if t == "x":
        if isinstance(value, bool):
            raise CannotEncode(str(num))
        if isinstance(value, int):
            return _ld(num, _vi(1, 0) + _vi(2, value))
        if isinstance(value, str):
            return _ld(num, _vi(1, 1) + _ld(3, value.encode()))
        raise CannotEncode(str(num))
    if t == "q":  # Quantity {string string = 1}
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise CannotEncode(str(num))
        return _ld(num, _ld(1, str(value).encode()))
    if t == "y":
        if not isinstance(value, str):
            raise CannotEncode(str(num))
        return _ld(num, base64.b64decode(value))
    if t == "j":  # FieldsV1 {bytes Raw = 1}: the set as compact JSON
        if not isinstance(value, dict):
            raise CannotEncode(str(num))
        return _ld(num, _ld(1, json.dumps(value, separators=(",", ":")).encode()))
    if t == "a":  # RawExtension {bytes raw = 1}: the value as compact JSON
        return _ld(num, _ld(1, json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()))
    if t.startswith("m:"):
        if not isinstance(value, dict):
            raise CannotEncode(str(num))
        return _ld(num, encode_message(t[2:], value, lenient=lenient))
    raise CannotEncode(t)


def _map(num: int, t: str, value: Any, lenient: bool) -> bytes:
    """Entries ``{key = 1; value = 2}``, keys sorted as gogo-protobuf writes them."""
    if not isinstance(value, dict):
        raise CannotEncode(str(num))
    return b"".join(_ld(num, _ld(1, str(k).encode()) + _scalar(2, t, value[k], lenient)) for k in sorted(value))


def _members(table: dict[int, tuple[str, str, str]]) -> set[str]:
    """The JSON members a message's object may carry (its embedded structs' included)."""
    out: set[str] = set()
    for key, t, flags in table.values():
        out |= _members(SCHEMA[t[2:]]) if "n" in flags else {key}
    return out


_Plan = tuple[dict[str, tuple[int, str, str]], dict[str, int]]
_PLANS: dict[str, _Plan] = {}


def _plan(table: dict[int, tuple[str, str, str]]) -> _Plan:
    """(member -> (number, type, flags), member of an embedded struct -> its field number):
    encoding walks the object's members, not the table."""
    direct = {key: (num, t, flags) for num, (key, t, flags) in table.items() if "n" not in flags}
    embedded = {m: num for num, (_, t, flags) in table.items() if "n" in flags for m in _members(SCHEMA[t[2:]])}
    return direct, embedded


def encode_message(name: str, obj: dict[str, Any], table: dict[int, tuple[str, str, str]] | None = None,
                   lenient: bool = False) -> bytes:
    """One message, fields in number order; a member outside the table raises
    :class:`CannotEncode`, or with ``lenient`` is left out (as upstream's decoding drops
    unknown fields of built-in kinds)."""
    if table is None:  # the plan of a message of the field table is made once
        table = SCHEMA[name]
        plan = _PLANS.get(name)
        if plan is None:
            plan = _PLANS[name] = _plan(table)
    else:
        plan = _plan(table)
    direct, embedded = plan
    pieces: list[tuple[int, bytes]] = []
    parts: dict[int, dict[str, Any]] = {}
    for key, value in obj.items():
        spec = direct.get(key)
        if spec is None:
            if key in embedded:  # a member of an embedded struct (Volume's VolumeSource ...)
                parts.setdefault(embedded[key], {})[key] = value
            elif not lenient:
                raise CannotEncode(f"{name}.{key}")
            continue
        if value is None:
            continue
        num, t, flags = spec
        if "k" in flags:
            pieces.append((num, _map(num, t, value, lenient)))
        elif "r" in flags:
            if not isinstance(value, list):
                raise CannotEncode(f"{name}.{key}")
            pieces.append((num, b"".join(_scalar(num, t, v, lenient) for v in value)))
        else:
            pieces.append((num, _scalar(num, t, value, lenient)))
    for num, part in parts.items():
        pieces.append((num, _ld(num, encode_message(table[num][1][2:], part, lenient=lenient))))
    pieces.sort(key=lambda p: p[0])
    return b"".join(b for _, b in pieces)


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    return MAGIC + _ld(1, _ld(1, api_version.encode()) + _ld(2, kind.encode())) + _ld(2, raw)


def _message_name(api_version: str, kind: str) -> str | None:
    for name in (f"{api_version}/{kind}", kind):
        if name in SCHEMA:
            return name
    return None


def encode(obj: dict[str, Any], lenient: bool = False) -> bytes:
    """The protobuf form of an object or a ``<Kind>List``; raises :class:`CannotEncode`."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        raise CannotEncode("type")
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    if kind.endswith("List") and isinstance(obj.get("items"), list):
        item = _message_name(api_version, kind[:-4])
        if item is None or set(body) - {"metadata", "items"}:
            raise CannotEncode(kind)
        raw = _ld(1, encode_message("ListMeta", body.get("metadata") or {}))
        raw += b"".join(_ld(2, encode_message(item, {k: v for k, v in i.items() if k not in ("apiVersion", "kind")},
                                              lenient=lenient)) for i in body["items"])
        return _envelope(api_version, kind, raw)
    name = _message_name(api_version, kind)
    if name is None:
        raise CannotEncode(kind)
    return _envelope(api_version, kind, encode_message(name, body, lenient=lenient))


def streamable(api_version: str, kind: str) -> bool:
    """Whether every object of the kind can be written in protobuf, so a watch can promise
    it: the kind is a declared type (every declared field has its number; a custom
    resource has no table)."""
    return _message_name(api_version, kind) is not None


def watch_frame(event_type: str, obj: dict[str, Any]) -> bytes:
    """One frame of a protobuf watch stream: a 4-byte big-endian length, then ``WatchEvent
    {string type = 1; RawExtension object = 2}`` whose ``raw`` (field 1) is the object in
    the enveloped form (client-go's raw stream serializer + length-delimited framer)."""
    event = _ld(1, event_type.encode()) + _ld(2, _ld(1, encode(obj, lenient=True)))
    return len(event).to_bytes(4, "big") + event


def prefers_protobuf(accept: str) -> bool:
    """Whether the first media range of ``Accept`` is plain protobuf (no ``as=``)."""
    first = accept.split(",")[0]
    parts = [p.strip() for p in first.split(";")]
    return parts[0].lower() == MEDIA_TYPE and not any(p.startswith("as=") for p in parts[1:])
