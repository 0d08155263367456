"""The protobuf field tables, derived from the declared types (:mod:`kubesched.api.types`).

message -> field number -> (JSON name, type, flags). Types: ``s`` string, ``i`` integer,
``b`` bool, ``y`` bytes, ``t`` Time, ``mt`` MicroTime, ``q`` Quantity, ``x`` IntOrString,
``j`` FieldsV1 (JSON in its bytes field 1), ``a`` RawExtension (any JSON, in its bytes
field 1), ``m:Name`` a message; flags ``r`` repeated, ``k`` a map with string keys and values of the type (entries
``{key = 1; value = 2}``), ``p`` pointer (zero values are kept), ``n`` embedded (members
in the parent).

A message is named by its Go name, or ``<apiVersion>/<Name>`` where two groups share the
name (``v1/Event`` and ``events.k8s.io/v1/Event``).
"""

from __future__ import annotations

import collections

from kubesched.api.types import GROUPS, TYPES, Field, ref

F = tuple[str, str, str]
_SCALARS = {"s": "s", "b": "b", "i32": "i", "i64": "i", "y": "y", "t": "t", "mt": "mt", "q": "q", "x": "x", "j": "j",
            "any": "a"}
_SHARED = {name for name, n in collections.Counter(name for _, name in TYPES).items() if n > 1}


def message_name(group: str, name: str) -> str:
    return f"{GROUPS[group][0]}/{name}" if name in _SHARED else name


def _type(f: Field) -> str:
    target = ref(f.type)
    if target is not None:
        return "m:" + message_name(*target)
    return _SCALARS[f.element]


def _table(fields: tuple[Field, ...]) -> dict[int, F]:
    return {f.number: (f.json, _type(f), "r" * f.is_list + "k" * f.is_map + "p" * f.pointer + "n" * f.embedded)
            for f in fields if f.number is not None}


SCHEMA: dict[str, dict[int, F]] = {message_name(*key): _table(message.fields) for key, message in TYPES.items()}
