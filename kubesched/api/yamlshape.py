"""The bound every YAML reader of kubesched applies before it builds a single value.

YAML can describe values far larger than its text: an alias repeats the node its anchor
names, so ``&a [*a]`` (7 bytes) is a list that contains itself and nine nested aliases of
ten elements each (the "billion laughs") expand to a billion values. A loader builds such a
document cheaply, with shared references, but everything after it (a deep copy, a walk that
cleans values, JSON encoding) then loops forever or runs out of memory. go-yaml, which
kubectl and kube-apiserver use, refuses both ("excessive aliasing") and stops at a nesting
depth.

:func:`check_shape` reads the parser's event stream, which is linear in the text and builds
nothing, and refuses a document before it is constructed when

* an alias names a collection that is still open, i.e. the node refers to itself;
* its values, with every alias expanded, would number more than ``max_nodes``;
* collections nest deeper than ``max_depth``.

Both the offline manifest reader (:mod:`kubesched.api.documents`) and the API server's
request bodies (``kubesched.server.apiserver.decoding``) call it, each with its bounds.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["SELF_REFERENCE", "EXCESSIVE_ALIASING", "ShapeError", "check_shape", "nested_too_deeply"]

SELF_REFERENCE = "an alias refers to a node that contains it"
EXCESSIVE_ALIASING = "document contains excessive aliasing"

if hasattr(yaml, "CSafeLoader"):
    _EVENTS: Any = yaml.CSafeLoader
else:  # pragma: no cover - PyYAML built without libyaml
    _EVENTS = yaml.SafeLoader


def nested_too_deeply(max_depth: int) -> str:
    return f"exceeded max depth of {max_depth}"


class ShapeError(ValueError):
    """A document over a bound: ``message`` (one of the texts above), the 1-based document
    number and, where the parser knows it, the 1-based line and column."""

    def __init__(self, message: str, document: int, line: int = 0, column: int = 0, anchor: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.document = document
        self.line = line
        self.column = column
        self.anchor = anchor  # the alias's anchor, for SELF_REFERENCE


_COLLECTION_START = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_COLLECTION_END = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


def check_shape(text: str | bytes, *, max_depth: int, max_nodes: int, loader: Any = None) -> None:
    """Raise :class:`ShapeError` if a document of ``text`` is over a bound; let the parser's
    own ``yaml.YAMLError`` through for text that is not YAML. ``loader``: the loader class
    whose parser reads the events (libyaml's by default), so that a syntax error is
    reported in the words of the loader that would read the text."""
    doc, depth, total = 0, 0, 0
    sizes: dict[str, int] = {}  # anchor -> expanded values of its (closed) node
    open_anchors: set[str] = set()
    starts: list[tuple[str | None, int]] = []
    for ev in yaml.parse(text, Loader=loader or _EVENTS):
        if isinstance(ev, _COLLECTION_START):
            depth += 1
            if depth > max_depth:
                raise _at(nested_too_deeply(max_depth), doc, ev)
            if ev.anchor is not None:
                open_anchors.add(ev.anchor)
            starts.append((ev.anchor, total))
            total += 1
        elif isinstance(ev, _COLLECTION_END):
            depth -= 1
            anchor, began = starts.pop()
            if anchor is not None:
                open_anchors.discard(anchor)
                sizes[anchor] = total - began
        elif isinstance(ev, yaml.ScalarEvent):
            total += 1
            if ev.anchor is not None:
                sizes[ev.anchor] = 1
        elif isinstance(ev, yaml.AliasEvent):
            if ev.anchor in open_anchors:
                err = _at(SELF_REFERENCE, doc, ev)
                err.anchor = ev.anchor or ""
                raise err
            total += sizes.get(ev.anchor or "", 1)
        elif isinstance(ev, yaml.DocumentStartEvent):
            doc, depth, total = doc + 1, 0, 0
            sizes.clear()
            open_anchors.clear()
        if total > max_nodes:
            raise _at(EXCESSIVE_ALIASING, doc, ev)


def _at(message: str, doc: int, ev: Any) -> ShapeError:
    mark = getattr(ev, "start_mark", None)
    if mark is None:
        return ShapeError(message, max(doc, 1))
    return ShapeError(message, max(doc, 1), mark.line + 1, mark.column + 1)
