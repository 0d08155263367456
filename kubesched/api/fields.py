"""Reading typed fields out of decoded JSON, with the errors the API server's JSON decoding
gives (a number where a string map belongs, a string where an integer belongs)."""

from __future__ import annotations

from typing import Any

from kubesched.api.errors import DecodeError
from kubesched.api.validation import string_map

LABELS = "ObjectMeta.metadata.labels"
ANNOTATIONS = "ObjectMeta.metadata.annotations"


def map_field(obj: Any, path: str, go_field: str = LABELS) -> dict[str, str]:
    """A map of strings; a number or boolean value is rejected as the API server's JSON
    decoding rejects it."""
    return string_map(obj, path, go_field)


def list_field(obj: Any, path: str) -> list[Any]:
    if obj is None:
        return []
    if not isinstance(obj, list):
        raise DecodeError("must be a list", field=path)
    return obj


def int_field(obj: Any, path: str, default: int = 0) -> int:
    if obj is None:
        return default
    if isinstance(obj, bool) or not isinstance(obj, int):
        raise DecodeError(f"must be an integer, got {obj!r}", field=path)
    return obj
