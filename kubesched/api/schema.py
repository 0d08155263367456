"""Type-checking of decoded JSON/YAML objects, as kube-apiserver's JSON decoding does it.

Why this exists: kube-apiserver decodes a request body into Go structs before anything
else runs, so a value of the wrong JSON type never reaches defaulting, admission or
validation: the request fails with 400 ``Pod in version "v1" cannot be handled as a Pod:
json: cannot unmarshal number into Go struct field Toleration.spec.tolerations.value of
type string``. kubesched works on plain dictionaries instead, so it checks the types
first, once, against a small schema per kind: ``simulate`` (:mod:`kubesched.api.decode`)
and the API server (``server/apiserver/registry/registry.py``) both call
:func:`~kubesched.api.schemas.check_object`
before defaulting, and the code after it may rely on the types.

A schema mirrors the Go type, field by field, and is plain data. The schemas of the
built-in kinds are derived from the declared types (:mod:`kubesched.api.types`, by
:mod:`kubesched.api.schemas`); a custom resource's is written with the same nodes::

    from kubesched.api.schema import INT32, STRING, MapOf, Struct
    from kubesched.api.schemas import OBJECT_META, register

    WIDGET = Struct("v1.Widget", metadata=OBJECT_META, spec=Struct(
        "v1.WidgetSpec", size=INT32, labels=MapOf(STRING)))
    register("Widget", WIDGET)

* leaves: :data:`STRING` (or ``Str("v1.Protocol")`` for a named string type, which Go
  prints by name), :data:`BOOL`, :data:`INT32`, :data:`INT64`, :data:`FLOAT64`,
  :data:`QUANTITY` (``resource.Quantity``: parsed, upstream's parse errors),
  :data:`INT_OR_STRING`, :data:`TIME` (``metav1.Time``), :data:`ANY` (not checked: raw
  extensions, free-form JSON);
* ``Struct(go_type, **fields)``: an object; fields not listed are not checked (unknown
  fields are kept, as kubesched keeps them);
* ``ListOf(elem)``, ``MapOf(elem)`` (map keys are always strings in JSON; errors name the
  entry unless ``key_in_path=False``); ``Struct.extend(**fields)`` adds fields to a copy.

To check a built-in kind: declare its type in :mod:`kubesched.api.types` and ``register``
it in :mod:`kubesched.api.schemas`, so its ``schema_for`` finds it; from then on
``simulate`` and the API server check it. A decoder of its own calls ``raw =
check_object(raw)`` (or ``check(raw, SCHEMA)``) before it reads anything, and can then
trust the types.

``null`` is accepted everywhere: Go leaves the zero value, so :func:`check` returns the
object without the null fields it knows and with zero values for null list items and map
values (``""``, ``0``, ``{}``), as kube-apiserver stores it. The first problem is raised as
:class:`~kubesched.api.errors.FieldTypeError` (or :class:`~kubesched.api.errors.QuantityError`),
with ``field`` the path with list indices and map keys (``spec.tolerations[0].value``) and
the message Go's decoder writes (struct name and JSON field path, without indices). A
successful check costs one pass over the fields the schema names and copies nothing
unless a null had to go.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from kubesched.api.errors import DecodeError, FieldTypeError, QuantityError
from kubesched.api.quantity import ERR_FORMAT_WRONG, parse_quantity

__all__ = [
    "ANY", "BOOL", "FLOAT64", "INT32", "INT64", "INT_OR_STRING", "QUANTITY", "STRING", "TIME",
    "ListOf", "MapOf", "Node", "Str", "Struct", "check", "json_kind",
]


class _Mismatch(Exception):
    """Raised at the bad value and completed on the way out: each enclosing struct adds
    its field (and the innermost one its name), each list its index, each map its key."""

    def __init__(self, got: str, go_type: str, message: str = "") -> None:
        super().__init__(got)
        self.got = got
        self.go_type = go_type
        self.message = message  # set: a complete message (Go value errors, quantities)
        self.quantity = False
        self.path: list[str] = []  # reversed: "value", "[0]", "tolerations", "spec"
        self.fields: list[str] = []  # reversed JSON field names, as Go's error shows them
        self.struct = ""

    def field(self, name: str, struct: str) -> None:
        self.path.append(name)
        self.fields.append(name)
        if not self.struct:
            self.struct = struct

    def render(self) -> str:
        if self.message:
            return self.message
        if not self.struct:
            return f"json: cannot unmarshal {self.got} into Go value of type {self.go_type}"
        return (f"json: cannot unmarshal {self.got} into Go struct field "
                f"{self.struct}.{'.'.join(reversed(self.fields))} of type {self.go_type}")

    def dotted(self) -> str:
        out = ""
        for seg in reversed(self.path):
            out += seg if seg.startswith("[") or not out else "." + seg
        return out


def json_kind(value: Any) -> str:
    """The JSON type Go's decoder names in its errors."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__


