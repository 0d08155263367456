"""Field paths, field sets and their ``fieldsV1`` encoding, as structured-merge-diff has them.

A path is a tuple of elements, each written as in ``fieldsV1``: ``f:<field>`` (a struct
field or map key), ``k:<json object>`` (an item of an associative list, by its keys, sorted
by key name), ``v:<json value>`` (an item of a set list) and ``i:<index>``. A set is a
Python ``set`` of paths. :func:`flatten` walks an object and yields every member path with
its value: leaves (scalars, atomic lists and maps, empty maps) and the items of
associative and set lists; a set of fields is the keys of that mapping.

In ``fieldsV1`` every member is a key of its parent; a member that also has children
carries the child ``"."``: ``{"f:metadata": {"f:labels": {"f:app": {}}}}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from kubesched.server.apiserver.apply.schema import KEY_DEFAULTS, list_kind, atomic_map

Path = tuple[str, ...]


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def item_element(item: Any, keys: tuple[str, ...]) -> str:
    """The ``k:`` element of an associative list item (missing keys take their defaults)."""
    obj = item if isinstance(item, dict) else {}
    ident = {}
    for k in keys:
        v = obj.get(k, KEY_DEFAULTS.get(k))
        if v is not None:
            ident[k] = v
    return "k:" + _json(ident)


def names_of(path: Path) -> tuple[str, ...]:
    """The field names along ``path`` (list item elements left out)."""
    return tuple(e[2:] for e in path if e.startswith("f:"))


def flatten(obj: Any, path: Path, names: tuple[str, ...]) -> Iterator[tuple[Path, Any, bool]]:
    """Every member path of ``obj`` with its value and whether it is a leaf; ``names`` starts with
    the definition name of the object's kind (see :mod:`.schema`). Collected in one recursive
    pass into a list (nested generators cost a resume per level for every member: this runs
    on every attributed write)."""
    out: list[tuple[Path, Any, bool]] = []
    _collect(obj, path, names, out)
    return iter(out)


def _collect(obj: Any, path: Path, names: tuple[str, ...], out: list[tuple[Path, Any, bool]]) -> None:
    if isinstance(obj, dict) and obj and not (path and atomic_map(names)):
        for k, v in obj.items():
            _collect(v, path + ("f:" + k,), names + (k,), out)
        return
    if isinstance(obj, list) and obj and path:
        kind, keys = list_kind(names)
        if kind == "set":
            for v in obj:
                out.append((path + ("v:" + _json(v),), v, True))
            return
        if kind == "map":
            for item in obj:
                ipath = path + (item_element(item, keys),)
                out.append((ipath, item, False))
                if isinstance(item, dict):
                    for k, v in item.items():
                        _collect(v, ipath + ("f:" + k,), names + (k,), out)
            return
    if path:
        out.append((path, obj, True))


def field_set(obj: Any, root: str) -> set[Path]:
    return {p for p, _v, _leaf in flatten(obj, (), (root,))}


def to_fields_v1(fields: Iterable[Path]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    members = set(fields)
    for path in sorted(members):
        node = root
        for e in path:
            node = node.setdefault(e, {})
    for path in members:
        node = root
        for e in path:
            node = node[e]
        if node:
            node["."] = {}
    return root


def from_fields_v1(tree: Any, prefix: Path = ()) -> set[Path]:
    """The set a ``fieldsV1`` tree encodes; a malformed tree raises ValueError."""
    if not isinstance(tree, dict):
        raise ValueError(f"fieldsV1 at {path_string(prefix) or '.'} must be an object")
    out: set[Path] = set()
    for k, v in tree.items():
        if k == ".":
            out.add(prefix)
            continue
        if k[:2] not in ("f:", "k:", "v:", "i:"):
            raise ValueError(f"fieldsV1: unknown element {k!r}")
        child = prefix + (k,)
        if isinstance(v, dict) and not v:
            out.add(child)
        else:
            out |= from_fields_v1(v, child)
    return out


def path_string(path: Path) -> str:
    """A path as upstream prints it in conflicts: ``.spec.containers[name="web"].image``."""
    out = []
    for e in path:
        kind, rest = e[:2], e[2:]
        if kind == "f:":
            out.append("." + rest)
        elif kind == "k:":
            keys = json.loads(rest)
            out.append("[" + ",".join(f"{k}={_json(v)}" for k, v in sorted(keys.items())) + "]")
        elif kind == "v:":
            out.append("[=" + rest + "]")
        else:
            out.append("[" + rest + "]")
    return "".join(out)


def with_descendants_owned(paths: set[Path], owned: set[Path]) -> set[Path]:
    """The paths of ``paths`` that are, or have a descendant, in ``owned``."""
    prefixes: set[Path] = set()
    for p in owned:
        for i in range(1, len(p) + 1):
            prefixes.add(p[:i])
    return paths & prefixes
