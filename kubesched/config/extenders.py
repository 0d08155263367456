"""``extenders:`` of a KubeSchedulerConfiguration: decoding, defaulting and validation.

Kept apart from ``load.py`` because an extender entry has its own nested types (TLS,
managed resources) and upstream validates them separately (``validateExtenders``). The
HTTP client that calls them lives outside the scheduling core (``kubesched.cluster``).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from kubesched.config.decode import Decoder, child
from kubesched.config.errors import FieldError, invalid
from kubesched.config.types import ExtenderConfig, ExtenderManagedResource, ExtenderTLSConfig

# upstream pkg/scheduler/extender.go DefaultExtenderTimeout
DEFAULT_EXTENDER_TIMEOUT = 5.0

EXTENDER_FIELDS = ("urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "weight", "bindVerb",
                   "enableHTTPS", "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources",
                   "ignorable")
TLS_FIELDS = ("insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData")
MANAGED_FIELDS = ("name", "ignoredByScheduler")


def _b64(dec: Decoder, obj: Mapping[str, Any], key: str, path: str) -> bytes:
    text = dec.scalar(obj, key, path, "string")
    if not text:
        return b""
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        dec.fail(child(path, key), "illegal base64 data (Go []byte fields are base64 in YAML/JSON)")
        return b""


def _tls(dec: Decoder, raw: Any, path: str) -> ExtenderTLSConfig | None:
    obj = dec.object(raw, path, TLS_FIELDS)
    if obj is None:
        return None

    def s(key: str) -> str:
        return dec.scalar(obj, key, path, "string") or ""

    return ExtenderTLSConfig(
        insecure=bool(dec.scalar(obj, "insecure", path, "bool")), server_name=s("serverName"),
        cert_file=s("certFile"), key_file=s("keyFile"), ca_file=s("caFile"),
        cert_data=_b64(dec, obj, "certData", path), key_data=_b64(dec, obj, "keyData", path),
        ca_data=_b64(dec, obj, "caData", path))


def _one(dec: Decoder, raw: Any, path: str) -> ExtenderConfig | None:
    obj = dec.object(raw, path, EXTENDER_FIELDS)
    if obj is None:
        if raw is None:
            dec.fail(path, "expected an object, got null")
        return None

    def s(key: str) -> str:
        return dec.scalar(obj, key, path, "string") or ""

    managed = []
    for j, m in enumerate(dec.array(obj, "managedResources", path)):
        mp = f"{child(path, 'managedResources')}[{j}]"
        mo = dec.object(m, mp, MANAGED_FIELDS)
        if mo is None:
            continue
        managed.append(ExtenderManagedResource(
            name=dec.scalar(mo, "name", mp, "string") or "",
            ignored_by_scheduler=bool(dec.scalar(mo, "ignoredByScheduler", mp, "bool"))))
    timeout = dec.scalar(obj, "httpTimeout", path, "duration")
    return ExtenderConfig(
        url_prefix=s("urlPrefix"), filter_verb=s("filterVerb"), preempt_verb=s("preemptVerb"),
        prioritize_verb=s("prioritizeVerb"), weight=dec.scalar(obj, "weight", path, "int64") or 0,
        bind_verb=s("bindVerb"), enable_https=bool(dec.scalar(obj, "enableHTTPS", path, "bool")),
        tls_config=_tls(dec, obj.get("tlsConfig"), child(path, "tlsConfig")),
        http_timeout=timeout if timeout else DEFAULT_EXTENDER_TIMEOUT,
        node_cache_capable=bool(dec.scalar(obj, "nodeCacheCapable", path, "bool")),
        managed_resources=tuple(managed), ignorable=bool(dec.scalar(obj, "ignorable", path, "bool")))


def decode_extenders(dec: Decoder, top: Mapping[str, Any]) -> tuple[ExtenderConfig, ...]:
    out = []
    for i, raw in enumerate(dec.array(top, "extenders", "")):
        e = _one(dec, raw, f"extenders[{i}]")
        if e is not None:
            out.append(e)
    return tuple(out)


def _extended_resource_name_errors(name: str) -> list[str]:
    """Upstream ``validateExtendedResourceName``: a qualified name with a domain prefix
    outside ``kubernetes.io`` and not starting with ``requests.``."""
    errs = []
    if "/" not in name or name.startswith("/") or name.endswith("/"):
        errs.append("must be a fully qualified name with a domain prefix, e.g. example.com/device")
    elif name.split("/", 1)[0] == "kubernetes.io" or name.split("/", 1)[0].endswith(".kubernetes.io"):
        errs.append("must not be in the kubernetes.io domain (native resources)")
    if name.startswith("requests."):
        errs.append('must not have the "requests." prefix')
    return errs


def validate_extenders(extenders: tuple[ExtenderConfig, ...]) -> list[FieldError]:
    """Upstream ``validateExtenders``, same messages."""
    errs: list[FieldError] = []
    binders = 0
    seen: set[str] = set()
    for i, e in enumerate(extenders):
        path = f"extenders[{i}]"
        if e.prioritize_verb and e.weight <= 0:
            errs.append(invalid(f"{path}.weight", e.weight, "must have a positive weight applied to it"))
        if e.bind_verb:
            binders += 1
        if not e.url_prefix:
            errs.append(FieldError(f"{path}.urlPrefix", "Required value: the extender's URL"))
        for j, m in enumerate(e.managed_resources):
            mp = f"{path}.managedResources[{j}].name"
            errs.extend(invalid(mp, m.name, msg) for msg in _extended_resource_name_errors(m.name))
            if m.name in seen:
                errs.append(invalid(mp, m.name, "duplicate extender managed resource name"))
            seen.add(m.name)
    if binders > 1:
        errs.append(invalid("extenders", f"found {binders} extenders implementing bind",
                            "only one extender can implement bind"))
    return errs