class Node:
    """One Go type. ``check`` takes a value (never None) and returns it as decoding and
    encoding again would give it back (the same object when nothing changes), or raises.
    ``zero`` is what a ``null`` list element or map value decodes to."""

    __slots__ = ("go_type",)
    zero: Any = None

    def __init__(self, go_type: str) -> None:
        self.go_type = go_type

    def check(self, value: Any) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.go_type!r})"


class _Any(Node):
    __slots__ = ()

    def check(self, value: Any) -> Any:
        return value


class Str(Node):
    """A string, or a named string type (``Str("v1.TaintEffect")``)."""

    __slots__ = ()
    zero = ""

    def check(self, value: Any) -> Any:
        if type(value) is not str:
            raise _Mismatch(json_kind(value), self.go_type)
        return value


class _Bool(Node):
    __slots__ = ()
    zero = False

    def check(self, value: Any) -> Any:
        if type(value) is not bool:
            raise _Mismatch(json_kind(value), self.go_type)
        return value


def _number_text(value: int | float) -> str:
    """A number as Go's error repeats it (the JSON text; Python's repr is the closest)."""
    return repr(value) if isinstance(value, float) else str(value)


class _Int(Node):
    """A Go integer: a JSON number that is integral and in range (``number 1.5`` otherwise)."""

    __slots__ = ("low", "high")
    zero = 0

    def __init__(self, go_type: str, bits: int) -> None:
        super().__init__(go_type)
        self.low, self.high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1

    def check(self, value: Any) -> Any:
        if type(value) is int:
            if not self.low <= value <= self.high:
                raise _Mismatch(f"number {_digits(value)}", self.go_type)
            return value
        if isinstance(value, float):
            raise _Mismatch(f"number {_number_text(value)}", self.go_type)
        raise _Mismatch(json_kind(value), self.go_type)


def _digits(value: int) -> str:
    try:
        return str(value)
    except ValueError:  # past Python's int-to-str digit limit
        return f"with {value.bit_length() * 30103 // 100000} digits"


