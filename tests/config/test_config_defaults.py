"""Defaulting of the loaded configuration.

Expected values are upstream's documented defaults: ``SetDefaults_KubeSchedulerConfiguration``
in /work/upstream/vendor/k8s.io/kubernetes/pkg/scheduler/apis/config/v1/defaults.go (with
component-base's RecommendedDefaultLeaderElectionConfiguration), the rows of
TestSchedulerDefaults in upstream ``pkg/scheduler/apis/config/v1/defaults_test.go``, and the
reference https://kubernetes.io/docs/reference/config-api/kube-scheduler-config.v1/.
One deliberate difference: an unset percentageOfNodesToScore stays ``None`` (upstream
defaults it to 0, adaptive) and kubesched's effective default is 100.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config import (
    API_VERSION, KIND, ClientConnectionConfig, ConfigValidationError, LeaderElectionConfig,
    ProfileConfig, SchedulerConfig, load_config,
)
from kubesched.config.decode import parse_go_duration

UPSTREAM_DEFAULTS = SchedulerConfig(
    parallelism=16,
    leader_election=LeaderElectionConfig(
        leader_elect=True, lease_duration=15.0, renew_deadline=10.0, retry_period=2.0,
        resource_lock="leases", resource_namespace="kube-system", resource_name="kube-scheduler"),
    client_connection=ClientConnectionConfig(
        qps=50.0, burst=100, content_type="application/vnd.kubernetes.protobuf"),
    enable_profiling=True,
    enable_contention_profiling=True,
    percentage_of_nodes_to_score=None,
    pod_initial_backoff_seconds=1,
    pod_max_backoff_seconds=10,
    profiles=(ProfileConfig(index=0, scheduler_name="default-scheduler"),),
    delay_cache_until_active=False,
)


def doc(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": KIND, **fields}


def test_no_config_is_all_defaults() -> None:
    cfg = load_config(None)
    assert cfg == UPSTREAM_DEFAULTS
    assert cfg == SchedulerConfig()
    assert cfg.effective_percentage(cfg.profiles[0]) == 100


@pytest.mark.parametrize(("given", "changes"), [
    ({}, {}),
    ({"profiles": [{}]}, {}),
    ({"profiles": []}, {}),
    ({"parallelism": 16}, {}),
    ({"parallelism": 8}, {"parallelism": 8}),
    ({"delayCacheUntilActive": True}, {"delay_cache_until_active": True}),
    ({"percentageOfNodesToScore": 50}, {"percentage_of_nodes_to_score": 50}),
    ({"profiles": [{"percentageOfNodesToScore": 50}]},
     {"profiles": (ProfileConfig(percentage_of_nodes_to_score=50),)}),
    ({"percentageOfNodesToScore": 10, "profiles": [{"percentageOfNodesToScore": 50}]},
     {"percentage_of_nodes_to_score": 10, "profiles": (ProfileConfig(percentage_of_nodes_to_score=50),)}),
    ({"podInitialBackoffSeconds": 2, "podMaxBackoffSeconds": 20},
     {"pod_initial_backoff_seconds": 2, "pod_max_backoff_seconds": 20}),
    ({"enableProfiling": False}, {"enable_profiling": False, "enable_contention_profiling": False}),
    ({"enableProfiling": False, "enableContentionProfiling": True},
     {"enable_profiling": False, "enable_contention_profiling": True}),
], ids=["empty config", "no scheduler name", "empty profiles", "Prallelism with no port",
        "set non default parallelism", "set non default delayCacheUntilActive",
        "set non default global percentageOfNodesToScore", "set non default profile percentageOfNodesToScore",
        "set non default global and profile percentageOfNodesToScore", "backoff", "profiling off",
        "contention profiling without profiling"])
def test_scheduler_defaults(given: dict[str, Any], changes: dict[str, Any]) -> None:
    """TestSchedulerDefaults rows (the "unknown plugin config" / DRA rows concern plugin args)."""
    want = SchedulerConfig(**{**{f: getattr(UPSTREAM_DEFAULTS, f) for f in ("leader_election", "client_connection")},
                              **changes})
    assert load_config(doc(**given)) == want


def test_two_profiles_only_a_single_profile_gets_the_default_name() -> None:
    """TestSchedulerDefaults "two profiles": the unnamed first profile stays unnamed, which
    validation then rejects as a required field."""
    given = doc(profiles=[{"pluginConfig": [{"name": "FooPlugin"}]},
                          {"schedulerName": "custom-scheduler",
                           "plugins": {"bind": {"enabled": [{"name": "BarPlugin"}],
                                                "disabled": [{"name": "DefaultBinder"}]}}}])
    with pytest.raises(ConfigValidationError) as info:
        load_config(given)
    assert [e.field for e in info.value.errors] == ["profiles[0].schedulerName"]
    assert info.value.errors[0].message == "Required value"


@pytest.mark.parametrize(("section", "given", "want"), [
    ("leaderElection", {"leaseDuration": "0s", "renewDeadline": "0", "retryPeriod": "0ms"},
     LeaderElectionConfig()),
    ("leaderElection", {"resourceLock": "", "resourceName": "", "resourceNamespace": ""}, LeaderElectionConfig()),
    ("leaderElection", {"leaderElect": False, "leaseDuration": "1m", "renewDeadline": "30s", "retryPeriod": "1.5s",
                        "resourceName": "sched", "resourceNamespace": "ns"},
     LeaderElectionConfig(leader_elect=False, lease_duration=60.0, renew_deadline=30.0, retry_period=1.5,
                          resource_name="sched", resource_namespace="ns")),
    ("clientConnection", {"qps": 0, "burst": 0, "contentType": ""}, ClientConnectionConfig()),
    ("clientConnection", {"qps": 12.5, "burst": 7, "kubeconfig": "/k", "acceptContentTypes": "application/json",
                          "contentType": "application/json"},
     ClientConnectionConfig(qps=12.5, burst=7, kubeconfig="/k", accept_content_types="application/json",
                            content_type="application/json")),
], ids=["zero-durations-default", "empty-strings-default", "explicit-leader-election",
        "zero-client-values-default", "explicit-client-connection"])
def test_component_defaults(section: str, given: dict[str, Any], want: Any) -> None:
    """Upstream defaults these when empty or zero (``len(x) == 0`` / ``== zero``), not only
    when unset: so the validation rows "bad-resource-name-not-set" and
    "bad-resource-namespace-not-set" of validation_test.go cannot fail after loading."""
    cfg = load_config(doc(**{section: given}))
    got = cfg.leader_election if section == "leaderElection" else cfg.client_connection
    assert got == want


@pytest.mark.parametrize(("profile", "global_", "want"), [
    (None, None, 100), (None, 0, 0), (None, 30, 30), (50, None, 50), (50, 10, 50), (0, 10, 0),
], ids=["unset-kubesched-default", "global-adaptive", "global", "profile", "profile-wins", "profile-adaptive"])
def test_effective_percentage(profile: int | None, global_: int | None, want: int) -> None:
    """Upstream numFeasibleNodesToFind: the profile's value, else the global one."""
    p: dict[str, Any] = {"schedulerName": "s"}
    if profile is not None:
        p["percentageOfNodesToScore"] = profile
    given = doc(profiles=[p]) if global_ is None else doc(profiles=[p], percentageOfNodesToScore=global_)
    cfg = load_config(given)
    assert cfg.effective_percentage(cfg.profiles[0]) == want
    assert cfg.effective_percentage("s") == want


