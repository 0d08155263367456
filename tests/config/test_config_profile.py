"""Building a profile's Framework: multiPoint expansion, ordering, weights, args.

Expected plugin lists are ported from upstream
``pkg/scheduler/framework/runtime/framework_test.go``: TestNewFrameworkMultiPointExpansion
(all 12 rows), TestNewFrameworkErrors (2 rows), TestInitFrameworkWithScorePlugins (6 rows).
The fake plugins mirror that file's: ``test-plugin`` implements every extension point but
PreEnqueue, ``score-plugin-N`` PreScore+Score, ``score-with-normalize-plugin-N``
Score+NormalizeScore.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from kubesched.config import (
    PluginConfigEntry, PluginRef, PluginSet, ProfileConfig, SchedulerConfig, build_framework,
    build_profiles, expand_plugins, instantiate_plugins,
)
from kubesched.config.types import EMPTY_SET, PLUGIN_SET_KEYS
from kubesched.framework.errors import ProfileError
from kubesched.framework.registry import PluginSpec, Registry
from kubesched.framework.status import SUCCESS, Status

TEST_PLUGIN = "test-plugin"
SCORE1, SCORE2 = "score-plugin-1", "score-plugin-2"
NORM1, NORM2 = "score-with-normalize-plugin-1", "score-with-normalize-plugin-2"
NOT_SCORE = "plugin-not-implementing-score"
DUPLICATE = "duplicate-plugin"
QUEUE_SORT = "no-op-queue-sort-plugin"
BIND = "bind-plugin"


class Named:
    def __init__(self, name: str, args: Any = None) -> None:
        self.name = name
        self.args = args


class FullPlugin(Named):
    def less(self, a: Any, b: Any) -> bool:
        return False

    def sort_key(self, p: Any) -> Any:
        return 0

    def pre_filter(self, state: Any, pod: Any, nodes: Any) -> tuple[None, Status]:
        return None, SUCCESS

    def add_pod(self, *args: Any) -> Status:
        return SUCCESS

    def remove_pod(self, *args: Any) -> Status:
        return SUCCESS

    def filter(self, state: Any, pod: Any, node_info: Any) -> Status:
        return SUCCESS

    def post_filter(self, state: Any, pod: Any, filtered: Any) -> tuple[None, Status]:
        return None, SUCCESS

    def pre_score(self, state: Any, pod: Any, nodes: Any) -> Status:
        return SUCCESS

    def score(self, state: Any, pod: Any, node_info: Any) -> int:
        return 0

    def reserve(self, state: Any, pod: Any, node_name: str) -> Status:
        return SUCCESS

    def unreserve(self, state: Any, pod: Any, node_name: str) -> None:
        return None

    def permit(self, state: Any, pod: Any, node_name: str) -> tuple[Status, float]:
        return SUCCESS, 0.0

    def pre_bind(self, state: Any, pod: Any, node_name: str) -> Status:
        return SUCCESS

    def bind(self, state: Any, pod: Any, node_name: str) -> Status:
        return SUCCESS

    def post_bind(self, state: Any, pod: Any, node_name: str) -> None:
        return None


class ScoreOnly(Named):
    def pre_score(self, state: Any, pod: Any, nodes: Any) -> Status:
        return SUCCESS

    def score(self, state: Any, pod: Any, node_info: Any) -> int:
        return 0


class ScoreWithNormalize(Named):
    def score(self, state: Any, pod: Any, node_info: Any) -> int:
        return 0

    def normalize_score(self, state: Any, pod: Any, names: Any, scores: Any) -> Status:
        return SUCCESS


class PreFilterOnly(Named):
    def pre_filter(self, state: Any, pod: Any, nodes: Any) -> tuple[None, Status]:
        return None, SUCCESS


class QueueSortOnly(Named):
    def less(self, a: Any, b: Any) -> bool:
        return False

    def sort_key(self, p: Any) -> Any:
        return 0


class BindOnly(Named):
    def bind(self, state: Any, pod: Any, node_name: str) -> Status:
        return SUCCESS


def spec(name: str, cls: type, parse: Any = None) -> PluginSpec:
    return PluginSpec(name, lambda args, handle: cls(name, args), parse)


def registry() -> Registry:
    return Registry([
        spec(TEST_PLUGIN, FullPlugin), spec(SCORE1, ScoreOnly), spec(SCORE2, ScoreOnly),
        spec(NORM1, ScoreWithNormalize), spec(NORM2, ScoreWithNormalize), spec(NOT_SCORE, Named),
        spec(DUPLICATE, PreFilterOnly), spec(QUEUE_SORT, QueueSortOnly), spec(BIND, BindOnly),
    ])


Ref = str | tuple[str, int]


def ps(enabled: Sequence[Ref] = (), disabled: Sequence[str] = ()) -> PluginSet:
    refs = tuple(PluginRef(r) if isinstance(r, str) else PluginRef(r[0], r[1]) for r in enabled)
    return PluginSet(enabled=refs, disabled=tuple(disabled))


def full(sets: Mapping[str, PluginSet]) -> dict[str, PluginSet]:
    return {k: sets.get(k, EMPTY_SET) for k in PLUGIN_SET_KEYS}


def expand(sets: Mapping[str, PluginSet]) -> tuple[dict[str, list[str]], dict[str, int]]:
    """Upstream NewFramework on an already defaulted profile, as its tests call it."""
    merged = full(sets)
    instances = instantiate_plugins(ProfileConfig(plugins=merged), merged, registry(), None)  # type: ignore[arg-type]
    points, weights = expand_plugins(merged, instances)
    return {k: v for k, v in points.items() if v}, weights


ALL_BUT_SCORE = ["queueSort", "preFilter", "filter", "postFilter", "reserve", "permit", "preBind",
                 "bind", "postBind"]


def everywhere(**extra: list[str]) -> dict[str, list[str]]:
    """``test-plugin`` at every point it implements, plus/overridden by ``extra``."""
    out = {k: [TEST_PLUGIN] for k in ALL_BUT_SCORE}
    out.update(extra)
    return {k: v for k, v in out.items() if v}


# (name, plugins, wanted points, wanted weights)
EXPANSION_CASES: list[tuple[str, dict[str, PluginSet], dict[str, list[str]], dict[str, int]]] = [
    ("plugin expansion",
     {"multiPoint": ps([(TEST_PLUGIN, 5)])},
     everywhere(preScore=[TEST_PLUGIN], score=[TEST_PLUGIN]), {TEST_PLUGIN: 5}),
    ("disable MultiPoint plugin at some extension points",
     {"multiPoint": ps([TEST_PLUGIN]), "preScore": ps(disabled=[TEST_PLUGIN]),
      "score": ps(disabled=[TEST_PLUGIN])},
     everywhere(), {TEST_PLUGIN: 1}),
    ("Multiple MultiPoint plugins",
     {"multiPoint": ps([TEST_PLUGIN, SCORE1])},
     everywhere(preScore=[TEST_PLUGIN, SCORE1], score=[TEST_PLUGIN, SCORE1]),
     {TEST_PLUGIN: 1, SCORE1: 1}),
    ("disable MultiPoint extension",
     {"multiPoint": ps([TEST_PLUGIN, SCORE1]), "preScore": ps(disabled=["*"])},
     everywhere(score=[TEST_PLUGIN, SCORE1]), {TEST_PLUGIN: 1, SCORE1: 1}),
    ("Reorder MultiPoint plugins (specified extension takes precedence)",
     {"multiPoint": ps([NORM1, TEST_PLUGIN, SCORE1]), "score": ps([SCORE1, TEST_PLUGIN])},
     everywhere(preScore=[TEST_PLUGIN, SCORE1], score=[SCORE1, TEST_PLUGIN, NORM1]),
     {SCORE1: 1, TEST_PLUGIN: 1, NORM1: 1}),
    ("Reorder MultiPoint plugins (specified extension only takes precedence when it exists in MultiPoint)",
     {"multiPoint": ps([TEST_PLUGIN, SCORE1]), "score": ps([NORM1, SCORE1, TEST_PLUGIN])},
     everywhere(preScore=[TEST_PLUGIN, SCORE1], score=[SCORE1, TEST_PLUGIN, NORM1]),
     {SCORE1: 1, TEST_PLUGIN: 1, NORM1: 1}),
    ("Override MultiPoint plugins weights",
     {"multiPoint": ps([TEST_PLUGIN, SCORE1]), "score": ps([(SCORE1, 5), (TEST_PLUGIN, 3)])},
     everywhere(preScore=[TEST_PLUGIN, SCORE1], score=[SCORE1, TEST_PLUGIN]),
     {SCORE1: 5, TEST_PLUGIN: 3}),
    ("disable and enable MultiPoint plugins with '*'",
     {"multiPoint": ps([QUEUE_SORT, BIND, SCORE1], ["*"])},
     {"queueSort": [QUEUE_SORT], "preScore": [SCORE1], "score": [SCORE1], "bind": [BIND]}, {SCORE1: 1}),
    ("disable and enable MultiPoint plugin by name",
     {"multiPoint": ps([BIND, QUEUE_SORT, SCORE1], [SCORE1])},
     {"queueSort": [QUEUE_SORT], "preScore": [SCORE1], "score": [SCORE1], "bind": [BIND]}, {SCORE1: 1}),
    ("Override MultiPoint plugins weights and avoid a plugin being loaded multiple times",
     {"multiPoint": ps([TEST_PLUGIN, SCORE1]),
      "score": ps([(SCORE1, 5), (SCORE2, 5), (TEST_PLUGIN, 3)])},
     everywhere(preScore=[TEST_PLUGIN, SCORE1], score=[SCORE1, TEST_PLUGIN, SCORE2]),
     {SCORE1: 5, TEST_PLUGIN: 3, SCORE2: 5}),
]


@pytest.mark.parametrize(("plugins", "want_points", "want_weights"), [c[1:] for c in EXPANSION_CASES],
                         ids=[c[0] for c in EXPANSION_CASES])
def test_multipoint_expansion(plugins: dict[str, PluginSet], want_points: dict[str, list[str]],
                              want_weights: dict[str, int]) -> None:
    points, weights = expand(plugins)
    assert points == want_points
    assert weights == want_weights


@pytest.mark.parametrize(("plugins", "config", "want"), [
    ({"multiPoint": ps([TEST_PLUGIN, TEST_PLUGIN])}, (), "already registered"),
    ({"preFilter": ps([(DUPLICATE, 1), (DUPLICATE, 1)])}, (DUPLICATE,), "already registered"),
    ({"preFilter": ps([(DUPLICATE, 1)])}, (DUPLICATE, DUPLICATE), "repeated config for plugin"),
], ids=["Expect 'already registered' error", "duplicate plugin name", "duplicate plugin config"])
def test_framework_errors(plugins: dict[str, PluginSet], config: tuple[str, ...], want: str) -> None:
    merged = full(plugins)
    profile = ProfileConfig(plugins=merged, plugin_config=tuple(PluginConfigEntry(name=n) for n in config))
    with pytest.raises(ProfileError, match=want):
        instances = instantiate_plugins(profile, merged, registry(), None)  # type: ignore[arg-type]
        expand_plugins(merged, instances)


DEFAULT_WEIGHTS = {NORM1: 1, NORM2: 2, SCORE1: 1}


def with_sort_and_bind(sets: dict[str, PluginSet]) -> ProfileConfig:
    """Upstream newFrameworkWithQueueSortAndBind: add a queue sort and a bind plugin."""
    return ProfileConfig(plugins={**sets, "queueSort": ps([QUEUE_SORT]), "bind": ps([BIND])})


@pytest.mark.parametrize(("score", "fails"), [
    (["notExist"], True), ([NOT_SCORE], True), (None, False), ([], False), ([SCORE1], False), ([NORM1], False),
], ids=["enabled Score plugin doesn't exist in registry",
        "enabled Score plugin doesn't extend the ScorePlugin interface", "Score plugins are nil",
        "enabled Score plugin list is empty", "enabled plugin only implements ScorePlugin interface",
        "enabled plugin implements ScoreWithNormalizePlugin interface"])
def test_init_framework_with_score_plugins(score: list[str] | None, fails: bool) -> None:
    sets = {} if score is None else {"score": ps([(n, DEFAULT_WEIGHTS.get(n, 0)) for n in score])}
    profile = with_sort_and_bind(sets)
    if fails:
        with pytest.raises(ProfileError):
            build_framework(profile, registry(), None, None, default_multipoint=())  # type: ignore[arg-type]
    else:
        fw = build_framework(profile, registry(), None, None, default_multipoint=())  # type: ignore[arg-type]
        assert [p.name for p in fw.points["score"]] == (score or [])


DEFAULTS: list[tuple[str, int | None]] = [(QUEUE_SORT, None), (SCORE1, 3), (NORM1, None), (BIND, None)]


def build(profile: ProfileConfig, reg: Registry | None = None, percentage: int | None = None,
          defaults: Sequence[tuple[str, int | None]] = DEFAULTS) -> Any:
    return build_framework(profile, reg or registry(), None, percentage,  # type: ignore[arg-type]
                           default_multipoint=defaults)


def names(fw: Any) -> dict[str, list[str]]:
    return {k: [p.name for p in v] for k, v in fw.points.items() if v}


def test_build_framework_from_defaults() -> None:
    fw = build(ProfileConfig(), percentage=35)
    assert fw.profile_name == "default-scheduler"
    assert fw.percentage_of_nodes_to_score == 35
    assert names(fw) == {"queueSort": [QUEUE_SORT], "preScore": [SCORE1], "score": [SCORE1, NORM1],
                         "bind": [BIND]}
    assert fw.weights == {SCORE1: 3, NORM1: 1}


@pytest.mark.parametrize(("score", "weight"), [
    (ps([SCORE1]), 1), (ps([(SCORE1, 0)]), 1), (ps([(SCORE1, 4)]), 4), (EMPTY_SET, 3),
], ids=["explicit-without-weight", "explicit-zero", "explicit-4", "multipoint-3"])
def test_score_weight_precedence(score: PluginSet, weight: int) -> None:
    """getScoreWeights reads the score list before multiPoint; unset or 0 means 1."""
    fw = build(ProfileConfig(plugins={"score": score}))
    assert fw.weights[SCORE1] == weight
    assert names(fw)["score"] == [SCORE1, NORM1]


def test_multipoint_weight_override_keeps_order() -> None:
    fw = build(ProfileConfig(plugins={"multiPoint": ps([(SCORE1, 7)])}))
    assert names(fw)["score"] == [SCORE1, NORM1]
    assert fw.weights == {SCORE1: 7, NORM1: 1}


def test_disable_all_score_plugins() -> None:
    fw = build(ProfileConfig(plugins={"score": ps(disabled=["*"])}))
    assert "score" not in names(fw)
    assert names(fw)["preScore"] == [SCORE1]


def test_no_bind_plugin_fails() -> None:
    with pytest.raises(ProfileError, match="at least one bind plugin is needed") as info:
        build(ProfileConfig(plugins={"bind": ps(disabled=[BIND])}))
    assert info.value.field == "profiles[0].plugins.bind"


def test_two_queue_sort_plugins_fail() -> None:
    with pytest.raises(ProfileError, match="only one queue sort plugin required") as info:
        build(ProfileConfig(index=2, plugins={"multiPoint": ps([TEST_PLUGIN])}))
    assert info.value.field == "profiles[2].plugins.queueSort"
    fw = build(ProfileConfig(plugins={"multiPoint": ps([TEST_PLUGIN]), "queueSort": ps(disabled=[TEST_PLUGIN])}))
    assert fw.queue_sort.name == QUEUE_SORT


def test_negative_weight_is_refused_by_the_framework() -> None:
    with pytest.raises(ProfileError, match="positive weight"):
        build(ProfileConfig(plugins={"score": ps([(SCORE1, -1)])}))


@pytest.mark.parametrize(("plugins", "field", "message"), [
    ({"filter": ps([SCORE1])}, "profiles[0].plugins.filter.enabled[0]", "does not extend FilterPlugin plugin"),
    ({"filter": ps(["Nope"])}, "profiles[0].plugins.filter.enabled[0].name", 'plugin "Nope" does not exist'),
    ({"multiPoint": ps(["score-plugin-11"])}, "profiles[0].plugins.multiPoint.enabled[4].name",
     'did you mean "score-plugin-1"'),
], ids=["not-a-filter", "unknown", "unknown-with-suggestion"])
def test_bad_plugin_reports_field(plugins: dict[str, PluginSet], field: str, message: str) -> None:
    with pytest.raises(ProfileError, match=message) as info:
        build(ProfileConfig(plugins=plugins))
    assert info.value.field == field


def test_each_plugin_is_built_once_with_parsed_args() -> None:
    built: list[str] = []
    parsed: list[tuple[Any, str]] = []

    def parse(raw: Mapping[str, Any] | None, path: str) -> dict[str, Any]:
        parsed.append((raw, path))
        return {"parsed": dict(raw or {})}

    def factory(args: Any, handle: Any) -> FullPlugin:
        built.append(TEST_PLUGIN)
        return FullPlugin(TEST_PLUGIN, args)

    reg = Registry([spec(SCORE1, ScoreOnly, parse), spec(BIND, BindOnly),
                    PluginSpec(TEST_PLUGIN, factory, parse)])
    profile = ProfileConfig(index=1, plugins={"multiPoint": ps([TEST_PLUGIN, SCORE1, BIND])},
                            plugin_config=(PluginConfigEntry(name="other", args={"x": 1}),
                                           PluginConfigEntry(name=TEST_PLUGIN, args={"a": 2})))
    fw = build(profile, reg, defaults=())
    assert built == [TEST_PLUGIN]
    assert all(fw.by_name[TEST_PLUGIN] is pl for pts in fw.points.values() for pl in pts if pl.name == TEST_PLUGIN)
    assert fw.by_name[TEST_PLUGIN].args == {"parsed": {"a": 2}}
    assert ({"a": 2}, "profiles[1].pluginConfig[1].args") in parsed
    assert (None, "profiles[1].pluginConfig") in parsed  # SCORE1: defaults


def test_factory_failure_is_a_profile_error() -> None:
    def boom(args: Any, handle: Any) -> Any:
        raise ValueError("bad things")

    reg = Registry([PluginSpec("Boom", boom), spec(QUEUE_SORT, QueueSortOnly), spec(BIND, BindOnly)])
    with pytest.raises(ProfileError, match="initializing plugin 'Boom': bad things") as info:
        build(ProfileConfig(plugins={"filter": ps(["Boom"])}), reg, defaults=[(QUEUE_SORT, None), (BIND, None)])
    assert info.value.field == "profiles[0].plugins.filter.enabled[0]"


CUSTOM_MODULE = textwrap.dedent("""
    from kubesched.framework.status import SUCCESS

    class GpuPacking:
        name = "GpuPacking"

        def __init__(self, args, handle):
            self.args = args

        @staticmethod
        def parse_args(raw, path):
            return {"maxPerNode": (raw or {}).get("maxPerNode", 1)}

        def filter(self, state, pod, node_info):
            return SUCCESS

        def score(self, state, pod, node_info):
            return 0