class _Float(Node):
    __slots__ = ()
    zero = 0

    def check(self, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _Mismatch(json_kind(value), self.go_type)
        return value


class _Quantity(Node):
    """``resource.Quantity``: its ``UnmarshalJSON`` parses a string (spaces trimmed) or a
    number's text; anything else fails to parse (ErrFormatWrong), with no field in the
    message."""

    __slots__ = ()
    zero = "0"

    def check(self, value: Any) -> Any:
        t = type(value)
        if t is str and value != value.strip():
            value = value.strip()  # UnmarshalJSON trims spaces (strings.TrimSpace) before parsing
        problem = _quantity_problem(value) if t is str or t is int or t is float else ERR_FORMAT_WRONG
        if problem:
            m = _Mismatch("", self.go_type, problem)
            m.quantity = True
            raise m
        return value


@functools.lru_cache(maxsize=4096, typed=True)
def _quantity_problem(value: str | int | float) -> str:
    try:
        parse_quantity(value)
    except QuantityError as exc:
        return exc.message
    return ""


class _IntOrString(Node):
    """``intstr.IntOrString``: a string, or else decoded as an int32 by a fresh decoder."""

    __slots__ = ()
    zero = 0

    def check(self, value: Any) -> Any:
        if type(value) is str:
            return value
        try:
            return INT32.check(value)
        except _Mismatch as m:
            m.message = f"json: cannot unmarshal {m.got} into Go value of type int32"
            raise


class _Time(Node):
    """``metav1.Time``: a string (its ``UnmarshalJSON`` unmarshals one first)."""

    __slots__ = ()

    def check(self, value: Any) -> Any:
        if type(value) is not str:
            raise _Mismatch(json_kind(value), "string", f"json: cannot unmarshal {json_kind(value)} "
                                                        "into Go value of type string")
        return value


class Struct(Node):
    """A Go struct: the listed JSON fields are checked, the others left alone."""

    __slots__ = ("name", "fields")

    def __init__(self, go_type: str, /, **fields: Node) -> None:
        super().__init__(go_type)
        self.name = go_type.rsplit(".", 1)[-1]
        self.fields = fields

    def extend(self, **fields: Node) -> "Struct":
        """The same struct with more (or replaced) fields."""
        return Struct(self.go_type, **{**self.fields, **fields})

    @property
    def zero(self) -> Any:
        return {}

    def check(self, value: Any) -> Any:
        if type(value) is not dict and not isinstance(value, Mapping):
            raise _Mismatch(json_kind(value), self.go_type)
        fields = self.fields
        out = None
        for key, item in value.items():
            node = fields.get(key)
            if node is None:
                continue  # unknown fields are kept as they are
            if item is None:
                new = _DROP  # a null field decodes to the zero value, which encodes as absent
            else:
                try:
                    new = node.check(item)
                except _Mismatch as m:
                    m.field(key, self.name)
                    raise
                if new is item:
                    continue
            if out is None:
                out = dict(value)
            if new is _DROP:
                del out[key]
            else:
                out[key] = new
        return value if out is None else out


class ListOf(Node):
    """A Go slice (``[]v1.Container``)."""

    __slots__ = ("elem",)

    def __init__(self, elem: Node, go_type: str = "") -> None:
        super().__init__(go_type or f"[]{elem.go_type}")
        self.elem = elem

    def check(self, value: Any) -> Any:
        if type(value) is not list:
            raise _Mismatch(json_kind(value), self.go_type)
        elem = self.elem
        if elem is ANY:
            return value
        out = None
        for i, item in enumerate(value):
            if item is None:
                new = elem.zero
            else:
                try:
                    new = elem.check(item)
                except _Mismatch as m:
                    m.path.append(f"[{i}]")
                    raise
                if new is item:
                    continue
            if out is None:
                out = list(value)
            out[i] = new
        return value if out is None else out


class MapOf(Node):
    """A Go map from strings (``map[string]string``, ``v1.ResourceList``). Errors name the
    entry (``resources.requests.cpu``) unless ``key_in_path`` is off: labels and other
    string maps are named as a whole, as upstream's validation names them."""

    __slots__ = ("elem", "key_in_path")

    def __init__(self, elem: Node, go_type: str = "", *, key_in_path: bool = True) -> None:
        super().__init__(go_type or f"map[string]{elem.go_type}")
        self.elem = elem
        self.key_in_path = key_in_path

    def check(self, value: Any) -> Any:
        if type(value) is not dict and not isinstance(value, Mapping):
            raise _Mismatch(json_kind(value), self.go_type)
        elem = self.elem
        out = None
        for key, item in value.items():
            if item is None:
                new = elem.zero
            else:
                try:
                    new = elem.check(item)
                except _Mismatch as m:
                    if self.key_in_path:
                        m.path.append(str(key))
                    raise
                if new is item:
                    continue
            if out is None:
                out = dict(value)
            out[key] = new
        return value if out is None else out


_DROP = object()
ANY: Node = _Any("interface {}")
STRING: Node = Str("string")
BOOL: Node = _Bool("bool")
INT32: Node = _Int("int32", 32)
INT64: Node = _Int("int64", 64)
FLOAT64: Node = _Float("float64")
QUANTITY: Node = _Quantity("resource.Quantity")
INT_OR_STRING: Node = _IntOrString("intstr.IntOrString")
TIME: Node = _Time("v1.Time")

def check(value: Any, schema: Node) -> Any:
    """Check ``value`` against ``schema`` and return it as Go would decode and encode it
    again (nulls of known fields dropped, null list items and map values the zero value;
    the input is never changed, only what differs is copied). Raise
    :class:`FieldTypeError` or :class:`QuantityError` for the first problem."""
    if value is None:
        return None
    try:
        return schema.check(value)
    except _Mismatch as m:
        cls: type[DecodeError] = QuantityError if m.quantity else FieldTypeError
        raise cls(m.render(), field=m.dotted()) from None
