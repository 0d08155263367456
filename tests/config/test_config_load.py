"""Loading a configuration file: YAML syntax, strict decoding, error locations.

Upstream reads the file with a strict decoder: an unknown or repeated field is an error
naming the field (``strict decoding error: unknown field "profiles[0].foo"``), the type
comes from apiVersion/kind (only kubescheduler.config.k8s.io/v1 exists in v1.34), values
follow Go's JSON typing, durations Go's time.ParseDuration. Extenders are refused by
kubesched on purpose.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kubesched.config import (
    ConfigDecodeError, ConfigError, ConfigSyntaxError, ConfigUnsupportedError,
    ConfigValidationError, PluginConfigEntry, PluginRef, PluginSet, load_config,
)

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def write(tmp_path: Path, body: str, header: bool = True) -> Path:
    path = tmp_path / "sched.yaml"
    path.write_text((HEADER if header else "") + textwrap.dedent(body))
    return path


FULL = """\
parallelism: 32
percentageOfNodesToScore: 0
podInitialBackoffSeconds: 2
podMaxBackoffSeconds: 30
enableProfiling: false
delayCacheUntilActive: true
extenders: []
leaderElection:
  leaderElect: false
  leaseDuration: 1m
clientConnection:
  kubeconfig: /etc/kubernetes/scheduler.conf
  qps: 200
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: MyPlugin
        weight: 2.0
      disabled:
      - name: ImageLocality
    score:
      disabled:
      - name: "*"
  pluginConfig:
  - name: MyPlugin
    args:
      level: 3
- schedulerName: spread
  percentageOfNodesToScore: 50
