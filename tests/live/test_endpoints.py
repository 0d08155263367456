"""Tests of ``kubesched.live.endpoints``: a real EndpointServer on a free port of 127.0.0.1,
requested with urllib.

The health answers follow the apiserver library's healthz handler (kubernetes/kubernetes,
staging/src/k8s.io/apiserver/pkg/server/healthz/healthz.go, ``handleRootHealth``): ``ok``;
with ``?verbose`` one ``[+]<name> ok`` line per check then ``<endpoint> check passed``; on a
failure status 500, ``[-]<name> failed: reason withheld`` (the reason only logged) and
``<endpoint> check failed``; ``?exclude=<name>`` gives ``[+]<name> excluded: ok``.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, Counter
from prometheus_client.parser import text_string_to_metric_families

from kubesched.live.endpoints import EndpointHooks, EndpointServer

EXPLAINED = {"pod": "default/p1", "nodes": {"n1": {"filter": "ok", "scores": {"NodeResourcesFit": 80}},
                                           "n2": {"filter": "Insufficient cpu"}}}
EXPLAINED_TEXT = "NODE  FILTER            SCORE\nn1    ok                80\nn2    Insufficient cpu  -\n"


@dataclass
class Fixture:
    """A started server and the state its hooks read (set ``failing[name]`` to a reason to
    make that check fail)."""

    server: EndpointServer
    counter: Counter
    failing: dict[str, str | None] = field(default_factory=dict)
    explained: list[tuple[str, str]] = field(default_factory=list)

    def get(self, path: str) -> tuple[int, str, dict[str, str]]:
        """GET ``path``: status, body, headers (lower-case names); HTTP errors are answers."""
        try:
            with urllib.request.urlopen(self.server.url + path, timeout=5) as resp:
                return resp.status, resp.read().decode(), {k.lower(): v for k, v in resp.headers.items()}
        except urllib.error.HTTPError as err:
            with err:
                return err.code, err.read().decode(), {k.lower(): v for k, v in err.headers.items()}


def make_hooks(state: dict[str, str | None], explained: list[tuple[str, str]], registry: CollectorRegistry,
               with_text: bool = True) -> EndpointHooks:
    def check(name: str) -> Callable[[], str | None]:
        def run() -> str | None:
            reason = state.get(name)
            if reason == "raise":
                raise RuntimeError("the check itself broke")
            return reason
        return run

    def explain(ns: str, name: str) -> dict[str, Any] | None:
        explained.append((ns, name))
        return EXPLAINED if (ns, name) == ("default", "p1") else None

    def explain_text(ns: str, name: str) -> str | None:
        explained.append((ns, name))
        return EXPLAINED_TEXT if (ns, name) == ("default", "p1") else None

    def explain_fixes(ns: str, name: str, limit: int) -> dict[str, Any] | None:
        explained.append((ns, f"{name}?fixes={limit}"))
        return {"fixes": [], "limit": limit} if (ns, name) == ("default", "p1") else None

    health = [("ping", check("ping")), ("leaderElection", check("leaderElection"))]
    ready = health + [("sched-handler-sync", check("sched-handler-sync")), ("shutdown", check("shutdown"))]
    return EndpointHooks(healthz=health, readyz=ready, registry=registry, explain=explain,
                         explain_text=explain_text if with_text else None, explain_fixes=explain_fixes)


@pytest.fixture
def start() -> Iterator[Callable[..., Fixture]]:
    """``start(with_text=True)``: a started EndpointServer with controllable hooks; stopped at
    teardown."""
    servers: list[EndpointServer] = []

    def make(with_text: bool = True) -> Fixture:
        registry = CollectorRegistry()
        counter = Counter("kubesched_test_requests", "Requests seen by the test.", registry=registry)
        failing: dict[str, str | None] = {}
        explained: list[tuple[str, str]] = []
        server = EndpointServer(make_hooks(failing, explained, registry, with_text), "127.0.0.1", 0)
        servers.append(server)
        server.start()
        return Fixture(server, counter, failing, explained)

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
def ep(start: Callable[..., Fixture]) -> Fixture:
    return start()


def test_server_binds_a_free_port_of_the_host(ep: Fixture) -> None:
    """EndpointServer(hooks, "127.0.0.1", 0): bound before it starts, its url names the port."""
    assert ep.server.port > 0
    assert ep.server.url == f"http://127.0.0.1:{ep.server.port}"


@pytest.mark.parametrize("path", ["/healthz", "/livez", "/readyz"])
def test_healthy_answers_ok(ep: Fixture, path: str) -> None:
    """healthz.go handleRootHealth: all checks pass, no ``verbose``: 200 ``ok`` (no newline),
    text/plain."""
    status, body, headers = ep.get(path)
    assert (status, body) == (200, "ok")
    assert headers["content-type"].startswith("text/plain")


@pytest.mark.parametrize(("path", "endpoint"), [("/healthz", "healthz"), ("/livez", "livez")])
def test_verbose_lists_every_check(ep: Fixture, path: str, endpoint: str) -> None:
    """healthz.go handleRootHealth with ``?verbose``: one ``[+]<name> ok`` line per check,
    then ``<endpoint> check passed``."""
    status, body, _ = ep.get(path + "?verbose")
    assert status == 200
    assert body == f"[+]ping ok\n[+]leaderElection ok\n{endpoint} check passed\n"


def test_readyz_uses_the_readyz_checks(ep: Fixture) -> None:
    """/readyz runs the readyz checks (sched-handler-sync, shutdown besides the healthz ones);
    their failure fails /readyz but not /healthz."""
    status, body, _ = ep.get("/readyz?verbose")
    assert status == 200
    assert body == ("[+]ping ok\n[+]leaderElection ok\n[+]sched-handler-sync ok\n[+]shutdown ok\n"
                    "readyz check passed\n")
    ep.failing["sched-handler-sync"] = "caches not synced"
    status, body, _ = ep.get("/readyz")
    assert status == 500
    assert body == ("[+]ping ok\n[+]leaderElection ok\n[-]sched-handler-sync failed: reason withheld\n"
                    "[+]shutdown ok\nreadyz check failed\n")
    assert ep.get("/healthz")[:2] == (200, "ok")
    assert ep.get("/livez")[:2] == (200, "ok")


@pytest.mark.parametrize(("path", "endpoint"), [("/healthz", "healthz"), ("/livez", "livez"),
                                                ("/readyz", "readyz")])
def test_failing_check_is_500_with_reason_withheld(ep: Fixture, path: str, endpoint: str,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    """healthz.go handleRootHealth: "always be verbose on failure": 500, every check's line,
    the failed one as ``[-]<name> failed: reason withheld`` (the reason is not served, only
    logged), then ``<endpoint> check failed``."""
    caplog.set_level(logging.INFO, logger="kubesched.live.endpoints")
    ep.failing["leaderElection"] = "failed election to renew leadership on lease kube-scheduler"
    status, body, headers = ep.get(path)
    assert status == 500
    assert headers["content-type"].startswith("text/plain")
    lines = body.splitlines()
    assert lines[:2] == ["[+]ping ok", "[-]leaderElection failed: reason withheld"]
    assert lines[-1] == f"{endpoint} check failed"
    assert body.endswith("\n")
    assert "renew leadership" not in body
    assert "failed election to renew leadership on lease kube-scheduler" in caplog.text
    # verbose changes nothing on failure
    assert ep.get(path + "?verbose")[:2] == (status, body)


def test_exact_failure_body(ep: Fixture) -> None:
    """healthz.go handleRootHealth + http.Error (which adds the final newline): the exact
    answer of /healthz with one failing check."""
    ep.failing["ping"] = "no"
    assert ep.get("/healthz")[:2] == (500, "[-]ping failed: reason withheld\n[+]leaderElection ok\n"
                                           "healthz check failed\n")


def test_check_raising_is_a_failed_check(ep: Fixture) -> None:
    """A check that raises fails like one returning a reason (a Go check returns an error)."""
    ep.failing["leaderElection"] = "raise"
    status, body, _ = ep.get("/healthz")
    assert status == 500
    assert "[-]leaderElection failed: reason withheld\n" in body
    assert "broke" not in body


def test_exclude_skips_a_check(ep: Fixture) -> None:
    """healthz.go getExcludedChecks / handleRootHealth: ``?exclude=<name>`` does not run the
    check and lists it as ``[+]<name> excluded: ok``; several ``exclude`` parameters combine."""
    ep.failing["leaderElection"] = "stale lease"
    assert ep.get("/healthz?exclude=leaderElection")[:2] == (200, "ok")
    status, body, _ = ep.get("/healthz?exclude=leaderElection&verbose")
    assert status == 200
    assert body == "[+]ping ok\n[+]leaderElection excluded: ok\nhealthz check passed\n"
    ep.failing["shutdown"] = "stopping"
    assert ep.get("/readyz?exclude=leaderElection")[0] == 500
    status, body, _ = ep.get("/readyz?exclude=leaderElection&exclude=shutdown&verbose")
    assert status == 200
    assert body == ("[+]ping ok\n[+]leaderElection excluded: ok\n[+]sched-handler-sync ok\n"
                    "[+]shutdown excluded: ok\nreadyz check passed\n")


def test_checks_run_on_every_request(ep: Fixture) -> None:
    """The answer follows the checks' current state (no caching)."""
    assert ep.get("/healthz")[0] == 200
    ep.failing["leaderElection"] = "stale"
    assert ep.get("/healthz")[0] == 500
    ep.failing["leaderElection"] = None
    assert ep.get("/healthz")[:2] == (200, "ok")


