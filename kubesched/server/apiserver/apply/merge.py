"""Merging an applied configuration into a live object, and removing fields from one.

Structured-merge-diff's merge (``typed/merge.go``): maps merge key by key, the applied
value winning on scalars; associative lists merge item by item (matched by their keys),
set lists as sets, atomic lists and maps are replaced whole. In a merged list the applied
items keep the applied order and live-only items keep their place among them.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from kubesched.server.apiserver.apply.fieldpath import Path, item_element, names_of
from kubesched.server.apiserver.apply.schema import atomic_map, list_kind


def merge(live: Any, config: Any, names: tuple[str, ...]) -> Any:
    """``config`` merged into ``live``; ``names``: the kind's definition name, then the field path."""
    if isinstance(config, dict) and isinstance(live, dict) and not (len(names) > 1 and atomic_map(names)):
        out = dict(live)
        for k, v in config.items():
            if v is None:
                out.pop(k, None)
            else:
                out[k] = merge(live.get(k), v, names + (k,))
        return out
    if isinstance(config, list) and isinstance(live, list) and len(names) > 1:
        kind, keys = list_kind(names)
        if kind == "set":
            return _merge_ordered(live, config, lambda v: json.dumps(v, sort_keys=True), lambda a, b: b)
        if kind == "map":
            return _merge_ordered(live, config, lambda v: item_element(v, keys),
                                  lambda a, b: merge(a, b, names))
    return copy.deepcopy(config)


def _merge_ordered(live: list[Any], config: list[Any], ident: Any, combine: Any) -> list[Any]:
    """Walk both lists: applied-only items come out where the configuration has them, live-only
    items where the live list has them, shared items (merged) in the configuration's order."""
    live_ids = [ident(x) for x in live]
    config_ids = [ident(x) for x in config]
    live_by = dict(zip(live_ids, live))
    in_live, in_config = set(live_ids), set(config_ids)
    out: list[Any] = []
    done: set[str] = set()
    li = ri = 0
    while li < len(live) or ri < len(config):
        if li < len(live) and live_ids[li] in done:
            li += 1
        elif ri < len(config) and config_ids[ri] not in in_live:
            out.append(copy.deepcopy(config[ri]))
            ri += 1
        elif li < len(live) and (live_ids[li] not in in_config or ri >= len(config)):
            out.append(live[li])
            li += 1
        else:
            cid = config_ids[ri]
            out.append(combine(live_by[cid], config[ri]))
            done.add(cid)
            ri += 1
    return out


def remove(obj: dict[str, Any], path: Path, root: str) -> None:
    """Remove the member ``path`` from ``obj`` (in place); a missing path is ignored."""
    parent: Any = obj
    for depth, e in enumerate(path):
        last = depth == len(path) - 1
        names = (root,) + names_of(path[:depth + 1])
        if e.startswith("f:") and isinstance(parent, dict):
            if last:
                parent.pop(e[2:], None)
                return
            parent = parent.get(e[2:])
        elif e[:2] in ("k:", "v:") and isinstance(parent, list):
            if e.startswith("k:"):
                _kind, keys = list_kind(names)
                match = [i for i, x in enumerate(parent) if item_element(x, keys) == e]
            else:
                match = [i for i, x in enumerate(parent) if "v:" + json.dumps(x, separators=(",", ":"),
                                                                              sort_keys=True) == e]
            if not match:
                return
            if last:
                del parent[match[0]]
                return
            parent = parent[match[0]]
        else:
            return
