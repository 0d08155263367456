"""Field readers shared by the resource.k8s.io decoders (:mod:`kubesched.api.dra`,
:mod:`kubesched.api.drasharing`): one error wording for every DRA object."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kubesched.api.errors import DecodeError

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def _map(obj: Any, path: str) -> Mapping[str, Any]:
    if obj is None:
        return {}
    if not isinstance(obj, Mapping):
        raise DecodeError("must be an object", field=path)
    return obj


def _list(obj: Any, path: str) -> list[Any]:
    if obj is None:
        return []
    if not isinstance(obj, list):
        raise DecodeError("must be a list", field=path)
    return obj


def _str(obj: Any, path: str, required: bool = True) -> str:
    if obj is None or obj == "":
        if required:
            raise DecodeError("Required value", field=path)
        return ""
    if not isinstance(obj, str):
        raise DecodeError(f"must be a string, got {obj!r}", field=path)
    return obj


def _dns_label(obj: Any, path: str) -> str:
    s = _str(obj, path)
    if len(s) > 63 or not _DNS_LABEL.match(s):
        raise DecodeError(f'Invalid value: "{s}": a lowercase RFC 1123 label must consist of lower case '
                          "alphanumeric characters or '-', and must start and end with an alphanumeric "
                          "character", field=path)
    return s