def test_metrics_in_prometheus_text_format(ep: Fixture) -> None:
    """/metrics: the registry in the Prometheus text exposition format, read when requested."""
    ep.counter.inc(3)
    status, body, headers = ep.get("/metrics")
    assert status == 200
    assert headers["content-type"].startswith("text/plain")
    assert "kubesched_test_requests_total 3.0" in body
    families = {f.name: f for f in text_string_to_metric_families(body)}
    assert families["kubesched_test_requests"].type == "counter"
    samples = {s.name: s.value for s in families["kubesched_test_requests"].samples}
    assert samples["kubesched_test_requests_total"] == 3.0
    ep.counter.inc()
    assert "kubesched_test_requests_total 4.0" in ep.get("/metrics")[1]


def test_explain_json(ep: Fixture) -> None:
    """/debug/explain/<namespace>/<pod>: the explanation as JSON."""
    status, body, headers = ep.get("/debug/explain/default/p1")
    assert status == 200
    assert headers["content-type"].startswith("application/json")
    assert json.loads(body) == EXPLAINED
    assert ep.explained == [("default", "p1")]


def test_explain_unknown_pod_is_404_naming_it(ep: Fixture) -> None:
    """/debug/explain of a pod without an attempt: 404, a JSON error naming the pod."""
    status, body, headers = ep.get("/debug/explain/kube-system/nope")
    assert status == 404
    assert headers["content-type"].startswith("application/json")
    assert json.loads(body) == {"error": "pod kube-system/nope has no scheduling attempt"}
    assert ep.explained == [("kube-system", "nope")]


