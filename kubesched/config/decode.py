"""Strict decoding of a YAML configuration, as upstream's strict serializer does it.

Upstream decodes the file with unknown and duplicate fields treated as errors and Go's
typed JSON rules (an int32 field refuses ``"5"`` and ``1.5``, a ``metav1.Duration``
wants a Go duration string). This module reproduces those rules for plain Python data and
records the YAML line of every field it reads, so later errors can point at a line.
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Collection, Mapping
from fractions import Fraction
from typing import Any

import yaml

from kubesched.config.errors import ConfigDecodeError, ConfigSyntaxError, FieldError

log = logging.getLogger(__name__)

_INT_BITS = {32: (-(2**31), 2**31 - 1), 64: (-(2**63), 2**63 - 1)}
_UNITS_NS = {"ns": 1, "us": 10**3, "µs": 10**3, "μs": 10**3, "ms": 10**6, "s": 10**9,
             "m": 60 * 10**9, "h": 3600 * 10**9}
_NUMBER = re.compile(r"(\d*)(?:\.(\d*))?")
_UNIT = re.compile(r"[^\d.]*")


class LineDict(dict[Any, Any]):
    """A YAML mapping that remembers the (1-based) line of each key."""

    lines: dict[Any, int]


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> LineDict:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
            if key_node.value in seen:
                raise ConfigDecodeError(f'key "{key_node.value}" already set in map',
                                        line=key_node.start_mark.line + 1)
            seen.add(key_node.value)
    loader.flatten_mapping(node)
    out = LineDict()
    out.lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            out[key] = loader.construct_object(value_node, deep=True)
        except TypeError as exc:
            raise ConfigSyntaxError(f"invalid YAML key: {exc}", line=key_node.start_mark.line + 1) from exc
        out.lines[key] = key_node.start_mark.line + 1
    return out


class _Loader(yaml.SafeLoader):
    pass


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def parse_yaml(text: str) -> Any:
    """One YAML document, mappings as :class:`LineDict`. Raises ConfigSyntaxError (with
    the line) on malformed YAML and ConfigDecodeError on a repeated key."""
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        msg = " ".join(p for p in (exc.context, exc.problem) if p) or "malformed YAML"
        raise ConfigSyntaxError(f"invalid YAML: {msg}",
                                line=mark.line + 1 if mark is not None else None) from exc
    except yaml.YAMLError as exc:
        raise ConfigSyntaxError(f"invalid YAML: {exc}") from exc


def parse_go_duration(text: str) -> float:
    """Go's ``time.ParseDuration``, in seconds (whole nanoseconds, as Go keeps them)."""
    bad = ValueError(f'time: invalid duration "{text}"')
    rest, sign = text, 1
    if rest[:1] in ("+", "-"):
        sign, rest = (-1 if rest[0] == "-" else 1), rest[1:]
    if rest == "0":
        return 0.0
    if not rest:
        raise bad
    total = Fraction(0)
    while rest:
        num = _NUMBER.match(rest)
        assert num is not None
        whole, frac = num.group(1), num.group(2)
        if not whole and not frac:
            raise bad
        rest = rest[num.end():]
        unit_m = _UNIT.match(rest)
        assert unit_m is not None
        unit = unit_m.group(0)
        rest = rest[unit_m.end():]
        if not unit:
            raise ValueError(f'time: missing unit in duration "{text}"')
        if unit not in _UNITS_NS:
            raise ValueError(f'time: unknown unit "{unit}" in duration "{text}"')
        value = Fraction(int(whole or "0")) + (Fraction(int(frac), 10 ** len(frac)) if frac else 0)
        total += value * _UNITS_NS[unit]
    ns = int(total)
    if ns > 2**63 - 1:
        raise bad
    return sign * ns / 1e9


def format_go_duration(seconds: float) -> str:
    return f"{seconds:g}s"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


def child(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


class Decoder:
    """Reads typed fields strictly, collecting every error (as Go's strict decoder lists
    every unknown field) and the YAML line of every field path it visits."""

    def __init__(self) -> None:
        self.errors: list[FieldError] = []
        self.lines: dict[str, int] = {}

    def line_of(self, path: str) -> int | None:
        """The line of ``path`` or of its nearest enclosing field."""
        while path:
            if path in self.lines:
                return self.lines[path]
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""
        return None

    def fail(self, path: str, message: str) -> None:
        self.errors.append(FieldError(path, message, self.line_of(path)))

    def object(self, value: Any, path: str, fields: Collection[str]) -> Mapping[str, Any] | None:
        """``value`` as an object with only ``fields``; None (and an error) otherwise."""
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.fail(path, f"expected an object, got {_kind(value)}")
            return None
        lines = getattr(value, "lines", {})
        if lines and path not in self.lines:  # a list item: where its first key is
            self.lines[path] = min(lines.values())
        for key in value:
            p = child(path, str(key))
            if key in lines:
                self.lines[p] = lines[key]
            if key not in fields:
                close = difflib.get_close_matches(str(key), list(fields), n=1)
                hint = f' (did you mean "{close[0]}"?)' if close else ""
                self.fail(p, f'unknown field "{key}"{hint}')
        return value

    def array(self, obj: Mapping[str, Any] | None, key: str, path: str) -> list[Any]:
        value = None if obj is None else obj.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(child(path, key), f"expected an array, got {_kind(value)}")
            return []
        return value

    def scalar(self, obj: Mapping[str, Any] | None, key: str, path: str, kind: str) -> Any:
        """Field ``key`` of ``obj`` as ``kind`` (int32, int64, float32, bool, string,
        duration); None when absent, null or wrong (the error is recorded)."""
        value = None if obj is None else obj.get(key)
        if value is None:
            return None
        p = child(path, key)
        if kind in ("int32", "int64"):
            # Go decodes YAML through JSON, so an integral float (1.0) is accepted.
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if isinstance(value, bool) or not isinstance(value, int):
                self.fail(p, f"expected an integer ({kind}), got {_kind(value)}")
                return None
            lo, hi = _INT_BITS[int(kind[3:])]
            if not lo <= value <= hi:
                self.fail(p, f"value {value} overflows {kind}")
                return None
            return value
        if kind == "float32":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self.fail(p, f"expected a number, got {_kind(value)}")
                return None
            return float(value)
        if kind == "bool":
            if not isinstance(value, bool):
                self.fail(p, f"expected a boolean, got {_kind(value)}")
                return None
            return value
        if not isinstance(value, str):
            self.fail(p, f"expected a string, got {_kind(value)}")
            return None
        if kind == "duration":
            try:
                return parse_go_duration(value)
            except ValueError as exc:
                self.fail(p, str(exc))
                return None
        return value
