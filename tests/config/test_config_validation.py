"""Validation of a loaded configuration: which fields upstream names in its errors.

The table is ported from TestValidateKubeSchedulerConfigurationV1 in upstream
``pkg/scheduler/apis/config/validation/validation_test.go`` (its wantErrs field paths).
Rows not portable to a loaded file: the two "not-set" leader election rows (defaulting
fills empty names before validation, see test_config_defaults.py), the extender rows
(the extender rows are in tests/cluster/test_extender_http.py) and "invalid-plugin-args" (a Go type
mismatch that cannot be written in YAML).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from kubesched.config import API_VERSION, KIND, ConfigValidationError, load_config
from kubesched.framework.errors import ProfileError
from kubesched.framework.registry import PluginSpec, Registry


def parse_preemption_args(raw: Mapping[str, Any] | None, path: str) -> dict[str, int]:
    """A stand-in for DefaultPreemption's parser (upstream ValidateDefaultPreemptionArgs)."""
    raw = raw or {}
    pct = raw.get("minCandidateNodesPercentage", 10)
    if not 0 <= pct <= 100:
        raise ProfileError("not in valid range [0, 100]", field=f"{path}.minCandidateNodesPercentage")
    return {"minCandidateNodesPercentage": pct, "minCandidateNodesAbsolute": raw.get("minCandidateNodesAbsolute", 100)}


def registry() -> Registry:
    names = ["CustomSort", "CustomBind", "AnotherSort", "PrioritySort", "PodTopologySpread"]
    specs = [PluginSpec(n, lambda args, handle: None) for n in names]
    specs.append(PluginSpec("DefaultPreemption", lambda args, handle: None, parse_preemption_args))
    return Registry(specs)


VALID: dict[str, Any] = {
    "apiVersion": API_VERSION,
    "kind": KIND,
    "parallelism": 8,
    "clientConnection": {"acceptContentTypes": "application/json", "contentType": "application/json",
                         "qps": 10, "burst": 10},
    "leaderElection": {"resourceLock": "leases", "leaderElect": True, "leaseDuration": "30s",
                       "renewDeadline": "15s", "retryPeriod": "5s", "resourceNamespace": "name",
                       "resourceName": "name"},
    "podInitialBackoffSeconds": 1,
    "podMaxBackoffSeconds": 1,
    "profiles": [
        {"schedulerName": "me", "percentageOfNodesToScore": 35,
         "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]},
                     "score": {"disabled": [{"name": "*"}]}},
         "pluginConfig": [{"name": "DefaultPreemption",
                           "args": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}}]},
        {"schedulerName": "other", "percentageOfNodesToScore": 35,
         "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]},
                     "bind": {"enabled": [{"name": "CustomBind"}]}}},
    ],
}

Edit = Callable[[dict[str, Any]], None]


def edit(fn: Edit) -> dict[str, Any]:
    cfg = copy.deepcopy(VALID)
    fn(cfg)
    return cfg


