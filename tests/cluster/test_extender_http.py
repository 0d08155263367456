"""Scheduler extenders over real HTTP on loopback (upstream pkg/scheduler/extender.go and
schedule_one.go findNodesThatPassExtenders / prioritizeNodes / extendersBinding).

Each test starts its own extender, written here with the standard library's HTTP
server, and runs the real simulator against it; expected values are computed in the
test from upstream's rules (score × weight × MaxNodeScore/MaxExtenderPriority, the
FitError message format)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.api.decode import load_manifests
from kubesched.config import ConfigError, load_config
from kubesched.sim.driver import Simulation

Reply = Callable[[str, dict[str, Any]], Any]


class Extender:
    """A loopback extender: ``reply(verb, body)`` answers; every request is recorded."""

    def __init__(self, reply: Reply, delay: float = 0.0) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        ext = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                verb = self.path.strip("/")
                ext.requests.append((verb, body))
                if delay:
                    time.sleep(delay)
                data = json.dumps(reply(verb, body)).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the scheduler gave up (timeout)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def verbs(self) -> list[str]:
        return [v for v, _ in self.requests]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def start() -> Iterator[Callable[..., Extender]]:
    started: list[Extender] = []

    def make(reply: Reply, delay: float = 0.0) -> Extender:
        e = Extender(reply, delay)
        started.append(e)
        return e

    yield make
    for e in started:
        e.close()


def _node(name: str, rank: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"rank": str(rank)}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def _pod(name: str, extra: dict[str, str] | None = None) -> dict[str, Any]:
    res = {"cpu": "100m", "memory": "100Mi", **(extra or {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "busybox",
                                     "resources": {"requests": res, "limits": res}}]}}


def _run(tmp_path: Path, extenders: list[dict[str, Any]], pods: list[dict[str, Any]] | None = None,
         ) -> Simulation:
    nodes = [_node("node-a", 1), _node("node-b", 7), _node("node-c", 4)]
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(nodes + (pods or [_pod("p")])))
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
         "percentageOfNodesToScore": 100, "extenders": extenders}))
    sim = Simulation(load_manifests([str(tmp_path / "cluster.yaml")]), load_config(str(tmp_path / "config.yaml")),
                     tie_break="name", explain=True)
    sim.run(single_pass=True)
    return sim


def _names(body: dict[str, Any]) -> list[str]:
    if body.get("NodeNames") is not None:
        return list(body["NodeNames"])
    return [n["metadata"]["name"] for n in body["Nodes"]["items"]]


def _keep(body: dict[str, Any], keep: set[str], failed: dict[str, str], unres: dict[str, str]) -> dict[str, Any]:
    items = [n for n in (body.get("Nodes") or {}).get("items", []) if n["metadata"]["name"] in keep]
    return {"Nodes": {"items": items} if body.get("Nodes") is not None else None,
            "NodeNames": [n for n in _names(body) if n in keep] if body.get("NodeNames") is not None else None,
            "FailedNodes": failed, "FailedAndUnresolvableNodes": unres, "Error": ""}


def test_filter_verdicts_and_the_full_node_objects(tmp_path: Path, start: Callable[..., Extender]) -> None:
    ext = start(lambda verb, body: _keep(body, {"node-b"}, {"node-a": "no a", "node-c": "no c"},
                                         {"node-c": "never c"}))
    sim = _run(tmp_path, [{"urlPrefix": ext.url, "filterVerb": "filter"}])
    out = sim.results()[0]
    assert out.node == "node-b"
    verb, body = ext.requests[0]
    assert verb == "filter" and body["NodeNames"] is None
    assert sorted(_names(body)) == ["node-a", "node-b", "node-c"]
    assert body["Pod"]["metadata"]["name"] == "p"
    att = out.attempts[0]
    assert att.filter["node-a"] == {"plugin": ext.url, "code": "Unschedulable", "reasons": ["no a"]}
    # a node in both maps is unresolvable, with that map's message only
    assert att.filter["node-c"] == {"plugin": ext.url, "code": "UnschedulableAndUnresolvable", "reasons": ["never c"]}
    assert "extenderSeconds" in att.to_json()


def test_all_rejected_counts_in_the_fit_error(tmp_path: Path, start: Callable[..., Extender]) -> None:
    ext = start(lambda verb, body: _keep(body, set(), {"node-a": "busy", "node-b": "busy"}, {"node-c": "gone"}))
    out = _run(tmp_path, [{"urlPrefix": ext.url, "filterVerb": "filter"}]).results()[0]
    assert out.node is None
    # FitError: reasons counted per node, sorted; preemption finds nothing to evict
    assert out.attempts[0].message is not None
    assert out.attempts[0].message.startswith("0/3 nodes are available: 1 gone, 2 busy.")


def test_prioritize_weight_and_scaling(tmp_path: Path, start: Callable[..., Extender]) -> None:
    raw = {"node-a": 9, "node-b": 2, "node-c": 5}
    ext = start(lambda verb, body: [{"Host": n, "Score": raw[n]} for n in _names(body)])
    weight = 2
    out = _run(tmp_path, [{"urlPrefix": ext.url, "prioritizeVerb": "prioritize", "weight": weight}]).results()[0]
    att = out.attempts[0]
    for n, s in raw.items():
        assert att.scores[n][ext.url] == s * weight * (100 // 10)  # MaxNodeScore / MaxExtenderPriority
        assert att.totals[n] == sum(att.scores[n].values())
    # the three nodes are identical but for the extender's score: node-a wins
    assert out.node == "node-a"
    assert ext.verbs() == ["prioritize"]


def test_node_cache_capable_sends_names(tmp_path: Path, start: Callable[..., Extender]) -> None:
    ext = start(lambda verb, body: _keep(body, {"node-c"}, {}, {}))
    out = _run(tmp_path, [{"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": True}]).results()[0]
    _, body = ext.requests[0]
    assert body["Nodes"] is None and sorted(body["NodeNames"]) == ["node-a", "node-b", "node-c"]
    assert out.node == "node-c"
    # a node missing from the reply without a map entry is dropped with no status
    assert out.attempts[0].filter["node-a"] == "ok"


def test_bind_is_delegated(tmp_path: Path, start: Callable[..., Extender]) -> None:
    ext = start(lambda verb, body: {"Error": ""})
    sim = _run(tmp_path, [{"urlPrefix": ext.url, "bindVerb": "bind"}])
    out = sim.results()[0]
    assert out.status == "Scheduled" and out.node == "node-a"
    verb, body = ext.requests[-1]
    assert verb == "bind"
    assert body == {"PodName": "p", "PodNamespace": "default", "PodUID": out.pod.uid, "Node": "node-a"}


def test_bind_error_fails_the_binding(tmp_path: Path, start: Callable[..., Extender]) -> None:
    ext = start(lambda verb, body: {"Error": "no capacity in the fabric"})
    out = _run(tmp_path, [{"urlPrefix": ext.url, "bindVerb": "bind"}]).results()[0]
    assert out.node is None
    assert any(a.message and "no capacity in the fabric" in a.message for a in out.attempts)


def test_slow_extender_hits_http_timeout(tmp_path: Path, start: Callable[..., Extender]) -> None:
    ext = start(lambda verb, body: _keep(body, set(_names(body)), {}, {}), delay=3.0)
    t0 = time.monotonic()
    out = _run(tmp_path, [{"urlPrefix": ext.url, "filterVerb": "filter", "httpTimeout": "200ms"}]).results()[0]
    assert out.node is None
    att = out.attempts[0]
    assert att.result == "Error"
    assert att.message == (f'Post "{ext.url}/filter": context deadline exceeded '
                           "(Client.Timeout exceeded while awaiting headers)")
    assert time.monotonic() - t0 < 60  # generous: the call gave up, it did not wait the 3 s per pod forever


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_ignorable_extender_that_is_down_is_skipped(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    out = _run(tmp_path, [{"urlPrefix": url, "filterVerb": "filter", "ignorable": True}]).results()[0]
    assert out.node == "node-a"


def test_extender_that_is_down_fails_the_attempt(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    out = _run(tmp_path, [{"urlPrefix": url, "filterVerb": "filter"}]).results()[0]
    assert out.node is None
    assert out.attempts[0].result == "Error"
    assert out.attempts[0].message == f'Post "{url}/filter": connect: connection refused'
    assert out.attempts[0].nominated_node is None  # an error ends the cycle: no preemption


def test_managed_resources_select_the_pods(tmp_path: Path, start: Callable[..., Extender]) -> None:
    ext = start(lambda verb, body: _keep(body, {"node-c"}, {}, {}))
    pods = [_pod("plain"), _pod("gpu", {"example.com/gpu": "1"})]
    nodes_extra = {"example.com/gpu": "2"}
    sim_nodes = [_node(n, r) for n, r in (("node-a", 1), ("node-b", 7), ("node-c", 4))]
    for n in sim_nodes:
        n["status"]["allocatable"].update(nodes_extra)
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(sim_nodes + pods))
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
         "extenders": [{"urlPrefix": ext.url, "filterVerb": "filter",
                        "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": False}]}]}))
    sim = Simulation(load_manifests([str(tmp_path / "cluster.yaml")]), load_config(str(tmp_path / "config.yaml")),
                     tie_break="name", explain=True)
    sim.run(single_pass=True)
    placed = {o.pod.name: o.node for o in sim.results()}
    assert placed == {"plain": "node-a", "gpu": "node-c"}
    assert [b["Pod"]["metadata"]["name"] for _, b in ext.requests] == ["gpu"]


@pytest.mark.parametrize(("extenders", "field", "text"), [
    ([{"urlPrefix": "http://x", "prioritizeVerb": "p"}], "extenders[0].weight",
     "must have a positive weight applied to it"),
    ([{"urlPrefix": "http://x", "bindVerb": "b"}, {"urlPrefix": "http://y", "bindVerb": "b"}], "extenders",
     "only one extender can implement bind"),
    ([{"urlPrefix": "http://x", "managedResources": [{"name": "example.com/a"}, {"name": "example.com/a"}]}],
     "extenders[0].managedResources[1].name", "duplicate extender managed resource name"),
    ([{"urlPrefix": "http://x", "httpTimeout": "soon"}], "extenders[0].httpTimeout", ""),
    ([{"urlPrefix": "http://x", "filterverb": "f"}], "extenders[0].filterverb", "unknown field"),
])
def test_config_validation(extenders: list[dict[str, Any]], field: str, text: str) -> None:
    """Upstream apis/config/validation validateExtenders messages."""
    with pytest.raises(ConfigError) as info:
        load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                     "extenders": extenders})
    assert any(e.field == field and text in e.message for e in info.value.errors), info.value.errors


def test_config_defaults() -> None:
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "extenders": [{"urlPrefix": "http://x", "filterVerb": "f"}]})
    (e,) = cfg.extenders
    assert e.http_timeout == 5.0  # upstream DefaultExtenderTimeout
    assert not e.node_cache_capable and not e.ignorable and e.weight == 0


def _preemption_cluster(tmp_path: Path, extender: dict[str, Any]) -> Simulation:
    """Two full nodes, each running one low-priority 4-cpu pod; a high-priority 4-cpu pod
    must preempt. Without an extender DefaultPreemption picks node-a (tie: smallest name)."""
    nodes = [_node("node-a", 1), _node("node-b", 2)]
    low = []
    for n in ("node-a", "node-b"):
        p = _pod(f"low-{n}", {"cpu": "4"})
        p["spec"]["nodeName"] = n
        low.append(p)
    high = _pod("high", {"cpu": "4"})
    high["spec"]["priorityClassName"] = "high"
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 100}
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(nodes + [pc] + low + [high]))
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
         "extenders": [extender]}))
    sim = Simulation(load_manifests([str(tmp_path / "cluster.yaml")]), load_config(str(tmp_path / "config.yaml")),
                     tie_break="name", explain=True)
    sim.run(single_pass=True)
    return sim


def test_preempt_verb_chooses_the_candidates(tmp_path: Path, start: Callable[..., Extender]) -> None:
    """The extender removes node-a from the candidates (upstream Evaluator.callExtenders):
    the victim is the pod on node-b."""
    def reply(verb: str, body: dict[str, Any]) -> Any:
        victims = body["NodeNameToVictims"]
        return {"NodeNameToMetaVictims": {
            n: {"Pods": [{"UID": p["metadata"]["uid"]} for p in v["Pods"]], "NumPDBViolations": 0}
            for n, v in victims.items() if n != "node-a"}}

    ext = start(reply)
    sim = _preemption_cluster(tmp_path, {"urlPrefix": ext.url, "preemptVerb": "preempt"})
    high = next(o for o in sim.results() if o.pod.name == "high")
    assert high.attempts[0].nominated_node == "node-b"
    assert high.attempts[0].victims == ["default/low-node-b"]
    assert high.node == "node-b"
    _, body = ext.requests[0]
    assert sorted(body["NodeNameToVictims"]) == ["node-a", "node-b"]


def test_preempt_verb_without_victims_is_an_error(tmp_path: Path, start: Callable[..., Extender]) -> None:
    ext = start(lambda verb, body: {"NodeNameToMetaVictims": {"node-a": {"Pods": [], "NumPDBViolations": 0}}})
    sim = _preemption_cluster(tmp_path, {"urlPrefix": ext.url, "preemptVerb": "preempt"})
    high = next(o for o in sim.results() if o.pod.name == "high")
    assert high.node is None and high.attempts[0].nominated_node is None
    assert high.attempts[0].message is not None
    assert high.attempts[0].message.endswith('preemption: expected at least one victim pod on node "node-a"')


def test_extender_latency_metric() -> None:
    """Each extender call timed in the attempt becomes one histogram sample."""
    from kubesched.api.objects import Pod
    from kubesched.live.metrics import SchedulerMetrics
    from kubesched.explanation.attempt import Attempt

    m = SchedulerMetrics()
    att = Attempt(extender_seconds={"http://127.0.0.1:1 filter": 0.004, "http://127.0.0.1:1 prioritize": 0.5})
    m.on_attempt(Pod.from_dict(_pod("p")), att, 0.6)
    labels = {"extender": "http://127.0.0.1:1", "verb": "filter"}
    assert m.registry.get_sample_value("kubesched_extender_call_duration_seconds_count", labels) == 1
    assert m.registry.get_sample_value("kubesched_extender_call_duration_seconds_sum",
                                       {**labels, "verb": "prioritize"}) == 0.5


def test_unknown_node_in_the_reply_is_an_error(tmp_path: Path, start: Callable[..., Extender]) -> None:
    ext = start(lambda verb, body: {"Nodes": {"items": [_node("node-zz", 1)]}, "FailedNodes": {}, "Error": ""})
    out = _run(tmp_path, [{"urlPrefix": ext.url, "filterVerb": "filter"}]).results()[0]
    assert out.node is None
    assert out.attempts[0].result == "Error"
    assert out.attempts[0].message == "an extender returned node(s) not in the cluster: node-zz"
