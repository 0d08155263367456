"""``kubesched extender``'s evaluation and HTTP side, in this process (real uvicorn, real
sockets, no cache): extender/v1 JSON in and out, verdict codes, the score scale, bad input,
health, metrics, TLS, bad configuration. Field names and the verdict maps follow upstream's
``k8s.io/kube-scheduler/extender/v1/types.go``; Insufficient/taint reasons are upstream's
(noderesources/fit.go, tainttoleration/taint_toleration.go)."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from extender_harness import PLUGINS
from kubesched.cli.main import main
from kubesched.config import load_config
from kubesched.live.extender_http import ExtenderServer
from kubesched.live.plugin_extender import PluginExtender, decode_args, scale
from kubesched.plugins.registry import in_tree_registry

STAR = [{"name": "*"}]
ONLY = {"preFilter": {"disabled": STAR}, "preScore": {"disabled": STAR},
        "filter": {"disabled": STAR, "enabled": [{"name": "verdicts:Verdicts"}, {"name": "label_guard:LabelGuard"}]},
        "score": {"disabled": STAR, "enabled": [{"name": "label_guard:LabelGuard", "weight": 1}]}}


def _cfg(plugins: dict[str, Any] | None = None) -> Any:
    profile: dict[str, Any] = {"schedulerName": "default-scheduler"}
    if plugins is not None:
        profile["plugins"] = plugins
    return load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                        "profiles": [profile]}, in_tree_registry())


@pytest.fixture(autouse=True)
def plugins_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(PLUGINS))


def node(name: str, cpu: str = "4", taint: str = "", **labels: str) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if taint:
        spec["taints"] = [{"key": "dedicated", "value": taint, "effect": "NoSchedule"}]
    return {"metadata": {"name": name, "labels": labels}, "spec": spec,
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def pod(cpu: str = "1", **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": "p", "namespace": "default", "uid": "u1", "labels": labels},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}}


def args(p: dict[str, Any], *nodes: dict[str, Any]) -> dict[str, Any]:
    return {"Pod": p, "Nodes": {"metadata": {}, "items": list(nodes)}, "NodeNames": None}


def test_verdicts_map_to_failed_and_unresolvable_nodes() -> None:
    ext = PluginExtender(_cfg(ONLY), in_tree_registry())
    a = node("a", verdict="no")
    b = node("b", verdict="never")
    c = node("c", rank="4")
    d = node("d", disk="hdd")
    res = ext.filter(decode_args(args(pod(tier="frontend"), a, b, c, d)))
    assert res == {"Nodes": {"metadata": {}, "items": [c]}, "NodeNames": None,
                   "FailedNodes": {"a": "Verdicts: no, not here", "d": "extender: frontend pods avoid hdd"},
                   "FailedAndUnresolvableNodes": {"b": "Verdicts: never"}, "Error": ""}


def test_a_plugin_error_is_the_results_error() -> None:
    ext = PluginExtender(_cfg(ONLY), in_tree_registry())
    res = ext.filter(decode_args(args(pod(), node("a"), node("b", verdict="boom"))))
    assert res["Error"] == 'running "Verdicts" filter plugin: ValueError: boom'
    assert res["Nodes"] is None and res["NodeNames"] is None


def test_default_profile_runs_prefilter_before_filter() -> None:
    """NodeResourcesFit's Filter reads what its PreFilter computed (a request above the
    node's allocatable is unresolvable in v1.34: preemption cannot help), as is
    TaintToleration's rejection."""
    ext = PluginExtender(_cfg(), in_tree_registry())
    res = ext.filter(decode_args(args(pod(cpu="3"), node("small", cpu="2"), node("tainted", taint="a"),
                                      node("ok", cpu="8"))))
    assert [n["metadata"]["name"] for n in res["Nodes"]["items"]] == ["ok"]
    assert res["FailedNodes"] == {}
    assert res["FailedAndUnresolvableNodes"] == {"small": "Insufficient cpu",
                                                 "tainted": "node(s) had untolerated taint {dedicated: a}"}


