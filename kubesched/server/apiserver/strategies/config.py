"""v1 ConfigMaps, Secrets and ServiceAccounts: upstream's defaulting and the validation
clients trip on.

ConfigMaps (``ValidateConfigMap``): ``data`` and ``binaryData`` together are limited to 1 MiB.

Secrets (``pkg/apis/core/validation`` ``ValidateSecret``, ``pkg/registry/core/secret``):
``type`` defaults to ``Opaque`` and may not change; ``stringData`` is merged into
``data`` (base64-encoded, overriding keys of the same name) and never stored, as the
API server's conversion does; keys must be valid config keys (``[-._a-zA-Z0-9]+``);
``data`` values must be base64; an ``immutable: true`` secret refuses changes to its
data and may not be made mutable again; the whole payload is limited to 1 MiB.

ServiceAccounts are metadata plus ``secrets``/``imagePullSecrets`` references; their
``token`` subresource (TokenRequest) is :mod:`.tokens`.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from kubesched.server.apiserver.strategies.base import Context, Strategy
from kubesched.server.apiserver.strategies.validation import Cause, forbidden, invalid

MAX_SECRET_SIZE = 1024 * 1024
_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
_KEY_MESSAGE = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name', " \
               " or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
# type -> keys upstream requires in data
_REQUIRED_KEYS = {"kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
                  "kubernetes.io/dockercfg": (".dockercfg",),
                  "kubernetes.io/basic-auth": (),
                  "kubernetes.io/ssh-auth": ("ssh-privatekey",),
                  "kubernetes.io/tls": ("tls.crt", "tls.key")}


def _merge_string_data(obj: dict[str, Any]) -> None:
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data: dict[str, Any] = obj["data"] if isinstance(obj.get("data"), dict) else {}
        for k, v in string_data.items():
            data[k] = base64.b64encode(str(v).encode()).decode()
        obj["data"] = data


class ConfigMapStrategy(Strategy):
    """ConfigMaps: ``data`` and ``binaryData`` hold at most 1 MiB together (``ValidateConfigMap``:
    ``field.TooLong(field.NewPath(""), ...)``, whose path prints as ``[]``)."""

    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        size = 0
        for field, binary in (("data", False), ("binaryData", True)):
            values = obj.get(field)
            if isinstance(values, dict):
                size += sum(_byte_length(v, binary) for v in values.values())
        if size > MAX_SECRET_SIZE:
            return [("FieldValueTooLong", "[]", f"Too long: may not be more than {MAX_SECRET_SIZE} bytes")]
        return []


def _byte_length(value: Any, binary: bool) -> int:
    """Go's ``len`` of a ``string`` (UTF-8 bytes) or of a ``[]byte`` sent as base64."""
    text = str(value)
    if binary:
        try:
            return len(base64.b64decode(text, validate=True))
        except (binascii.Error, ValueError):
            pass
    return len(text.encode("utf-8", "surrogatepass"))


class SecretStrategy(Strategy):
    def prepare_create(self, obj: dict[str, Any], ctx: Context) -> None:
        super().prepare_create(obj, ctx)
        _merge_string_data(obj)
        obj.setdefault("type", "Opaque")

    def prepare_update(self, new: dict[str, Any], old: dict[str, Any], subresource: str) -> dict[str, Any]:
        out = super().prepare_update(new, old, subresource)
        _merge_string_data(out)
        out.setdefault("type", old.get("type") or "Opaque")
        return out

    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        data = obj.get("data")
        if data is None:
            data = {}
        if not isinstance(data, dict):
            return [invalid("data", data, "must be an object of key to base64 value")]
        causes: list[Cause] = []
        size = 0
        for key, value in data.items():
            if not _KEY.match(str(key)):
                causes.append(invalid(f"data[{key}]", key, _KEY_MESSAGE))
            try:
                size += len(base64.b64decode(str(value), validate=True))
            except (binascii.Error, ValueError):
                causes.append(invalid(f"data[{key}]", "<secret contents redacted>",
                                      "illegal base64 data in secret value"))
        if size > MAX_SECRET_SIZE:
            causes.append(("FieldValueTooLong", "data", f"Too long: may not be more than {MAX_SECRET_SIZE} bytes"))
        stype = obj.get("type")
        if not isinstance(stype, str) or not stype:
            causes.append(("FieldValueRequired", "type", "Required value"))
        for key in _REQUIRED_KEYS.get(str(stype), ()):
            if key not in data:
                causes.append(("FieldValueRequired", f"data[{key}]", "Required value"))
        if stype == "kubernetes.io/service-account-token" and \
                not ((obj.get("metadata") or {}).get("annotations") or {}).get("kubernetes.io/service-account.name"):
            causes.append(("FieldValueRequired", "metadata.annotations[kubernetes.io/service-account.name]",
                           "Required value"))
        return causes

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: Context) -> list[Cause]:
        causes: list[Cause] = []
        if new.get("type") != old.get("type"):
            causes.append(invalid("type", new.get("type"), "field is immutable"))
        if old.get("immutable") is True:
            if new.get("immutable") is not True:
                causes.append(forbidden("immutable", "field is immutable when `immutable` is set"))
            if (new.get("data") or {}) != (old.get("data") or {}):
                causes.append(forbidden("data", "field is immutable when `immutable` is set"))
        return causes


class ServiceAccountStrategy(Strategy):
    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        causes: list[Cause] = []
        for field in ("secrets", "imagePullSecrets"):
            refs = obj.get(field)
            if refs is not None and not isinstance(refs, list):
                causes.append(invalid(field, refs, "must be a list of references"))
        return causes