""")


def test_custom_plugin_by_import_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "kubesched_test_custom_gpu.py").write_text(CUSTOM_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "kubesched_test_custom_gpu", raising=False)
    path = "kubesched_test_custom_gpu:GpuPacking"
    profile = ProfileConfig(plugins={"multiPoint": ps([(path, 2)])},
                            plugin_config=(PluginConfigEntry(name=path, args={"maxPerNode": 4}),))
    fw = build(profile)
    assert names(fw)["filter"] == ["GpuPacking"]
    assert names(fw)["score"] == [SCORE1, NORM1, "GpuPacking"]
    assert fw.weights["GpuPacking"] == 2
    assert fw.by_name["GpuPacking"].args == {"maxPerNode": 4}
    with pytest.raises(ProfileError, match="cannot load plugin"):
        build(ProfileConfig(plugins={"filter": ps(["kubesched_test_custom_gpu:Missing"])}))


def two_profiles(second: ProfileConfig) -> SchedulerConfig:
    return SchedulerConfig(profiles=(ProfileConfig(scheduler_name="a"), second))


def test_build_profiles() -> None:
    cfg = SchedulerConfig(percentage_of_nodes_to_score=20,
                          profiles=(ProfileConfig(scheduler_name="a"),
                                    ProfileConfig(index=1, scheduler_name="b", percentage_of_nodes_to_score=50)))
    handles: list[Named] = []

    def new_handle() -> Any:
        handles.append(Named("handle"))
        handles[-1].framework = None  # type: ignore[attr-defined]
        return handles[-1]

    fws = build_profiles(cfg, registry(), DEFAULTS, new_handle)
    assert list(fws) == ["a", "b"]
    assert [h.framework for h in handles] == [fws["a"], fws["b"]]  # type: ignore[attr-defined]
    assert fws["a"].percentage_of_nodes_to_score == 20
    assert fws["b"].percentage_of_nodes_to_score == 50


@pytest.mark.parametrize(("second", "message"), [
    (ProfileConfig(index=1, scheduler_name="b", plugins={"queueSort": ps([TEST_PLUGIN], [QUEUE_SORT])}),
     'different queue sort plugins for profile "b": "test-plugin", first: "no-op-queue-sort-plugin"'),
    (ProfileConfig(index=1, scheduler_name="b", plugin_config=(PluginConfigEntry(name=QUEUE_SORT, args={"x": 1}),)),
     'different queue sort plugin args for profile "b"'),
    (ProfileConfig(index=1, scheduler_name="a"), 'duplicate profile with scheduler name "a"'),
], ids=["different-queue-sort", "different-queue-sort-args", "duplicate-name"])
def test_build_profiles_checks_profiles_agree(second: ProfileConfig, message: str) -> None:
    """Upstream profile.NewMap's cfgValidator."""
    with pytest.raises(ProfileError, match=message):
        build_profiles(two_profiles(second), registry(), DEFAULTS, lambda: None)  # type: ignore[arg-type,return-value]