def test_plugins_decide_as_the_release_asked() -> None:
    """``kubesched extender --kubernetes-version 1.35``: TaintToleration's v1.35 Filter reason
    (taint_toleration.go from v1.35: one reason for every tainted node)."""
    from kubesched.framework.features import Features

    ext = PluginExtender(_cfg(), in_tree_registry(), features=Features.for_version("1.35"))
    res = ext.filter(decode_args(args(pod(), node("tainted", taint="a"), node("ok"))))
    assert res["FailedAndUnresolvableNodes"] == {"tainted": "node(s) had untolerated taint(s)"}


def test_prioritize_scales_the_weighted_total_to_ten() -> None:
    """LabelGuard alone (weight 1): 10 × (rank % 11) → round(that × 10 / 100) = rank % 11."""
    ext = PluginExtender(_cfg(ONLY), in_tree_registry())
    hp = ext.prioritize(decode_args(args(pod(), node("a", rank="3"), node("b", rank="14"), node("c", rank="10"))))
    assert hp == [{"Host": "a", "Score": 3}, {"Host": "b", "Score": 3}, {"Host": "c", "Score": 10}]


@pytest.mark.parametrize(("total", "weights", "want"), [
    (0, 1, 0), (100, 1, 10), (44, 1, 4), (45, 1, 5),  # 4.4 down, 4.5 up
    (1300, 13, 10), (650, 13, 5), (584, 13, 4), (585, 13, 5),  # 4.49.. down, 4.5 up
    (0, 0, 0),  # no Score plugin: nothing to say
], ids=lambda v: str(v))
def test_scale(total: int, weights: int, want: int) -> None:
    assert scale(total, weights) == want


@pytest.mark.parametrize(("body", "error"), [
    ([], "ExtenderArgs: expected a JSON object"),
    ({"Nodes": None}, "ExtenderArgs.Pod: expected a v1.Pod object"),
    ({"Pod": pod()}, "ExtenderArgs: neither Nodes nor NodeNames is set"),
    ({"Pod": pod(), "NodeNames": [1]}, "ExtenderArgs.NodeNames: expected an array of strings"),
    ({"Pod": pod(), "Nodes": [node("a")]}, "ExtenderArgs.Nodes: expected a v1.NodeList object"),
    ({"Pod": pod(), "Nodes": {"items": [{"metadata": {}}]}}, "ExtenderArgs.Nodes.items[0]: metadata.name: Required value"),
    ({"Pod": pod(), "NodeNames": ["a"]}, "ExtenderArgs.NodeNames: this extender has no node cache (start it with "
                                         "--kubeconfig), so the caller must send full Nodes (nodeCacheCapable: false)"),
], ids=["not-object", "no-pod", "no-nodes", "bad-names", "nodes-not-list-object", "nameless-node", "names-without-cache"])
def test_bad_args_over_http(served: str, body: Any, error: str) -> None:
    status, res = post(f"{served}/filter", body)
    assert status == 200 and res["Error"].startswith("filter: ") and error in res["Error"] and res["Nodes"] is None
    status, text = post(f"{served}/prioritize", body)
    assert status == 400 and text.startswith("prioritize: ") and error in text


def post(url: str, body: Any, raw: bytes | None = None,
         context: ssl.SSLContext | None = None) -> tuple[int, Any]:
    req = urllib.request.Request(url, data=raw if raw is not None else json.dumps(body).encode(), method="POST")
    try:
        with urllib.request.urlopen(req, timeout=30, context=context) as r:
            data = r.read()
            status = r.status
    except urllib.error.HTTPError as exc:
        data, status = exc.read(), exc.code
        exc.close()
    try:
        return status, json.loads(data)
    except ValueError:
        return status, data.decode()