@pytest.mark.parametrize(("text", "seconds"), [
    ("0", 0.0), ("5s", 5.0), ("30s", 30.0), ("1478s", 1478.0), ("-5s", -5.0), ("+5s", 5.0),
    ("5.0s", 5.0), ("5.6s", 5.6), ("5.s", 5.0), (".5s", 0.5), ("1.004s", 1.004),
    ("10ns", 1e-8), ("11us", 1.1e-5), ("12µs", 1.2e-5), ("12μs", 1.2e-5), ("13ms", 0.013),
    ("15m", 900.0), ("16h", 57600.0), ("3h30m", 12600.0), ("10.5s4m", 250.5),
    ("1h2m3s4ms5us6ns", 3723.004005006), ("39h9m14.425s", 39 * 3600 + 9 * 60 + 14.425),
], ids=lambda v: str(v))
def test_go_duration(text: str, seconds: float) -> None:
    """Valid inputs from Go's time.ParseDuration test table (parseDurationTests)."""
    assert parse_go_duration(text) == pytest.approx(seconds, abs=1e-12)


@pytest.mark.parametrize("text", ["", "3", "-", "s", ".", "-.", ".s", "+.s", "1d", "\x85\x85"])
def test_go_duration_invalid(text: str) -> None:
    with pytest.raises(ValueError, match="time: "):
        parse_go_duration(text)
