"""Decoding ``application/vnd.kubernetes.protobuf`` request bodies into JSON objects.

Since client-go 1.32 the typed clients send built-in kinds as protobuf, so ``kubectl
create namespace``, ``create deployment``, ``create configmap``, ``drain`` (evictions)
and the like POST protobuf, not JSON, and a 415 makes them fail. This module reads the
wire format (``k8s\\0`` + ``runtime.Unknown`` envelope + the object's message) for every
declared kind, using the field tables of :mod:`.tables` (derived from
the declared types, :mod:`kubesched.api.types`). JSON conventions are restored: zero values of
non-pointer fields are dropped (gogo-protobuf writes them; Go's JSON omits them),
``Time`` becomes RFC 3339, ``IntOrString`` and ``Quantity`` become their JSON forms.

A field outside the table that carries data raises 415 with a hint to use JSON
(``kubectl apply -f``): nothing is silently dropped. Responses are always JSON, which
every client accepts (they send ``Accept: application/vnd.kubernetes.protobuf,
application/json``).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from typing import Any

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.protobuf.tables import SCHEMA

MAGIC = b"k8s\x00"
MEDIA_TYPE = "application/vnd.kubernetes.protobuf"


def _unsupported(message: str) -> ApiError:
    return ApiError(415, "UnsupportedMediaType", f"{message}; send this object as JSON instead "
                    "(for example with kubectl apply -f)")


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(buf):
            raise _unsupported("truncated protobuf varint")
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7
        if shift > 63:
            raise _unsupported("malformed protobuf varint")


def fields(buf: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) of every field of one message."""
    out: list[tuple[int, int, Any]] = []
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(buf, i)
            out.append((num, wt, v))
        elif wt == 2:
            n, i = _varint(buf, i)
            if i + n > len(buf):
                raise _unsupported("truncated protobuf field")
            out.append((num, wt, buf[i:i + n]))
            i += n
        elif wt in (1, 5):
            n = 8 if wt == 1 else 4
            out.append((num, wt, int.from_bytes(buf[i:i + n], "little")))
            i += n
        else:
            raise _unsupported(f"protobuf wire type {wt} is not supported")
    return out


def _blob(v: Any) -> bytes:
    """A length-delimited field's bytes. A number where bytes belong is malformed, as
    gogo-protobuf's generated code says ("proto: wrong wireType"): never ``bytes(n)``,
    which would allocate ``n`` zero bytes for a few bytes of input."""
    if isinstance(v, int):
        raise _wrong_wire_type()
    return bytes(v)


def _num(v: Any) -> int:
    """A varint or fixed field's number; bytes where a number belongs are malformed."""
    if not isinstance(v, int):
        raise _wrong_wire_type()
    return v


def _wrong_wire_type() -> ApiError:
    return ApiError(400, "BadRequest", "proto: wrong wireType for a field of the object")


def _signed(v: Any) -> int:
    n = _num(v)
    return n - (1 << 64) if n >= 1 << 63 else n


def _time(buf: bytes, micro: bool = False) -> str | None:
    """``Time`` (RFC 3339, seconds) or ``MicroTime`` (six fractional digits), both
    ``{seconds = 1, nanos = 2}`` on the wire."""
    f = {n: v for n, _, v in fields(buf)}
    secs = _signed(f.get(1, 0))
    if not secs and not f.get(2):
        return None
    when = dt.datetime.fromtimestamp(secs, dt.timezone.utc)
    if micro:
        return when.strftime("%Y-%m-%dT%H:%M:%S") + f".{_num(f.get(2, 0)) // 1000:06d}Z"
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _intorstr(buf: bytes) -> int | str:
    f = {n: v for n, _, v in fields(buf)}
    if f.get(1, 0) == 1:
        return _blob(f.get(3, b"")).decode("utf-8", "replace")
    return _signed(f.get(2, 0))


