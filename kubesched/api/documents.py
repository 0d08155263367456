"""Reading YAML and JSON text into documents, as ``kubectl`` reads a manifest.

Why this exists: kubectl turns YAML into JSON (sigs.k8s.io/yaml: go-yaml, then
``json.Marshal``) and reads JSON into float64/int64 values before it sends anything, so
some text never reaches an API server: ``.inf``/``.nan`` (JSON has no such numbers), a JSON
number out of float64's range, an alias that contains itself or expands without bound
("excessive aliasing"). Those are refused here with one line naming the file and, for
YAML, the place; aliases are judged from the parser's events before any value is built
(:mod:`kubesched.api.yamlshape`, the bound the API server's request bodies use too). YAML-only values are read as kubectl converts them: ``!!binary`` as its
text, ``!!set`` as a map of nulls, a float literal out of float64's range as a string
(go-yaml's ``strconv.ParseFloat`` fails on it), an integral float as an integer (``10.0``
is sent as ``10``), timestamps as strings. PyYAML's C loader
bounds nesting (1000 levels); JSON nested deeper than Python can parse is refused.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import yaml

from kubesched.api.errors import DecodeError
from kubesched.api.yamlshape import EXCESSIVE_ALIASING, SELF_REFERENCE, ShapeError, check_shape

__all__ = ["documents"]

if hasattr(yaml, "CSafeLoader"):
    _BaseLoader: Any = yaml.CSafeLoader
else:  # pragma: no cover - PyYAML built without libyaml
    _BaseLoader = yaml.SafeLoader
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MAX_ALIASED_NODES = 1_000_000  # values of a document with its aliases expanded
_MAX_DEPTH = 1000  # libyaml's own nesting bound


class _Loader(_BaseLoader):  # type: ignore[misc]
    """Safe loading, with timestamps kept as strings (as the API server's JSON has them)."""


_Loader.yaml_implicit_resolvers = {
    k: [r for r in v if r[0] != _TIMESTAMP] for k, v in _BaseLoader.yaml_implicit_resolvers.items()}
_Loader.add_constructor(_TIMESTAMP, yaml.SafeLoader.construct_yaml_str)


def _as_sent(value: float) -> float | int:
    """A float64 as kubectl's ``json.Marshal`` writes it: an integral value below 1e21 has
    no fraction or exponent (``10.0`` is sent as ``10``), so it decodes into an integer field."""
    return int(value) if value.is_integer() and abs(value) < 1e21 else value


def _finite_float(loader: Any, node: Any) -> float | int | str:
    """``.inf``/``.nan`` cannot be sent as JSON; a float literal out of float64's range is
    a string to kubectl's YAML parser (it fails ``strconv.ParseFloat``), so it is one here."""
    value: float = yaml.SafeLoader.construct_yaml_float(loader, node)
    if math.isfinite(value):
        return _as_sent(value)
    if "inf" in node.value.lower() or "nan" in node.value.lower():
        raise yaml.constructor.ConstructorError(
            None, None, f"{node.value} is not a JSON number (JSON has no Infinity or NaN)", node.start_mark)
    return str(node.value)


def _binary_text(loader: Any, node: Any) -> str:
    data: bytes = yaml.SafeLoader.construct_yaml_binary(loader, node)
    return data.decode("utf-8", "replace")


def _set_as_map(loader: Any, node: Any) -> dict[Any, None]:
    return {loader.construct_object(k): None for k, _ in node.value}


def _pairs_as_list(loader: Any, node: Any) -> list[Any]:
    return [loader.construct_object(item, deep=True) for item in node.value]


def _strict(construct: Any) -> Any:
    """A scalar constructor whose bad input (``!!int x``) is a YAML error with its place."""
    def run(loader: Any, node: Any) -> Any:
        try:
            return construct(loader, node)
        except (ValueError, KeyError, TypeError, OverflowError):
            tag = str(node.tag).rsplit(":", 1)[-1]
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read {str(node.value)[:40]!r} as !!{tag}", node.start_mark) from None
    return run


# What kubectl's YAML-to-JSON conversion makes of YAML-only values.
_Loader.add_constructor("tag:yaml.org,2002:float", _strict(_finite_float))
_Loader.add_constructor("tag:yaml.org,2002:int", _strict(yaml.SafeLoader.construct_yaml_int))
_Loader.add_constructor("tag:yaml.org,2002:bool", _strict(yaml.SafeLoader.construct_yaml_bool))
_Loader.add_constructor("tag:yaml.org,2002:binary", _binary_text)
_Loader.add_constructor("tag:yaml.org,2002:set", _set_as_map)
_Loader.add_constructor("tag:yaml.org,2002:omap", _pairs_as_list)
_Loader.add_constructor("tag:yaml.org,2002:pairs", _pairs_as_list)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _json_float(text: str) -> float | int:
    """A JSON number as kubectl reads it (float64) and sends it again: one out of range is
    refused, an integral one is sent as an integer."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"json: cannot unmarshal number {text} into Go value of type float64")
    return _as_sent(value)


def documents(path: str, text: str, duplicates: Duplicates | None = None) -> Iterator[tuple[int, Any]]:
    """The documents of ``text`` (read from ``path``), numbered from 1; ``None`` for an
    empty YAML document. Raises :class:`DecodeError` naming ``path``. With ``duplicates``,
    the paths of fields named twice in one object are recorded there by document number
    (the value read is the last one, as a lenient JSON decoder keeps)."""
    if path.endswith(".json"):
        yield from _json_documents(path, text, duplicates)
        return
    try:
        if "*" in text:  # without an alias no document can refer to itself or expand
            check_shape(text, max_depth=_MAX_DEPTH, max_nodes=_MAX_ALIASED_NODES)
        for n, obj in enumerate(_yaml_documents(text, duplicates), 1):
            yield n, obj
    except ShapeError as exc:
        if exc.message in (SELF_REFERENCE, EXCESSIVE_ALIASING):
            raise DecodeError(f"invalid YAML: {exc.message}", obj=f"document {exc.document}", file=path) from None
        raise DecodeError(f"invalid YAML at line {exc.line}, column {exc.column}: {exc.message}", file=path) from None
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, path) from None
    except RecursionError:  # PyYAML without libyaml composes recursively
        raise DecodeError("invalid YAML: nested too deeply", file=path) from None


def _json_documents(path: str, text: str, duplicates: Duplicates | None) -> Iterator[tuple[int, Any]]:
    if not text.strip():
        return
    twice: dict[int, list[str]] = {}

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(items)
        if len(out) != len(items):
            seen: set[str] = set()
            twice[id(out)] = [k for k, _ in items if k in seen or seen.add(k)]  # type: ignore[func-returns-value]
        return out

    hook = pairs if duplicates is not None else None
    try:
        obj = json.loads(text, parse_constant=_no_constant, parse_float=_json_float, object_pairs_hook=hook)
    except json.JSONDecodeError as exc:
        raise DecodeError(f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", file=path) from None
    except ValueError as exc:  # NaN, Infinity, out of range
        raise DecodeError(f"invalid JSON: {exc}", file=path) from None
    except RecursionError:
        raise DecodeError("invalid JSON: nested too deeply", file=path) from None
    if twice and duplicates is not None:
        duplicates[1] = _paths_of(obj, twice)
    yield 1, obj


Duplicates = dict[int, list[str]]  # document number -> paths of the fields named twice


def _paths_of(obj: Any, twice: dict[int, list[str]]) -> list[str]:
    """The paths (``spec.containers[0].name``) of the keys ``twice`` records by object id."""
    out: list[str] = []
    stack: list[tuple[Any, str]] = [(obj, "")]
    while stack:
        cur, path = stack.pop()
        if isinstance(cur, dict):
            out += [f"{path}.{k}" if path else k for k in twice.get(id(cur), ())]
            stack += [(v, f"{path}.{k}" if path else k) for k, v in cur.items()]
        elif isinstance(cur, list):
            stack += [(v, f"{path}[{i}]") for i, v in enumerate(cur)]
    return sorted(out)


class _CheckingLoader(_Loader):
    """:class:`_Loader` that notes the mappings naming a key twice (PyYAML keeps the last)."""

    twice: dict[int, list[str]]

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        keys = [k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)]
        out = super().construct_mapping(node, deep=deep)
        if len(set(keys)) != len(keys):
            seen: set[str] = set()
            self.twice[id(node)] = [k for k in keys if k in seen or seen.add(k)]  # type: ignore[func-returns-value]
        return out


def _yaml_documents(text: str, duplicates: Duplicates | None) -> Iterator[Any]:
    if duplicates is None:
        yield from yaml.load_all(text, Loader=_Loader)
        return
    loader = _CheckingLoader(text)
    try:
        n = 0
        while loader.check_node():
            n += 1
            node = loader.get_node()
            loader.twice = {}
            obj = loader.construct_document(node)
            if loader.twice:
                duplicates[n] = _node_paths(node, loader.twice)
            yield obj
    finally:
        loader.dispose()


def _node_paths(root: Any, twice: dict[int, list[str]]) -> list[str]:
    """As :func:`_paths_of`, over YAML nodes (the keys PyYAML's constructor already merged)."""
    out: list[str] = []
    stack: list[tuple[Any, str]] = [(root, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, yaml.MappingNode):
            out += [f"{path}.{k}" if path else k for k in twice.get(id(node), ())]
            stack += [(v, f"{path}.{k.value}" if path else str(k.value)) for k, v in node.value]
        elif isinstance(node, yaml.SequenceNode):
            stack += [(v, f"{path}[{i}]") for i, v in enumerate(node.value)]
    return sorted(set(out))


def _yaml_error(exc: yaml.YAMLError, path: str) -> DecodeError:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is None:
        return DecodeError(f"invalid YAML: {problem}", file=path)
    return DecodeError(f"invalid YAML at line {mark.line + 1}, column {mark.column + 1}: {problem}",
                       file=path)
