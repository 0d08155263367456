"""The notation the group/version modules of :mod:`kubesched.api.types` declare types in,
and its reading into :class:`Message` and :class:`Field` values.

Why a notation: one line per field carries every wire fact upstream derives from a
``types.go`` field (JSON name, Go type, protobuf number, pointer/embedded, list semantics,
required), so the decode checks, OpenAPI, field validation, server-side apply and protobuf
all read one declaration instead of keeping parallel tables in step.

A message is ``field; field; ...``, prefixed ``(atomic)`` for a struct replaced as a whole
by server-side apply (``+structType=atomic``); a field is ``jsonName[!] type [number[flags]]``:

- ``!``: required (the field has no ``omitempty``/``+optional``).
- type: ``s`` string, ``b`` bool, ``i32``/``i64`` integers, ``f64`` float64, ``y`` bytes
  (base64 in JSON), ``q`` Quantity, ``t`` Time, ``mt`` MicroTime, ``x`` IntOrString, ``j``
  FieldsV1, ``any`` free-form JSON, ``@group:Name`` a message; ``[]T`` a list, with its
  ``+listType``: ``[atomic]T``, ``[set]T``, ``[map=k1,k2]T`` (an associative list keyed by
  k1, k2, merged by strategic merge patch on k1), ``[set/merge]T`` (a set with
  ``+patchStrategy=merge``); ``{}T`` a map with string keys.
- Go named types, which Go's decoding errors print: ``s<TaintEffect>`` a named string,
  ``{ResourceList}q`` a named map; a name without a package is in the group's ``v1``.
- number: the protobuf field number (absent: the field is not read from or written to
  protobuf); flags ``p`` a Go pointer (its zero value is kept), ``n`` an embedded struct
  (its members sit in the parent's JSON object, as ``Volume``'s ``VolumeSource``).
"""

from __future__ import annotations

import dataclasses
import re

SCALARS = {"s": "string", "b": "bool", "i32": "int32", "i64": "int64", "f64": "float64", "y": "[]byte",
           "q": "resource.Quantity", "t": "metav1.Time", "mt": "metav1.MicroTime", "x": "intstr.IntOrString",
           "j": "metav1.FieldsV1", "any": "runtime.RawExtension"}


@dataclasses.dataclass(frozen=True)
class Field:
    """One field of a message, with every wire fact of it."""

    json: str
    type: str  # without Go type names (see :attr:`named`)
    required: bool = False
    number: int | None = None
    pointer: bool = False
    embedded: bool = False
    named: str = ""  # the type with its Go type names (``s<TaintEffect>``), when it has any

    @property
    def go_spec(self) -> str:
        return self.named or self.type

    @property
    def element(self) -> str:
        """The type without its list or map prefix: ``s``, ``@core:Toleration`` ..."""
        return element(self.type)

    @property
    def is_list(self) -> bool:
        return self.type.startswith("[")

    @property
    def is_map(self) -> bool:
        return self.type.startswith("{}")

    @property
    def go_type(self) -> str:
        """The Go type as types.go spells it (package-qualified for apimachinery types)."""
        return ("*" if self.pointer else "") + go_type(self.go_spec)


@dataclasses.dataclass(frozen=True)
class Message:
    """A Go struct of a group/version (``group`` as the modules name it: ``core``, ``apps`` ...)."""

    group: str
    name: str
    fields: tuple[Field, ...]
    protobuf_only: bool = False  # served in protobuf, with no OpenAPI definition
    atomic: bool = False

    def field(self, json: str) -> Field | None:
        return next((f for f in self.fields if f.json == json), None)


_NAMES = re.compile(r"<[^>]*>|(?<=\{)[^}]+(?=\})")


def element(spec: str) -> str:
    """The type without its list or map prefixes (and names): ``s``, ``@core:Toleration`` ..."""
    spec = _NAMES.sub("", spec)
    while spec.startswith(("[", "{}")):
        spec = spec[2:] if spec.startswith("{}") else spec.split("]", 1)[1]
    return spec


def go_name(name: str) -> str:
    """A Go type name as Go's errors print it: package-qualified (the groups' package is ``v1``)."""
    return name if "." in name else "v1." + name


def go_type(spec: str) -> str:
    if spec.startswith("{"):
        name, rest = spec[1:].split("}", 1)
        return name or "map[string]" + go_type(rest)
    if spec.startswith("["):
        return "[]" + go_type(spec.split("]", 1)[1])
    if spec.startswith("@"):
        return spec.split(":", 1)[1]
    if spec.endswith(">"):
        return spec[spec.index("<") + 1:-1]
    return SCALARS[spec]


def parse_field(entry: str) -> Field:
    """``tolerationSeconds i64 5p`` -> Field("tolerationSeconds", "i64", number=5, pointer=True)."""
    name, named, *rest = entry.split()
    typ = _NAMES.sub("", named)
    number: int | None = None
    flags = ""
    if rest:
        digits = rest[0].rstrip("pn")
        number, flags = int(digits), rest[0][len(digits):]
    return Field(name.rstrip("!"), typ, name.endswith("!"), number, "p" in flags, "n" in flags,
                 named if named != typ else "")


def parse_message(group: str, name: str, spec: str, protobuf_only: bool = False) -> Message:
    atomic = spec.startswith("(atomic) ")
    fields = tuple(parse_field(e) for e in spec.removeprefix("(atomic) ").split(";"))
    return Message(group, name, fields, protobuf_only, atomic)
