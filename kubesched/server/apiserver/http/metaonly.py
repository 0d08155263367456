"""``PartialObjectMetadata`` and ``PartialObjectMetadataList`` (meta.k8s.io/v1): lists and
gets that return only each object's metadata, as client-go's metadata client and the
garbage collector-style informers ask for them.

A client asks with an ``Accept`` media range carrying ``as=PartialObjectMetadataList``
(lists) or ``as=PartialObjectMetadata`` (gets), ``g=meta.k8s.io`` and ``v=v1``; the
ranges are tried in order and the first this server can produce wins (the protobuf
ranges client-go lists first are skipped: responses are JSON). Asking a list for the
single form, or a get for the list form, is 406 NotAcceptable, as upstream.
"""

from __future__ import annotations

from typing import Any

from kubesched.server.apiserver import errors as E

GROUP_VERSION = "meta.k8s.io/v1"
ITEM, LIST = "PartialObjectMetadata", "PartialObjectMetadataList"


def requested(accept: str) -> str | None:
    """``PartialObjectMetadata``/``...List`` if the first range this server can serve asks
    for it; None for a plain object (or a Table, which :mod:`.tables` handles)."""
    for media_range in accept.split(","):
        parts = [p.strip() for p in media_range.split(";")]
        media = parts[0].lower()
        params = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
        if media not in ("application/json", "*/*", "application/*"):
            continue  # protobuf, yaml ...: not produced here
        as_ = params.get("as")
        if as_ in (ITEM, LIST) and params.get("g") == "meta.k8s.io" and params.get("v") in ("v1", "v1beta1"):
            return as_
        return None
    return None


def media_type(kind: str) -> str:
    return f"application/json;as={kind};g=meta.k8s.io;v=v1"


def _item(obj: dict[str, Any]) -> dict[str, Any]:
    return {"kind": ITEM, "apiVersion": GROUP_VERSION, "metadata": obj.get("metadata") or {}}


def convert(kind: str, obj: dict[str, Any], is_list: bool) -> dict[str, Any]:
    """The metadata-only form of an object or of a list response."""
    if is_list != (kind == LIST):
        raise E.ApiError(406, "NotAcceptable",
                         f"only the following media types are accepted: application/json;as={LIST if is_list else ITEM}"
                         ";g=meta.k8s.io;v=v1")
    if not is_list:
        return _item(obj)
    return {"kind": LIST, "apiVersion": GROUP_VERSION, "metadata": obj.get("metadata") or {},
            "items": [_item(o) for o in obj.get("items") or []]}
