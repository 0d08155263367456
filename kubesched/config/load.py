"""``load_config``: a ``KubeSchedulerConfiguration`` (v1) file or dict -> ``SchedulerConfig``.

The three steps of upstream's ``loadConfigFromFile`` + defaulting + validation:

1. strict decoding (:mod:`kubesched.config.decode`): YAML syntax, ``apiVersion``/``kind``,
   unknown and repeated fields, value types. Extenders are refused (not supported).
2. defaulting (:mod:`kubesched.config.defaults`), except ``percentageOfNodesToScore``,
   kept ``None`` when unset (see :class:`SchedulerConfig`).
3. validation (:mod:`kubesched.config.validation`), including plugin names and plugin
   args when a registry is given.

Each step reports every problem it finds, with the file, field path and YAML line.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from kubesched.config import defaults as d
from kubesched.config.decode import Decoder, child, parse_yaml
from kubesched.config.errors import (
    ConfigDecodeError, ConfigError, ConfigSyntaxError, ConfigUnsupportedError,
    ConfigValidationError, FieldError,
)
from kubesched.config.types import (
    API_VERSION, DEFAULT_SCHEDULER_NAME, KIND, PLUGIN_SET_KEYS, ClientConnectionConfig,
    LeaderElectionConfig, PluginConfigEntry, PluginRef, PluginSet, ProfileConfig, SchedulerConfig,
)
from kubesched.config.validation import validate_config
from kubesched.config.extenders import decode_extenders, validate_extenders
from kubesched.framework.registry import Registry

log = logging.getLogger(__name__)

ConfigSource = str | os.PathLike[str] | Mapping[str, Any] | None

TOP_FIELDS = ("apiVersion", "kind", "parallelism", "leaderElection", "clientConnection",
              "enableProfiling", "enableContentionProfiling", "percentageOfNodesToScore",
              "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles", "extenders",
              "delayCacheUntilActive")
LEADER_ELECTION_FIELDS = ("leaderElect", "leaseDuration", "renewDeadline", "retryPeriod",
                          "resourceLock", "resourceName", "resourceNamespace")
CLIENT_CONNECTION_FIELDS = ("kubeconfig", "acceptContentTypes", "contentType", "qps", "burst")
PROFILE_FIELDS = ("schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig")


def load_config(source: ConfigSource = None, registry: Registry | None = None) -> SchedulerConfig:
    """Load, default and validate a configuration.

    ``source``: a file path, an already parsed document (dict), or None for all
    defaults. ``registry``: when given, plugin names are checked against it (names of the
    form ``package.module:Class`` are imported) and every ``pluginConfig`` args is parsed
    by its plugin's parser. Raises a :class:`ConfigError` subclass.
    """
    file = ""
    try:
        if source is None:
            raw: Any = {"apiVersion": API_VERSION, "kind": KIND}
        elif isinstance(source, Mapping):
            raw = source
        else:
            file = os.fspath(source)
            raw = parse_yaml(_read(file))
        dec = Decoder()
        cfg = _decode(dec, raw, file)
        errors = validate_config(cfg, registry)
    except ConfigError as exc:
        exc.with_file(file)
        raise
    if errors:
        located = [e if e.line else FieldError(e.field, e.message, dec.line_of(e.field)) for e in errors]
        raise ConfigValidationError(errors=located, file=file)
    return cfg


def _read(file: str) -> str:
    try:
        with open(file, encoding="utf-8") as fh:
            return fh.read()
    except UnicodeDecodeError as exc:
        raise ConfigSyntaxError(f"not UTF-8 text: {exc.reason}", file=file) from exc
    except OSError as exc:
        raise ConfigError(f"cannot read the configuration: {exc.strerror or exc}", file=file) from exc


def _check_type_meta(dec: Decoder, top: Mapping[str, Any]) -> None:
    """Upstream's decoder picks the type from apiVersion/kind; only v1 exists in v1.34."""
    version, kind = top.get("apiVersion"), top.get("kind")
    if version != API_VERSION:
        msg = (f'missing; must be "{API_VERSION}"' if version is None else
               f'no kind "{KIND}" is registered for version {version!r}; kubesched '
               f'(like kube-scheduler v1.34) reads only "{API_VERSION}"')
        raise ConfigDecodeError(msg, field="apiVersion", line=dec.line_of("apiVersion"))
    if kind != KIND:
        msg = f'missing; must be "{KIND}"' if kind is None else f'must be "{KIND}", got {kind!r}'
        raise ConfigDecodeError(msg, field="kind", line=dec.line_of("kind"))


def _decode(dec: Decoder, raw: Any, file: str) -> SchedulerConfig:
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigDecodeError(f"expected a {KIND} object, got {type(raw).__name__}")
    top = dec.object(raw, "", TOP_FIELDS) or {}
    _check_type_meta(dec, top)
    extenders = decode_extenders(dec, top)
    for err in validate_extenders(extenders):
        dec.fail(err.field, err.message)

    def get(key: str, kind: str) -> Any:
        return dec.scalar(top, key, "", kind)

    raw_profiles = dec.array(top, "profiles", "")
    profiles = tuple(_profile(dec, p, i, len(raw_profiles)) for i, p in enumerate(raw_profiles))
    parallelism = get("parallelism", "int32")
    initial, maximum = get("podInitialBackoffSeconds", "int64"), get("podMaxBackoffSeconds", "int64")
    profiling = get("enableProfiling", "bool")
    profiling = d.ENABLE_PROFILING if profiling is None else profiling
    contention = get("enableContentionProfiling", "bool")
    cfg = SchedulerConfig(
        source=file,
        parallelism=d.PARALLELISM if parallelism is None else parallelism,
        leader_election=_leader_election(dec, top.get("leaderElection")),
        client_connection=_client_connection(dec, top.get("clientConnection")),
        enable_profiling=profiling,
        enable_contention_profiling=profiling if contention is None else contention,
        percentage_of_nodes_to_score=get("percentageOfNodesToScore", "int32"),
        pod_initial_backoff_seconds=d.POD_INITIAL_BACKOFF_SECONDS if initial is None else initial,
        pod_max_backoff_seconds=d.POD_MAX_BACKOFF_SECONDS if maximum is None else maximum,
        profiles=profiles or (ProfileConfig(),),
        delay_cache_until_active=bool(get("delayCacheUntilActive", "bool")),
        extenders=extenders,
    )
    if dec.errors:
        raise ConfigDecodeError(errors=dec.errors, file=file)
    return cfg