@pytest.fixture
def served() -> Iterator[str]:
    server = ExtenderServer(PluginExtender(_cfg(ONLY), in_tree_registry()), None, "127.0.0.1", 0)
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


def test_http_verbs_health_and_metrics(served: str) -> None:
    status, res = post(f"{served}/filter", args(pod(), node("a", verdict="no"), node("b", rank="5")))
    assert status == 200 and res["FailedNodes"] == {"a": "Verdicts: no, not here"}
    status, res = post(f"{served}/prioritize", args(pod(), node("b", rank="5")))
    assert (status, res) == (200, [{"Host": "b", "Score": 5}])
    status, res = post(f"{served}/filter", None, raw=b"{not json")
    assert status == 200 and res["Error"].startswith("filter: the request body is not JSON")
    status, res = post(f"{served}/bind", {"PodName": "p", "PodNamespace": "default", "Node": "b"})
    assert (status, res) == (200, {"Error": "this extender binds through a kubeconfig: start it with --kubeconfig"})
    with urllib.request.urlopen(f"{served}/healthz", timeout=10) as r:
        assert r.read() == b"ok"
    with urllib.request.urlopen(f"{served}/metrics", timeout=10) as r:
        text = r.read().decode()
    assert 'kubesched_extender_requests_total{code="200",verb="filter"} 2.0' in text
    assert 'kubesched_extender_requests_total{code="200",verb="prioritize"} 1.0' in text
    assert 'kubesched_extender_requests_total{code="200",verb="bind"} 1.0' in text
    assert 'kubesched_extender_request_duration_seconds_count{verb="filter"} 2.0' in text


def test_tls(tmp_path: Path) -> None:
    from kubesched.server.apiserver.authn.tls import ensure_certificates

    files = ensure_certificates(tmp_path / "pki", "127.0.0.1")
    server = ExtenderServer(PluginExtender(_cfg(ONLY), in_tree_registry()), None, "127.0.0.1", 0,
                            str(files.cert), str(files.key))
    server.start()
    try:
        assert server.url.startswith("https://")
        ctx = ssl.create_default_context(cafile=str(files.ca_cert))
        status, res = post(f"{server.url}/prioritize", args(pod(), node("b", rank="7")), context=ctx)
        assert (status, res) == (200, [{"Host": "b", "Score": 7}])
        with pytest.raises((urllib.error.URLError, ConnectionError)):  # plain HTTP is not served
            urllib.request.urlopen(f"http://127.0.0.1:{server.port}/healthz", timeout=10)
    finally:
        server.stop()


@pytest.mark.parametrize(("config", "extra", "error"), [
    ("profiles: [{plugins: {filter: {enabled: [{nam: X}]}}}]", (), 'profiles[0].plugins.filter.enabled[0].nam'),
    ("profiles: [{plugins: {filter: {enabled: [{name: nosuch:Plugin}]}}}]", (), "nosuch:Plugin"),
    ("", ("--profile", "other"), 'no profile with schedulerName "other"'),
    ("", ("--tls-cert-file", "/nonexistent.crt", "--tls-private-key-file", "/nonexistent.key"), "/nonexistent.crt"),
    ("", ("--kubernetes-version", "1.31"), "Kubernetes 1.31 is not supported; supported: 1.34, 1.35, 1.36, 1.37"),
    ("", ("--feature-gates", "NoSuchGate=true"), "unrecognized feature gate: NoSuchGate"),
], ids=["unknown-field", "unknown-plugin", "unknown-profile", "missing-cert", "unsupported-release", "unknown-gate"])
def test_bad_configuration_exits_2_naming_file_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        config: str, extra: tuple[str, ...], error: str) -> None:
    path = tmp_path / "plugins.yaml"
    path.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + config + "\n")
    assert main(["extender", "--config", str(path), "--port", "0", *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kubesched: error: ") and error in err and "Traceback" not in err
    if not extra:
        assert str(path) in err