"""


def test_full_file_round_trip(tmp_path: Path) -> None:
    path = write(tmp_path, FULL)
    cfg = load_config(path)
    assert cfg.source == str(path)
    assert (cfg.parallelism, cfg.percentage_of_nodes_to_score) == (32, 0)
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (2, 30)
    assert (cfg.enable_profiling, cfg.enable_contention_profiling, cfg.delay_cache_until_active) == (False, False, True)
    assert (cfg.leader_election.leader_elect, cfg.leader_election.lease_duration) == (False, 60.0)
    assert cfg.client_connection.kubeconfig == "/etc/kubernetes/scheduler.conf"
    assert (cfg.client_connection.qps, cfg.client_connection.burst) == (200.0, 100)
    first, second = cfg.profiles
    assert first.plugins == {"multiPoint": PluginSet(enabled=(PluginRef("MyPlugin", 2),), disabled=("ImageLocality",)),
                             "score": PluginSet(disabled=("*",))}
    assert first.plugin_config == (PluginConfigEntry(name="MyPlugin", args={"level": 3}),)
    assert (second.index, second.scheduler_name, second.percentage_of_nodes_to_score) == (1, "spread", 50)
    assert cfg.effective_percentage(first) == 0 and cfg.effective_percentage(second) == 50
    assert load_config(str(path)) == cfg


@pytest.mark.parametrize(("body", "line", "fragment"), [
    ("profiles:\n- schedulerName: a\n  plugins: [\n", 6, "invalid YAML"),
    ("profiles:\n  - schedulerName: a\n   plugins: {}\n", 5, "invalid YAML"),
    ("parallelism: 1\n\tprofiles: []\n", 4, "invalid YAML"),
    ("parallelism: 1\n---\nparallelism: 2\n", 4, "single document"),
], ids=["unclosed-flow", "bad-indentation", "tab", "two-documents"])
def test_malformed_yaml(tmp_path: Path, body: str, line: int, fragment: str) -> None:
    path = write(tmp_path, body)
    with pytest.raises(ConfigSyntaxError, match=fragment) as info:
        load_config(path)
    assert info.value.line == line
    assert str(info.value).startswith(f"{path}:{line}: ")


@pytest.mark.parametrize(("body", "field", "message", "line"), [
    ("podMaxInUnschedulablePodsDuration: 5m\n", "podMaxInUnschedulablePodsDuration",
     'unknown field "podMaxInUnschedulablePodsDuration"', 3),
    ("profile: []\n", "profile", 'unknown field "profile" (did you mean "profiles"?)', 3),
    ("profiles:\n- schedulerName: a\n  plugins:\n    scoree: {}\n", "profiles[0].plugins.scoree",
     'unknown field "scoree" (did you mean "score"?)', 6),
    ("profiles:\n- plugins:\n    score:\n      enabled:\n      - name: A\n        wieght: 2\n",
     "profiles[0].plugins.score.enabled[0].wieght", 'unknown field "wieght" (did you mean "weight"?)', 8),
    ("leaderElection:\n  LeaderElect: true\n", "leaderElection.LeaderElect",
     'unknown field "LeaderElect" (did you mean "leaderElect"?)', 4),
    ("parallelism: 1\nparallelism: 2\n", "", 'key "parallelism" already set in map', 4),
    ("parallelism: \"16\"\n", "parallelism", "expected an integer (int32), got string", 3),
    ("parallelism: 4294967296\n", "parallelism", "value 4294967296 overflows int32", 3),
    ("profiles:\n- plugins:\n    score:\n      enabled:\n      - name: A\n        weight: 1.5\n",
     "profiles[0].plugins.score.enabled[0].weight", "expected an integer (int32), got number", 8),
    ("profiles:\n- plugins:\n    score:\n      enabled:\n      - {weight: 1}\n",
     "profiles[0].plugins.score.enabled[0].name", "Required value: a plugin name", 7),
    ("profiles:\n- plugins: [a]\n", "profiles[0].plugins", "expected an object, got array", 4),
    ("profiles:\n- pluginConfig:\n  - name: A\n    args: [1]\n", "profiles[0].pluginConfig[0].args",
     "expected an object", 6),
    ("enableProfiling: 1\n", "enableProfiling", "expected a boolean, got number", 3),
    ("leaderElection:\n  leaseDuration: 15\n", "leaderElection.leaseDuration", "expected a string, got number", 4),
    ("leaderElection:\n  leaseDuration: \"15\"\n", "leaderElection.leaseDuration",
     'time: missing unit in duration "15"', 4),
    ("leaderElection:\n  renewDeadline: 10d\n", "leaderElection.renewDeadline",
     'time: unknown unit "d" in duration "10d"', 4),
    ("clientConnection:\n  qps: fast\n", "clientConnection.qps", "expected a number, got string", 4),
    ("podMaxBackoffSeconds: true\n", "podMaxBackoffSeconds", "expected an integer (int64), got boolean", 3),
], ids=["not-a-v1-field", "typo-top-level", "unknown-plugin-set", "unknown-plugin-field", "case-sensitive",
        "duplicate-key", "string-for-int", "int32-overflow", "fractional-weight", "plugin-without-name",
        "plugins-not-object", "args-not-object", "int-for-bool", "number-for-duration", "duration-without-unit",
        "duration-unknown-unit", "string-for-float", "bool-for-int"])
def test_strict_decoding(tmp_path: Path, body: str, field: str, message: str, line: int) -> None:
    path = write(tmp_path, body)
    with pytest.raises(ConfigDecodeError) as info:
        load_config(path)
    assert (info.value.field, info.value.message, info.value.line) == (field, message, line)
    where = f"{path}:{line}: "
    assert str(info.value) == where + (f"{field}: {message}" if field else message)


def test_every_unknown_field_is_reported(tmp_path: Path) -> None:
    path = write(tmp_path, "foo: 1\nprofiles:\n- bar: 2\n")
    with pytest.raises(ConfigDecodeError) as info:
        load_config(path)
    assert [(e.field, e.line) for e in info.value.errors] == [("foo", 3), ("profiles[0].bar", 5)]
    assert str(info.value) == (f"{path}: 2 errors:\n"
                               f'  line 3: foo: unknown field "foo"\n'
                               f'  line 5: profiles[0].bar: unknown field "bar"')


@pytest.mark.parametrize(("header", "field", "message"), [
    ("kind: KubeSchedulerConfiguration\n", "apiVersion", 'missing; must be "kubescheduler.config.k8s.io/v1"'),
    ("apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n", "apiVersion",
     "no kind \"KubeSchedulerConfiguration\" is registered for version 'kubescheduler.config.k8s.io/v1beta3'"),
    ("apiVersion: kubescheduler.config.k8s.io/v1\n", "kind", 'missing; must be "KubeSchedulerConfiguration"'),
    ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: Pod\n", "kind",
     "must be \"KubeSchedulerConfiguration\", got 'Pod'"),
], ids=["no-apiVersion", "old-apiVersion", "no-kind", "wrong-kind"])
def test_type_meta(tmp_path: Path, header: str, field: str, message: str) -> None:
    path = write(tmp_path, header + "parallelism: 1\n", header=False)
    with pytest.raises(ConfigDecodeError) as info:
        load_config(path)
    assert info.value.field == field
    assert info.value.message.startswith(message)


@pytest.mark.parametrize("body", ["", "# only a comment\n", "[]\n", "just text\n"],
                         ids=["empty", "comment", "list", "scalar"])
def test_not_a_configuration(tmp_path: Path, body: str) -> None:
    path = write(tmp_path, body, header=False)
    with pytest.raises(ConfigDecodeError) as info:
        load_config(path)
    assert info.value.file == str(path)


def test_extenders_are_loaded(tmp_path: Path) -> None:
    path = write(tmp_path, "extenders:\n- urlPrefix: http://127.0.0.1:8888/\n  filterVerb: filter\n")
    (ext,) = load_config(path).extenders
    assert (ext.url_prefix, ext.filter_verb, ext.http_timeout) == ("http://127.0.0.1:8888/", "filter", 5.0)


def test_extender_error_names_the_field_and_line(tmp_path: Path) -> None:
    """upstream validateExtenders: a prioritizer needs a positive weight."""
    path = write(tmp_path, "extenders:\n- urlPrefix: http://127.0.0.1:8888/\n  prioritizeVerb: p\n  weight: -2\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    err = info.value.errors[0]
    assert (err.field, err.line) == ("extenders[0].weight", 6)  # 2 header lines, then extenders:
    assert err.message == "Invalid value: -2: must have a positive weight applied to it"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the configuration") as info:
        load_config(tmp_path / "nope.yaml")
    assert type(info.value) is ConfigError
    assert info.value.file == str(tmp_path / "nope.yaml")


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ConfigSyntaxError, match="not UTF-8"):
        load_config(path)


def test_validation_errors_point_at_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "profiles:\n- schedulerName: a\n  percentageOfNodesToScore: 101\n"
                           "podMaxBackoffSeconds: 0\n")
    with pytest.raises(ConfigValidationError) as info:
        load_config(path)
    assert [(e.field, e.line) for e in info.value.errors] == [
        ("profiles[0].percentageOfNodesToScore", 5), ("podMaxBackoffSeconds", 6)]
    assert str(info.value).splitlines()[1] == (
        "  line 5: profiles[0].percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]")


def test_plugin_args_errors_point_at_lines(tmp_path: Path) -> None:
    from kubesched.framework.errors import ProfileError
    from kubesched.framework.registry import PluginSpec, Registry

    def parse(raw: object, path: str) -> object:
        raise ProfileError("must be positive", field=f"{path}.level")

    reg = Registry([PluginSpec("MyPlugin", lambda a, h: None, parse)])
    path = write(tmp_path, "profiles:\n- pluginConfig:\n  - name: MyPlugin\n    args:\n      level: -1\n")
    with pytest.raises(ConfigValidationError) as info:
        load_config(path, reg)
    assert str(info.value) == f"{path}:7: profiles[0].pluginConfig[0].args.level: must be positive"


def test_dict_source_errors_have_no_file() -> None:
    with pytest.raises(ConfigDecodeError) as info:
        load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                     "parallelism": "x"})
    assert str(info.value) == "parallelism: expected an integer (int32), got string"


def test_yaml_anchors_and_merge_keys(tmp_path: Path) -> None:
    """Anchors and merge keys are plain YAML: only the merged result is decoded, and a key
    that overrides a merged one is not a duplicate."""
    path = write(tmp_path, "profiles:\n- &p {schedulerName: a, percentageOfNodesToScore: 5}\n"
                           "- {<<: *p, schedulerName: b}\n")
    cfg = load_config(path)
    assert [(p.scheduler_name, p.percentage_of_nodes_to_score) for p in cfg.profiles] == [("a", 5), ("b", 5)]
