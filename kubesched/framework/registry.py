"""Plugin registry: plugin name -> how to build it. Refuses duplicates.

``args`` parses a plugin's ``pluginConfig`` args (applying upstream's defaults and
validation, raising ProfileError naming the field); ``factory(args, handle)`` builds the
plugin. Custom plugins are registered the same way, or loaded by import path.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.framework.errors import ProfileError
from kubesched.framework.interface import Handle


@dataclass(frozen=True, slots=True)
class PluginSpec:
    name: str
    factory: Callable[[Any, Handle], Any]
    args: Callable[[Mapping[str, Any] | None, str], Any] | None = None


class Registry:
    def __init__(self, specs: Iterable[PluginSpec] = ()) -> None:
        self._specs: dict[str, PluginSpec] = {}
        for s in specs:
            self.register(s)

    def register(self, spec: PluginSpec) -> None:
        if spec.name in self._specs:
            raise ProfileError(f"a plugin named {spec.name!r} already exists")
        self._specs[spec.name] = spec

    def get(self, name: str) -> PluginSpec | None:
        return self._specs.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def names(self) -> list[str]:
        return list(self._specs)

    def merged(self, other: "Registry") -> "Registry":
        r = Registry(self._specs.values())
        for s in other._specs.values():
            r.register(s)
        return r


def load_plugin_spec(path: str, field: str) -> PluginSpec:
    """Load a custom plugin from ``module:attr``: a PluginSpec, or a class (whose
    ``name`` attribute names it) built as ``cls(args, handle)``."""
    mod_name, _, attr = path.partition(":")
    if not mod_name or not attr:
        raise ProfileError(f"plugin path {path!r} must look like 'package.module:Name'", field=field)
    try:
        obj = getattr(importlib.import_module(mod_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ProfileError(f"cannot load plugin {path!r}: {exc}", field=field) from exc
    if isinstance(obj, PluginSpec):
        return obj
    name = getattr(obj, "name", None)
    if not isinstance(name, str) or not name:
        raise ProfileError(f"plugin {path!r} has no 'name' attribute", field=field)
    parser = getattr(obj, "parse_args", None)
    return PluginSpec(name, obj, parser)
