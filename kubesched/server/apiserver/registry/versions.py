"""Resource versions as clients send them back: a ``resourceVersion`` precondition and the
``continue`` token of a paginated list (an opaque base64 of the revision and the key to
start after), with the errors kube-apiserver gives for bad ones."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from kubesched.server.apiserver import errors as E


def parse_rv(value: Any) -> int | None:
    if value in (None, ""):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise E.bad_request(f"invalid resourceVersion {value!r}") from None


def encode_continue(rv: int, key: tuple[str, str]) -> str:
    raw = json.dumps({"v": 1, "rv": rv, "start": list(key)}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, tuple[str, str]]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        doc = json.loads(raw)
        ns, name = doc["start"]
        return int(doc["rv"]), (str(ns), str(name))
    except (ValueError, KeyError, TypeError, binascii.Error, RecursionError):
        raise E.bad_request("continue key is not valid: incorrect encoded start resourceVersion "
                            "(version meta.k8s.io/v1)") from None