def test_explain_text(ep: Fixture) -> None:
    """``?output=text``: the table from explain_text (404 text naming the pod when absent)."""
    status, body, headers = ep.get("/debug/explain/default/p1?output=text")
    assert (status, body) == (200, EXPLAINED_TEXT)
    assert headers["content-type"].startswith("text/plain")
    status, body, headers = ep.get("/debug/explain/default/p2?output=text")
    assert (status, body) == (404, "pod default/p2 has no scheduling attempt\n")
    assert headers["content-type"].startswith("text/plain")
    assert ep.explained == [("default", "p1"), ("default", "p2")]


def test_explain_fixes(ep: Fixture) -> None:
    """``?fixes=N``: the fix search's document; N must be a positive integer; 404 when the
    pod is not pending."""
    status, body, _ = ep.get("/debug/explain/default/p1?fixes=3")
    assert (status, json.loads(body)) == (200, {"fixes": [], "limit": 3})
    status, body, _ = ep.get("/debug/explain/default/p1?fixes=0")
    assert (status, json.loads(body)) == (400, {"error": "fixes='0': must be a positive integer"})
    status, body, _ = ep.get("/debug/explain/default/p2?fixes=2")
    assert (status, json.loads(body)) == (404, {"error": "pod default/p2 is not pending"})
    assert ep.explained == [("default", "p1?fixes=3"), ("default", "p2?fixes=2")]


def test_explain_text_without_explain_text_hook_answers_json(start: Callable[..., Fixture]) -> None:
    """Without an explain_text hook ``?output=text`` falls back to the JSON answer."""
    ep = start(with_text=False)
    status, body, headers = ep.get("/debug/explain/default/p1?output=text")
    assert status == 200
    assert headers["content-type"].startswith("application/json")
    assert json.loads(body) == EXPLAINED


@pytest.mark.parametrize("path", ["/", "/nope", "/debug/explain/default", "/debug/explain/a/b/c", "/healthz/extra",
                                  "/readyz/ping/more"])
def test_unknown_path_is_404(ep: Fixture, path: str) -> None:
    """Paths the server does not serve answer 404."""
    assert ep.get(path)[0] == 404


def test_stop_closes_the_port(start: Callable[..., Fixture]) -> None:
    """stop(): the server thread ends and the port no longer answers."""
    ep = start()
    assert ep.get("/healthz")[0] == 200
    ep.server.stop()
    with pytest.raises(OSError):
        urllib.request.urlopen(ep.server.url + "/healthz", timeout=2)


def test_one_check_by_path(ep: Fixture) -> None:
    """healthz.go installs ``/<endpoint>/<check>`` per check (``adaptCheckToHandler``): ``ok``,
    or 500 with ``internal server error: <reason>``; readyz's own checks only under /readyz."""
    assert ep.get("/healthz/ping")[:2] == (200, "ok")
    assert ep.get("/readyz/sched-handler-sync")[:2] == (200, "ok")
    assert ep.get("/healthz/sched-handler-sync")[0] == 404
    ep.failing["leaderElection"] = "lease not renewed"
    status, body, headers = ep.get("/livez/leaderElection")
    assert status == 500 and body == "internal server error: lease not renewed\n"
    assert headers["x-content-type-options"] == "nosniff"


def test_excluding_an_unknown_check_warns(ep: Fixture) -> None:
    """healthz.go: exclusions that match no check are listed in a ``warn:`` line."""
    status, body, headers = ep.get("/healthz?verbose&exclude=ping&exclude=nope")
    assert status == 200
    assert body == ('[+]ping excluded: ok\n[+]leaderElection ok\n'
                    'warn: some health checks cannot be excluded: no matches for "nope"\nhealthz check passed\n')
    assert headers["x-content-type-options"] == "nosniff"