def _leader_election(dec: Decoder, raw: Any) -> LeaderElectionConfig:
    path = "leaderElection"
    obj = dec.object(raw, path, LEADER_ELECTION_FIELDS)

    def get(key: str, kind: str) -> Any:
        return dec.scalar(obj, key, path, kind)

    elect = get("leaderElect", "bool")
    return LeaderElectionConfig(
        leader_elect=d.LEADER_ELECT if elect is None else elect,
        lease_duration=get("leaseDuration", "duration") or d.LEASE_DURATION,
        renew_deadline=get("renewDeadline", "duration") or d.RENEW_DEADLINE,
        retry_period=get("retryPeriod", "duration") or d.RETRY_PERIOD,
        resource_lock=get("resourceLock", "string") or d.RESOURCE_LOCK,
        resource_name=get("resourceName", "string") or d.RESOURCE_NAME,
        resource_namespace=get("resourceNamespace", "string") or d.RESOURCE_NAMESPACE,
    )


def _client_connection(dec: Decoder, raw: Any) -> ClientConnectionConfig:
    path = "clientConnection"
    obj = dec.object(raw, path, CLIENT_CONNECTION_FIELDS)

    def get(key: str, kind: str) -> Any:
        return dec.scalar(obj, key, path, kind)

    return ClientConnectionConfig(
        kubeconfig=get("kubeconfig", "string") or "",
        accept_content_types=get("acceptContentTypes", "string") or "",
        content_type=get("contentType", "string") or d.CONTENT_TYPE,
        qps=get("qps", "float32") or d.QPS,
        burst=get("burst", "int32") or d.BURST,
    )


def _profile(dec: Decoder, raw: Any, i: int, count: int) -> ProfileConfig:
    path = f"profiles[{i}]"
    obj = dec.object(raw, path, PROFILE_FIELDS)
    name = dec.scalar(obj, "schedulerName", path, "string")
    if name is None:  # upstream names the profile only when it is the only one
        name = DEFAULT_SCHEDULER_NAME if count == 1 else ""
    entries = dec.array(obj, "pluginConfig", path)
    return ProfileConfig(
        index=i,
        scheduler_name=name,
        percentage_of_nodes_to_score=dec.scalar(obj, "percentageOfNodesToScore", path, "int32"),
        plugins=_plugins(dec, None if obj is None else obj.get("plugins"), child(path, "plugins")),
        plugin_config=tuple(_plugin_config(dec, e, f"{path}.pluginConfig[{j}]")
                            for j, e in enumerate(entries)),
    )


def _plugins(dec: Decoder, raw: Any, path: str) -> dict[str, PluginSet]:
    obj = dec.object(raw, path, PLUGIN_SET_KEYS)
    if obj is None:
        return {}
    out: dict[str, PluginSet] = {}
    for key in PLUGIN_SET_KEYS:
        if obj.get(key) is not None:
            out[key] = _plugin_set(dec, obj[key], child(path, key))
    return out


def _plugin_set(dec: Decoder, raw: Any, path: str) -> PluginSet:
    obj = dec.object(raw, path, ("enabled", "disabled"))
    enabled = [_plugin(dec, e, f"{path}.enabled[{k}]")
               for k, e in enumerate(dec.array(obj, "enabled", path))]
    disabled = [_plugin(dec, e, f"{path}.disabled[{k}]")
                for k, e in enumerate(dec.array(obj, "disabled", path))]
    return PluginSet(enabled=tuple(enabled), disabled=tuple(p.name for p in disabled))


def _plugin(dec: Decoder, raw: Any, path: str) -> PluginRef:
    obj = dec.object(raw, path, ("name", "weight"))
    name = dec.scalar(obj, "name", path, "string")
    if not name:
        dec.fail(child(path, "name"), "Required value: a plugin name")
    return PluginRef(name or "", dec.scalar(obj, "weight", path, "int32"))


def _plugin_config(dec: Decoder, raw: Any, path: str) -> PluginConfigEntry:
    obj = dec.object(raw, path, ("name", "args"))
    name = dec.scalar(obj, "name", path, "string")
    if not name:
        dec.fail(child(path, "name"), "Required value: the plugin these args are for")
    args = None if obj is None else obj.get("args")
    if args is not None and not isinstance(args, Mapping):
        dec.fail(child(path, "args"), "expected an object")
        args = None
    _record_lines(dec, args, child(path, "args"))
    return PluginConfigEntry(name=name or "", args=args)


def _record_lines(dec: Decoder, value: Any, path: str) -> None:
    """Remember the lines inside free-form args, for the plugin parsers' errors."""
    if isinstance(value, Mapping):
        lines = getattr(value, "lines", {})
        for k, v in value.items():
            p = child(path, str(k))
            if k in lines:
                dec.lines[p] = lines[k]
            _record_lines(dec, v, p)
    elif isinstance(value, list):
        for k, v in enumerate(value):
            _record_lines(dec, v, child(path, k))
