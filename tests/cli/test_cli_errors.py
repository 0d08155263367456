"""Bad input through the real ``kubesched`` command: one line on stderr, exit status 2, no
traceback.

Each case runs ``kubesched.cli.main.main`` in-process (stderr captured) and asserts the
whole line: ``kubesched: error: FILE: OBJECT: FIELD: message``. The messages follow
upstream where upstream has one (kube-apiserver's field errors ``Unsupported value: ...``,
resource.ParseQuantity's ``quantities must match the regular expression ...``, the Priority
admission plugin's ``no PriorityClass with name X was found``, the scheduler's own
``only one queue sort plugin required ...``); the rest are kubesched's (what it cannot
simulate yet, unknown files, unknown pods). A few cases also run ``.venv/bin/kubesched``
as a subprocess to prove the installed entry point prints no traceback either.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from kubesched.cli.main import main

NODE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "2", memory: 4Gi, pods: "10"}}
"""

QUANTITY_RE = "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

GOOD_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
"""


@dataclass(frozen=True)
class Case:
    files: dict[str, str]         # file name -> text (written under tmp_path)
    argv: list[str]               # "{name}" is replaced by the file's path
    want: str                     # the message after "kubesched: error: ", "{name}" as above


def _pod(extra_spec: str = "", name: str = "web", meta: str = "") -> str:
    spec = textwrap.indent(textwrap.dedent(extra_spec), "  ")
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}{meta}}}\nspec:\n"
            f"  containers: [{{name: c, image: img}}]\n{spec}")


def _config(profile_yaml: str) -> str:
    return GOOD_CONFIG + "profiles:\n" + textwrap.indent(textwrap.dedent(profile_yaml), "")


CASES: dict[str, Case] = {
    # libyaml's problem text; the line and column are 1-based (the tab opens line 4).
    "malformed-yaml": Case(
        {"m.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n\tname: web\n"},
        ["simulate", "-f", "{m.yaml}"],
        "{m.yaml}: invalid YAML at line 4, column 1: found character that cannot start any token"),
    # The second document of the file: the object is located by its document number.
    "unknown-kind": Case(
        {"m.yaml": NODE + "---\napiVersion: v1\nkind: Widget\nmetadata: {name: w}\n"},
        ["simulate", "-f", "{m.yaml}"],
        '{m.yaml}: document 2: kind: unknown kind "Widget" (apiVersion v1)'),
    "invalid-quantity": Case(
        {"m.yaml": NODE + "---\n" + textwrap.dedent("""\
            apiVersion: v1
            kind: Pod
            metadata: {name: web, namespace: shop}
            spec:
              containers: [{name: c, image: img, resources: {requests: {cpu: 1x}}}]
            """)},
        ["simulate", "-f", "{m.yaml}"],
        "{m.yaml}: Pod shop/web: spec.containers[0].resources.requests.cpu: "
        f"quantities must match the regular expression {QUANTITY_RE}"),
    "invalid-node-quantity": Case(
        {"m.yaml": "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\nstatus: {capacity: {memory: lots}}\n"},
        ["simulate", "-f", "{m.yaml}"],
        "{m.yaml}: Node n2: status.capacity.memory: "
        f"quantities must match the regular expression {QUANTITY_RE}"),
    "node-selector-operator": Case(
        {"m.yaml": NODE + "---\n" + _pod("""\
            affinity:
              nodeAffinity:
                requiredDuringSchedulingIgnoredDuringExecution:
                  nodeSelectorTerms:
                  - matchExpressions: [{key: zone, operator: Near, values: [a]}]
            """)},
        ["simulate", "-f", "{m.yaml}"],
        "{m.yaml}: Pod default/web: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: \"Near\": "
        "not a valid selector operator"),
    "label-selector-operator": Case(
        {"m.yaml": NODE + "---\n" + _pod("""\
            affinity:
              podAntiAffinity:
                requiredDuringSchedulingIgnoredDuringExecution:
                - topologyKey: kubernetes.io/hostname
                  labelSelector:
                    matchExpressions: [{key: app, operator: Gt, values: ["1"]}]
            """)},
        ["simulate", "-f", "{m.yaml}"],
        "{m.yaml}: Pod default/web: spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
        '.labelSelector.matchExpressions[0].operator: Invalid value: "Gt": not a valid selector operator'),
    "duplicate-name-same-file": Case(
        {"m.yaml": NODE + "---\n" + _pod() + "---\n" + _pod()},
        ["simulate", "-f", "{m.yaml}"],
        '{m.yaml}: Pod default/web: metadata.name: Duplicate value: "web": first defined in {m.yaml}, '
        "document 2; again in document 3"),
    "duplicate-name-two-files": Case(
        {"a.yaml": NODE, "b.yaml": NODE},
        ["simulate", "-f", "{a.yaml}", "-f", "{b.yaml}"],
        '{b.yaml}: Node n1: metadata.name: Duplicate value: "n1": first defined in {a.yaml}, '
        "document 1; again in document 1"),
    "bound-to-missing-node": Case(
        {"m.yaml": NODE + "---\n" + _pod("nodeName: ghost\n")},
        ["simulate", "-f", "{m.yaml}"],
        '{m.yaml}: Pod default/web: spec.nodeName: node "ghost" not found in the manifests'),
    "missing-priority-class": Case(
        {"m.yaml": NODE + "---\n" + _pod("priorityClassName: gold\n")},
        ["simulate", "-f", "{m.yaml}"],
        "{m.yaml}: Pod default/web: spec.priorityClassName: no PriorityClass with name gold was found"),
    "pvc-without-claim-name": Case(
        {"m.yaml": NODE + "---\n" + _pod("volumes: [{name: data, persistentVolumeClaim: {}}]\n")},
        ["simulate", "-f", "{m.yaml}"],
        "{m.yaml}: Pod default/web: spec.volumes[0].persistentVolumeClaim.claimName: Required value"),
    "pv-without-access-modes": Case(
        {"m.yaml": NODE + "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv1}\n"
                   "spec: {capacity: {storage: 1Gi}, hostPath: {path: /x}}\n"},
        ["simulate", "-f", "{m.yaml}"],
        "{m.yaml}: PersistentVolume pv1: spec.accessModes: Required value: at least 1 access mode is required"),
    "nonexistent-file": Case(
        {},
        ["simulate", "-f", "{nope.yaml}"],
        "{nope.yaml}: no such file or directory"),
    "config-unknown-field": Case(
        {"m.yaml": NODE, "sched.yaml": _config("""\
            - schedulerName: default-scheduler
              plugins:
                score:
                  enabled:
                  - name: NodeResourcesFit
                    wieght: 2
            """)},
        ["simulate", "-f", "{m.yaml}", "--config", "{sched.yaml}"],
        '{sched.yaml}:9: profiles[0].plugins.score.enabled[0].wieght: unknown field "wieght" '
        '(did you mean "weight"?)'),
    "config-bad-plugin-name": Case(
        {"m.yaml": NODE, "sched.yaml": _config("""\
            - schedulerName: default-scheduler
              plugins:
                score:
                  enabled:
                  - name: NodeResourcesFitt
                    weight: 2
            """)},
        ["simulate", "-f", "{m.yaml}", "--config", "{sched.yaml}"],
        '{sched.yaml}:8: profiles[0].plugins.score.enabled[0].name: plugin "NodeResourcesFitt" does not exist '
        '(did you mean "NodeResourcesFit"?)'),
    "config-plugin-not-importable": Case(
        {"m.yaml": NODE, "sched.yaml": _config("""\
            - plugins:
                multiPoint:
                  enabled: [{name: "nosuch_kubesched_mod:Plugin"}]
            """)},
        ["simulate", "-f", "{m.yaml}", "--config", "{sched.yaml}"],
        "{sched.yaml}:6: profiles[0].plugins.multiPoint.enabled[0].name: cannot load plugin "
        "'nosuch_kubesched_mod:Plugin': No module named 'nosuch_kubesched_mod'"),
    # Found while building the profile (upstream NewFramework's message); the file is named
    # by the CLI, which knows where the profile came from.
    "config-no-queue-sort": Case(
        {"m.yaml": NODE, "sched.yaml": _config("""\
            - schedulerName: default-scheduler
              plugins:
                queueSort:
                  disabled: [{name: "*"}]
            """)},
        ["simulate", "-f", "{m.yaml}", "--config", "{sched.yaml}"],
        "{sched.yaml}: profiles[0].plugins.queueSort: only one queue sort plugin required for profile "
        'with scheduler name "default-scheduler", but got 0'),
    "config-nonexistent": Case(
        {"m.yaml": NODE},
        ["simulate", "-f", "{m.yaml}", "--config", "{nope.yaml}"],
        "{nope.yaml}: cannot read the configuration: No such file or directory"),
    "explain-unknown-pod": Case(
        {"m.yaml": NODE + "---\n" + _pod()},
        ["explain", "-f", "{m.yaml}", "shop/nobody"],
        "pod shop/nobody: no such pod in the given manifests"),
    # The namespace defaults to "default"; a pending pod of that name elsewhere is suggested.
    "explain-wrong-namespace": Case(
        {"m.yaml": NODE + "---\n" + _pod(meta=", namespace: shop")},
        ["explain", "-f", "{m.yaml}", "web"],
        "pod default/web: no such pod in the given manifests (did you mean shop/web?)"),
    # A bound pod is not explained: there was no scheduling attempt; the error says it exists.
    "explain-bound-pod": Case(
        {"m.yaml": NODE + "---\n" + _pod("nodeName: n1\n")},
        ["explain", "-f", "{m.yaml}", "default/web"],
        "pod default/web: already bound to node n1 in the given manifests (only pending pods are scheduled, "
        "and so explained)"),
}


def _materialise(case: Case, tmp_path: Path) -> tuple[list[str], str]:
    paths = {name: str(tmp_path / name) for name in
             {*case.files, *(a[1:-1] for a in case.argv if a.startswith("{"))}}
    for name, text in case.files.items():
        Path(paths[name]).write_text(text)

    def fill(s: str) -> str:
        for name, path in paths.items():
            s = s.replace("{" + name + "}", path)
        return s

    return [fill(a) for a in case.argv], fill(case.want)


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_bad_input_is_one_line_exit_2(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv, want = _materialise(case, tmp_path)
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc == 2
    assert err == f"kubesched: error: {want}\n"
    assert out == ""


def test_malformed_yaml_message_is_libyaml_s() -> None:
    # The malformed-yaml case quotes libyaml's wording; the pure-Python loader words it
    # differently ("found character '\\t' that ..."), so make the dependency explicit.
    assert hasattr(yaml, "CSafeLoader")


def _kubesched() -> str:
    exe = Path(sys.executable).parent / "kubesched"
    if not exe.exists():  # pragma: no cover - the venv's entry point is not installed
        pytest.skip("the kubesched entry point is not installed next to this Python")
    return str(exe)


@pytest.mark.parametrize("name", ["malformed-yaml", "invalid-quantity", "config-bad-plugin-name",
                                  "config-no-queue-sort", "explain-unknown-pod"])
def test_installed_command_prints_no_traceback(name: str, tmp_path: Path) -> None:
    argv, want = _materialise(CASES[name], tmp_path)
    env = {**os.environ, "PYTHONWARNINGS": "error"}
    proc = subprocess.run([_kubesched(), *argv], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr == f"kubesched: error: {want}\n"
    assert proc.stdout == ""
