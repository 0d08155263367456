"""The loaded, defaulted scheduler configuration (upstream ``KubeSchedulerConfiguration`` v1).

Values are frozen dataclasses; every field already holds upstream's default, except
``percentage_of_nodes_to_score`` which stays ``None`` when unset, because kubesched's own
default (score every node, 100) differs from upstream's (0: adaptive). Use
:meth:`SchedulerConfig.effective_percentage` to read it.

A profile's ``plugins`` are kept as the user wrote them (not merged with the default
plugin set): :func:`kubesched.config.resolve_plugins` merges them, because the default
set belongs to the plugins layer and is passed in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"
# kubesched's default percentageOfNodesToScore when neither the profile nor the global
# value is set (upstream's default is 0, its adaptive formula).
KUBESCHED_DEFAULT_PERCENTAGE = 100

MULTI_POINT = "multiPoint"
# The plugin sets of a profile, as spelled in the YAML (upstream ``Plugins``).
PLUGIN_SET_KEYS: tuple[str, ...] = (
    "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
    "reserve", "permit", "preBind", "bind", "postBind", MULTI_POINT,
)


@dataclass(frozen=True, slots=True)
class PluginRef:
    """An enabled plugin; ``weight`` matters only for Score (None or 0 mean 1)."""

    name: str
    weight: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginSet:
    enabled: tuple[PluginRef, ...] = ()
    disabled: tuple[str, ...] = ()

    def enabled_names(self) -> list[str]:
        return [p.name for p in self.enabled]


EMPTY_SET = PluginSet()


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginConfigEntry:
    """``pluginConfig[j]``: raw ``args`` as written (None when absent)."""

    name: str
    args: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ProfileConfig:
    index: int = 0
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    percentage_of_nodes_to_score: int | None = None
    plugins: Mapping[str, PluginSet] = field(default_factory=dict)
    plugin_config: tuple[PluginConfigEntry, ...] = ()

    def plugin_set(self, key: str) -> PluginSet:
        return self.plugins.get(key, EMPTY_SET)

    def config_for(self, name: str) -> tuple[int, PluginConfigEntry] | None:
        """The first ``pluginConfig`` entry for ``name`` and its index."""
        for j, entry in enumerate(self.plugin_config):
            if entry.name == name:
                return j, entry
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaderElectionConfig:
    """Durations in seconds. Used by ``kubesched run`` (kubesched.live.replica); simulate
    and serve run a single scheduler and ignore it."""

    leader_elect: bool = True
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resource_lock: str = "leases"
    resource_name: str = "kube-scheduler"
    resource_namespace: str = "kube-system"


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientConnectionConfig:
    kubeconfig: str = ""
    accept_content_types: str = ""
    content_type: str = "application/vnd.kubernetes.protobuf"
    qps: float = 50.0
    burst: int = 100


@dataclass(frozen=True, slots=True, kw_only=True)
class SchedulerConfig:
    """``source`` names the file it came from ("" for a dict or the defaults)."""

    source: str = ""
    parallelism: int = 16  # accepted, ignored
    leader_election: LeaderElectionConfig = field(default_factory=LeaderElectionConfig)
    client_connection: ClientConnectionConfig = field(default_factory=ClientConnectionConfig)
    enable_profiling: bool = True
    enable_contention_profiling: bool = True
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    profiles: tuple[ProfileConfig, ...] = (ProfileConfig(),)
    delay_cache_until_active: bool = False
    extenders: tuple["ExtenderConfig", ...] = ()

    def profile(self, scheduler_name: str) -> ProfileConfig:
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        raise KeyError(scheduler_name)

    def effective_percentage(self, profile: ProfileConfig | str) -> int:
        """The profile's value, else the global one, else kubesched's default 100.

        0 means upstream's adaptive formula (the scheduler applies it)."""
        p = self.profile(profile) if isinstance(profile, str) else profile
        if p.percentage_of_nodes_to_score is not None:
            return p.percentage_of_nodes_to_score
        if self.percentage_of_nodes_to_score is not None:
            return self.percentage_of_nodes_to_score
        return KUBESCHED_DEFAULT_PERCENTAGE


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtenderTLSConfig:
    """``extenders[i].tlsConfig`` (upstream ``ExtenderTLSConfig``); data fields are the
    PEM bytes as base64 in YAML, kept decoded here."""

    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    cert_data: bytes = b""
    key_data: bytes = b""
    ca_data: bytes = b""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtenderManagedResource:
    name: str
    ignored_by_scheduler: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtenderConfig:
    """``extenders[i]`` (upstream ``Extender``); ``http_timeout`` in seconds, already
    defaulted (upstream ``DefaultExtenderTimeout``, 5s, when unset or zero)."""

    url_prefix: str
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    weight: int = 0
    bind_verb: str = ""
    enable_https: bool = False
    tls_config: ExtenderTLSConfig | None = None
    http_timeout: float = 5.0
    node_cache_capable: bool = False
    managed_resources: tuple[ExtenderManagedResource, ...] = ()
    ignorable: bool = False