def _set(path: str, value: Any) -> Edit:
    def apply(cfg: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = cfg
        for p in parents:
            node = node[int(p)] if p.isdigit() else node[p]
        node[int(last) if last.isdigit() else last] = value
    return apply


MISMATCH_QUEUE_SORT = [
    {"schedulerName": "me", "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}},
     "pluginConfig": [{"name": "PrioritySort"}]},
    {"schedulerName": "other", "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]}},
     "pluginConfig": [{"name": "CustomSort"}]},
]

CASES: list[tuple[str, Edit, list[str]]] = [
    ("good", lambda c: None, []),
    ("bad-parallelism-invalid-value", _set("parallelism", 0), ["parallelism"]),
    ("bad-resource-lock-not-leases", _set("leaderElection.resourceLock", "configmap"),
     ["leaderElection.resourceLock"]),
    ("bad-percentage-of-nodes-to-score", _set("percentageOfNodesToScore", 101), ["percentageOfNodesToScore"]),
    ("negative-percentage-of-nodes-to-score", _set("percentageOfNodesToScore", -1), ["percentageOfNodesToScore"]),
    ("scheduler-name-not-set", _set("profiles.1.schedulerName", ""), ["profiles[1].schedulerName"]),
    ("repeated-scheduler-name", _set("profiles.0.schedulerName", "other"), ["profiles[1].schedulerName"]),
    ("greater-than-100-profile-percentage-of-nodes-to-score", _set("profiles.1.percentageOfNodesToScore", 101),
     ["profiles[1].percentageOfNodesToScore"]),
    ("negative-profile-percentage-of-nodes-to-score", _set("profiles.1.percentageOfNodesToScore", -1),
     ["profiles[1].percentageOfNodesToScore"]),
    ("different-queue-sort", _set("profiles.1.plugins.queueSort.enabled.0.name", "AnotherSort"),
     ["profiles[1].plugins.queueSort"]),
    ("one-empty-queue-sort", lambda c: c["profiles"][0].pop("plugins"), ["profiles[1].plugins.queueSort"]),
    ("invalid-node-percentage", _set("profiles.0.pluginConfig.0.args.minCandidateNodesPercentage", 200),
     ["profiles[0].pluginConfig[0].args.minCandidateNodesPercentage"]),
    ("duplicated-plugin-config", _set("profiles.0.pluginConfig", [{"name": "config"}, {"name": "config"}]),
     ["profiles[0].pluginConfig[1]"]),
    ("mismatch-queue-sort", _set("profiles", MISMATCH_QUEUE_SORT), ["profiles[1].plugins.queueSort"]),
    ("valid-plugins", _set("profiles.0.plugins.score.enabled", [{"name": "PodTopologySpread", "weight": 2}]), []),
]


@pytest.mark.parametrize(("change", "fields"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_validate_upstream_table(change: Edit, fields: list[str]) -> None:
    given = edit(change)
    if not fields:
        load_config(given, registry())
        return
    with pytest.raises(ConfigValidationError) as info:
        load_config(given, registry())
    assert [e.field for e in info.value.errors] == fields


EXTRA: list[tuple[str, Edit, list[tuple[str, str]]]] = [
    ("unknown-plugin", _set("profiles.1.plugins.bind.enabled.0.name", "CustomBnd"),
     [("profiles[1].plugins.bind.enabled[0].name", 'plugin "CustomBnd" does not exist (did you mean "CustomBind"?)')]),
    ("unknown-multipoint-plugin", _set("profiles.0.plugins.multiPoint", {"enabled": [{"name": "Nope"}]}),
     [("profiles[0].plugins.multiPoint.enabled[0].name", 'plugin "Nope" does not exist')]),
    ("negative-score-weight", _set("profiles.0.plugins.score.enabled", [{"name": "PodTopologySpread", "weight": -2}]),
     [("profiles[0].plugins.score.enabled[0].weight", "Invalid value: -2: must not be negative (unset or 0 means 1)")]),
    ("removed-plugin", _set("profiles.0.plugins.filter", {"enabled": [{"name": "EBSLimits"}]}),
     [("profiles[0].plugins.filter.enabled[0]", 'Invalid value: "EBSLimits": was invalid in version '
       '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")')]),
    ("backoff-zero", _set("podInitialBackoffSeconds", 0),
     [("podInitialBackoffSeconds", "Invalid value: 0: must be greater than 0")]),
    ("max-backoff-below-initial", _set("podMaxBackoffSeconds", 0),
     [("podMaxBackoffSeconds", "Invalid value: 0: must be greater than or equal to PodInitialBackoffSeconds")]),
    ("lease-not-above-renew", _set("leaderElection.renewDeadline", "30s"),
     [("leaderElection.leaseDuration", 'Invalid value: "30s": must be greater than `RenewDeadline`')]),
    ("negative-retry", _set("leaderElection.retryPeriod", "-1s"),
     [("leaderElection.retryPeriod", 'Invalid value: "-1s": must be greater than zero')]),
    ("negative-burst", _set("clientConnection.burst", -1),
     [("clientConnection.burst", "Invalid value: -1: must be non-negative")]),
    ("two-queue-sorts", _set("profiles.0.plugins.queueSort.enabled", [{"name": "CustomSort"}, {"name": "AnotherSort"}]),
     [("profiles[0].plugins.queueSort.enabled", "Invalid value: 2: only one queue sort plugin can be enabled"),
      ("profiles[1].plugins.queueSort", 'Invalid value: {"enabled": [{"name": "CustomSort", "weight": null}], '
                                        '"disabled": []}: must be the same for all profiles')]),
    ("queue-sort-args-differ", _set("profiles.1.pluginConfig", [{"name": "CustomSort", "args": {"x": 1}}]),
     [("profiles[1].pluginConfig[0].args", 'Invalid value: {"x": 1}: queueSort must be the same for all profiles')]),
    ("duplicate-name-message", _set("profiles.0.schedulerName", "other"),
     [("profiles[1].schedulerName", 'Duplicate value: "other"')]),
    ("custom-plugin-not-importable", _set("profiles.0.plugins.filter", {"enabled": [{"name": "no_such_mod:X"}]}),
     [("profiles[0].plugins.filter.enabled[0].name",
       "cannot load plugin 'no_such_mod:X': No module named 'no_such_mod'")]),
]


@pytest.mark.parametrize(("change", "errors"), [c[1:] for c in EXTRA], ids=[c[0] for c in EXTRA])
def test_validate_messages(change: Edit, errors: list[tuple[str, str]]) -> None:
    with pytest.raises(ConfigValidationError) as info:
        load_config(edit(change), registry())
    assert [(e.field, e.message) for e in info.value.errors] == errors


def test_all_errors_are_reported_together() -> None:
    def many(cfg: dict[str, Any]) -> None:
        cfg["parallelism"] = -3
        cfg["percentageOfNodesToScore"] = 200
        cfg["profiles"][1]["schedulerName"] = ""
    with pytest.raises(ConfigValidationError) as info:
        load_config(edit(many), registry())
    assert [e.field for e in info.value.errors] == [
        "parallelism", "profiles[1].schedulerName", "percentageOfNodesToScore"]
    assert str(info.value).startswith("3 errors:\n  parallelism: Invalid value: -3:")


def test_without_registry_plugin_names_are_not_checked() -> None:
    cfg = load_config(edit(_set("profiles.1.plugins.bind.enabled.0.name", "Whatever")))
    assert cfg.profiles[1].plugin_set("bind").enabled_names() == ["Whatever"]


def test_plugin_config_for_unregistered_plugin_is_ignored(caplog: pytest.LogCaptureFixture) -> None:
    """Upstream keeps args of plugins it does not know as runtime.Unknown and ignores them."""
    load_config(edit(_set("profiles.1.pluginConfig", [{"name": "OutOfTree", "args": {"a": 1}}])), registry())
    assert "OutOfTree" in caplog.text