def _map_entry(buf: bytes, vtype: str, where: str) -> tuple[str, Any]:
    """One entry ``{key = 1; value = 2}`` of a map; a missing value is the type's zero."""
    entry = {n: (wt, v) for n, wt, v in fields(buf)}
    key = _blob(entry.get(1, (2, b""))[1]).decode("utf-8", "replace")
    wt, raw = entry.get(2, (0, 0) if vtype in ("i", "b") else (2, b""))
    return key, _scalar(vtype, wt, raw, f"{where}[{key}]")


def _raw_extension(buf: bytes, where: str) -> Any:
    """RawExtension ``{bytes raw = 1}``: the JSON of the value."""
    raw = _blob({n: v for n, _, v in fields(buf)}.get(1, b""))
    try:
        return json.loads(raw) if raw else None
    except (ValueError, RecursionError):
        raise ApiError(400, "BadRequest", f"{where}: the embedded object is not JSON") from None


def _scalar(t: str, wt: int, v: Any, where: str) -> Any:
    if t == "s":
        return _blob(v).decode("utf-8", "replace")
    if t == "i":
        return _signed(v)
    if t == "b":
        return bool(_num(v))
    if t == "t":
        return _time(_blob(v))
    if t == "mt":
        return _time(_blob(v), micro=True)
    if t == "x":
        return _intorstr(_blob(v))
    if t == "q":  # Quantity {string string = 1}
        return _blob({n: val for n, _, val in fields(_blob(v))}.get(1, b"")).decode("utf-8", "replace")
    if t == "y":
        return base64.b64encode(_blob(v)).decode()
    if t == "j":  # FieldsV1: field 1 holds the raw JSON
        raw = _blob({n: val for n, _, val in fields(_blob(v))}.get(1, b""))
        try:
            return json.loads(raw) if raw else {}
        except (ValueError, RecursionError):
            raise ApiError(400, "BadRequest", f"{where}: fieldsV1 is not JSON") from None
    if t == "a":
        return _raw_extension(_blob(v), where)
    if t.startswith("m:"):
        return decode_message(t[2:], _blob(v), where)
    raise AssertionError(t)


def decode_message(name: str, buf: bytes, where: str = "") -> dict[str, Any]:
    schema = SCHEMA[name]
    out: dict[str, Any] = {}
    for num, wt, v in fields(buf):
        spec = schema.get(num)
        path = f"{where}.{spec[0]}" if spec and where else (spec[0] if spec else f"{where}#{num}")
        if spec is None:
            if (wt == 2 and len(v) == 0) or (wt == 0 and v == 0):
                continue  # an empty non-pointer field gogo-protobuf always writes
            raise _unsupported(f"protobuf field {num} of {name} ({where or 'object'}) is not supported")
        key, t, flags = spec
        if "k" in flags:
            k, val = _map_entry(_blob(v), t, path)
            out.setdefault(key, {})[k] = val
            continue
        value = _scalar(t, wt, v, path)
        if "n" in flags and isinstance(value, dict):
            out.update(value)
        elif "r" in flags:
            out.setdefault(key, []).append(value)
        elif "p" in flags or value not in ("", 0, False, None):
            out[key] = value
    return out


def decode(body: bytes) -> dict[str, Any]:
    """The JSON form of a protobuf-encoded object (``k8s\\0`` envelope)."""
    if not body.startswith(MAGIC):
        raise _unsupported("protobuf body without the k8s envelope")
    env = {n: v for n, _, v in fields(body[len(MAGIC):])}
    tm = {n: _blob(v).decode("utf-8", "replace") for n, _, v in fields(_blob(env.get(1, b"")))}
    api_version, kind = tm.get(1, ""), tm.get(2, "")
    message = f"{api_version}/{kind}" if f"{api_version}/{kind}" in SCHEMA else kind
    if message not in SCHEMA:
        raise _unsupported(f"protobuf encoding of kind {kind!r} is not supported")
    if env.get(3):
        raise _unsupported("protobuf content encodings are not supported")
    obj = decode_message(message, _blob(env.get(2, b"")))
    return {"apiVersion": api_version, "kind": kind, **obj}
