"""The web UI's JSON endpoints on a real ``kubesched serve`` (real SQLite, real scheduler),
over HTTP: paging and filtering, the why message, the queue, create/delete through the
API server's handlers, configuration changes, Server-Sent Events, and errors that name
what was wrong."""

from __future__ import annotations

import json
import socket
import urllib.parse
import urllib.request
from typing import Any

from serve_harness import Server, eventually

POD = """apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {ns}}}
spec:
  containers:
  - name: app
    image: registry.example/app:1
    resources: {{requests: {{cpu: "{cpu}", memory: {memory}}}}}
"""


def pod_yaml(name: str, cpu: str = "1", memory: str = "1Gi", ns: str = "default") -> str:
    return POD.format(name=name, cpu=cpu, memory=memory, ns=ns)


def apply(server: Server, text: str) -> tuple[int, Any]:
    return server.request("POST", "/ui/api/apply", raw=text.encode(), content_type="application/yaml")


def test_root_is_the_page_for_browsers_and_the_old_404_for_api_clients(tiny: Server) -> None:
    code, body = tiny.request("GET", "/", headers={"Accept": "application/json"})
    assert code == 404 and body["kind"] == "Status" and body["reason"] == "NotFound"
    code, html = tiny.request("GET", "/", headers={"Accept": "text/html,application/xhtml+xml"})
    assert code == 200 and "<title>kubesched</title>" in html and "/ui/static/app.js" in html
    code, js = tiny.request("GET", "/ui/static/app.js")
    assert code == 200 and "EventSource" in js
    code, body = tiny.request("GET", "/ui/static/..%2F__init__.py")
    assert code == 404
    code, body = tiny.request("GET", "/api/v1/nodes")  # the API is untouched
    assert code == 200 and len(body["items"]) == 2


def test_nodes_are_paged_and_filtered_on_the_server(tiny: Server) -> None:
    code, page = tiny.request("GET", "/ui/api/nodes?offset=1&limit=1")
    assert code == 200 and page["total"] == 2 and [n["name"] for n in page["items"]] == ["node-02"]
    code, page = tiny.request("GET", "/ui/api/nodes?q=node-01")
    assert [n["name"] for n in page["items"]] == ["node-01"] and page["total"] == 1 and page["all"] == 2
    cpu = next(r for r in page["items"][0]["resources"] if r["name"] == "cpu")
    assert cpu["allocatable"] == 4000  # --node-cpu 4, in millicores
    code, err = tiny.request("GET", "/ui/api/nodes?limit=many")
    assert code == 400 and err == {"error": "query parameter limit: 'many' is not an integer"}
    code, err = tiny.request("GET", "/ui/api/nodes/no-such-node")
    assert code == 404 and "no-such-node" in err["error"]


def test_create_from_yaml_reports_each_object_and_the_api_servers_errors(tiny: Server) -> None:
    text = pod_yaml("api-fits", cpu="500m", memory="512Mi") + "---\n" + """apiVersion: v1
kind: Pod
metadata: {name: api-bad-quantity}
spec:
  containers:
  - name: app
    image: x
    resources: {requests: {cpu: lots}}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
"""
    code, out = apply(tiny, text)
    assert code == 200 and out["ok"] is False
    first, second, third = out["results"]
    assert first == {"object": "pod/default/api-fits", "ok": True, "code": 201, "message": "created"}
    # what kubectl gets for the same body (a 400 BadRequest Status from the decoder)
    assert second["object"] == "pod/default/api-bad-quantity" and second["code"] == 400
    assert "quantities must match the regular expression" in second["message"]
    assert third == {"object": "Widget", "ok": False, "code": 400,
                     "message": "no resource of kind Widget in example.com/v1 on this server"}
    code, again = apply(tiny, pod_yaml("api-fits"))
    assert again["results"][0]["code"] == 409 and 'pods "api-fits" already exists' in again["results"][0]["message"]
    code, err = apply(tiny, "kind: [unclosed")
    assert code == 400 and err["error"].startswith("YAML: ")
    code, err = apply(tiny, "- just\n- a list\n")
    assert code == 400 and err["error"] == "document 1: an object (apiVersion, kind, metadata) is expected, not list"
    # the pod was created through the API, scheduled, and shows as bound
    node = eventually(lambda: tiny.request("GET", "/api/v1/namespaces/default/pods/api-fits")[1]["spec"].get("nodeName"))
    code, row = tiny.request("GET", "/ui/api/pods/default/api-fits")
    assert row["node"] == node and row["why"] == ""
    # created through the API server's handlers, as the manager the UI's user agent names
    created = tiny.request("GET", "/api/v1/namespaces/default/pods/api-fits")[1]
    assert created["metadata"]["managedFields"][0]["manager"] == "kubesched-ui"
    requested = eventually(lambda: next(r for r in tiny.request("GET", f"/ui/api/nodes/{node}")[1]["resources"]
                                        if r["name"] == "cpu" and r["requested"] >= 500))
    assert requested["requested"] == 500


def test_a_pod_that_cannot_fit_shows_why_in_the_pending_list_and_the_queue(tiny: Server) -> None:
    code, out = apply(tiny, pod_yaml("api-huge", cpu="100"))
    assert out["ok"]
    # upstream's message for two nodes both short of cpu (schedule_one.go's FitError, the
    # DefaultPreemption suffix): nothing to preempt helps, since no node has 100 cpu at all
    expected = ("0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: "
                "0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    row = eventually(lambda: next((p for p in tiny.request("GET", "/ui/api/pending?q=api-huge")[1]["items"]
                                   if p["why"]), None))
    assert row["why"] == expected and row["status"] == "Pending"
    queue = eventually(lambda: (q := tiny.request("GET", "/ui/api/queue")[1])["counts"]["unschedulable"] and q)
    member = next(p for p in queue["pods"]["unschedulable"] if p["name"] == "api-huge")
    assert member["unschedulablePlugins"] == ["NodeResourcesFit"] and member["why"] == expected
    code, doc = tiny.request("GET", "/debug/explain/default/api-huge")
    assert code == 200 and doc["result"] == "Unschedulable" and doc["message"] == expected
    assert doc["filter"]["node-01"]["plugin"] == "NodeResourcesFit"
    assert doc["filter"]["node-01"]["reasons"] == ["Insufficient cpu"]
    code, err = tiny.request("GET", "/debug/explain/default/never-created")
    assert code == 404 and err == {"error": "pod default/never-created has no scheduling attempt"}


def test_delete_goes_through_the_api_server(tiny: Server) -> None:
    apply(tiny, pod_yaml("api-doomed", cpu="100"))
    eventually(lambda: tiny.request("GET", "/ui/api/pods/default/api-doomed")[0] == 200)
    code, out = tiny.request("POST", "/ui/api/delete",
                             {"apiVersion": "v1", "kind": "Pod", "namespace": "default", "name": "api-doomed"})
    assert code == 200 and out == {"object": "pod/default/api-doomed", "ok": True, "code": 200, "message": "deleted"}
    eventually(lambda: tiny.request("GET", "/api/v1/namespaces/default/pods/api-doomed")[0] == 404)
    code, out = tiny.request("POST", "/ui/api/delete", {"kind": "Pod", "namespace": "default", "name": "api-doomed"})
    assert code == 404 and out["message"] == 'pods "api-doomed" not found'
    code, out = tiny.request("POST", "/ui/api/delete", raw=b"not json")
    assert code == 400 and "apiVersion, kind, namespace and name" in out["error"]
    # deleting what a YAML text names, as kubectl delete -f
    apply(tiny, pod_yaml("api-yaml-a", cpu="100") + "---\n" + pod_yaml("api-yaml-b", cpu="100"))
    code, out = tiny.request("POST", "/ui/api/delete-yaml", raw=(pod_yaml("api-yaml-a") + "---\n" + pod_yaml(
        "api-yaml-b") + "---\n" + pod_yaml("api-yaml-never")).encode(), content_type="application/yaml")
    assert code == 200 and [(r["object"], r["code"]) for r in out["results"]] == [
        ("pod/default/api-yaml-a", 200), ("pod/default/api-yaml-b", 200), ("pod/default/api-yaml-never", 404)]
    for name in ("api-yaml-a", "api-yaml-b"):
        eventually(lambda n=name: tiny.request("GET", f"/api/v1/namespaces/default/pods/{n}")[0] == 404)


def test_a_bad_configuration_is_refused_and_the_old_one_kept(tiny: Server) -> None:
    code, before = tiny.request("GET", "/ui/api/config")
    assert code == 200 and before["profiles"] == ["default-scheduler"]
    bad = ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
           "- schedulerName: other\n  plugins:\n    score:\n      enabled:\n      - name: NoSuchPlugin\n")
    code, out = tiny.request("PUT", "/ui/api/config", raw=bad.encode(), content_type="application/yaml")
    assert code == 422
    assert out["error"] == ('the submitted configuration:8: profiles[0].plugins.score.enabled[0].name: '
                            'plugin "NoSuchPlugin" does not exist')
    assert out["kept"]["profiles"] == ["default-scheduler"] and out["kept"]["yaml"] == before["yaml"]
    code, out = tiny.request("PUT", "/ui/api/config", raw=b"kind: [", content_type="application/yaml")
    assert code == 422 and out["error"].startswith("the submitted configuration")
    # the scheduler still schedules with the old configuration
    apply(tiny, pod_yaml("api-after-bad-config", cpu="100m", memory="100Mi"))
    eventually(lambda: tiny.request("GET", "/ui/api/pods/default/api-after-bad-config")[1].get("node"))


def test_change_events_stream_while_the_cluster_changes(tiny: Server) -> None:
    req = urllib.request.Request(tiny.url + "/ui/watch/changes")
    with urllib.request.urlopen(req, timeout=30) as resp:
        assert resp.headers["Content-Type"].startswith("text/event-stream")
        assert resp.readline() == b"retry: 2000\n"
        changes = 0
        for line in resp:
            if line.startswith(b"event: change"):
                changes += 1
                if changes == 1:  # the first tells the page where it stands; make a change for the second
                    apply(tiny, pod_yaml("api-sse", cpu="10m", memory="10Mi"))
                else:
                    break
    assert changes == 2


def test_without_a_scheduler_the_views_say_so(tmp_path: Any) -> None:
    from serve_harness import started

    for server in started(tmp_path, "--nodes", "1", "--no-scheduler"):
        code, out = server.request("GET", "/ui/api/nodes")
        assert code == 503 and "no scheduler is running" in out["error"]
        code, out = server.request("GET", "/ui/api/config")
        assert code == 200 and out["readOnly"] is True and out["profiles"] == []
        code, out = server.request("PUT", "/ui/api/config", raw=b"kind: KubeSchedulerConfiguration")
        assert code == 422 and "no scheduler runs inside this server" in out["error"]


def test_no_ui_keeps_root_a_404_for_browsers_too(tmp_path: Any) -> None:
    from serve_harness import started

    for server in started(tmp_path, "--no-ui", "--no-scheduler"):
        code, body = server.request("GET", "/", headers={"Accept": "text/html"})
        assert code == 404 and body["reason"] == "NotFound"
        assert not any("web UI" in line for line in server.output)


def test_yaml_that_refers_to_itself_is_refused_in_one_line(tiny: Server) -> None:
    """The UI reads YAML as kubectl does (kubesched.api.documents), with the same bound: an
    alias naming the node that contains it is refused before anything is built or sent."""
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: &m {name: ui-self, x: *m}\n"
    code, err = apply(tiny, text)
    assert code == 400 and err["error"] == "YAML: document 1: invalid YAML: an alias refers to a node that contains it"
    assert tiny.request("GET", "/api/v1/namespaces/default/configmaps/ui-self")[0] == 404


def test_a_ui_body_over_the_api_servers_bound_is_413_unread(tiny: Server) -> None:
    """The UI's writes read their bodies with the API server's bound (3 MiB, kube-apiserver's
    --max-request-bytes default: 413 "Request entity too large: limit is 3145728")."""
    code, err = _post_unread(tiny, "/ui/api/apply", ("# " + "x" * (3 * 1024 * 1024)).encode())
    assert code == 413, err
    assert err["error"] == "POST /ui/api/apply: Request entity too large: limit is 3145728"


def _post_unread(server: Server, path: str, body: bytes) -> tuple[int, Any]:
    """POST ``body`` as a client that keeps listening when the server answers before reading
    it all (urllib gives up with a broken pipe when the server closes early, as a server
    that refuses a body unread may)."""
    url = urllib.parse.urlsplit(server.url)
    with socket.create_connection((url.hostname, url.port), timeout=60) as sock:
        head = (f"POST {path} HTTP/1.1\r\nHost: {url.hostname}:{url.port}\r\nContent-Type: application/yaml\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
        try:
            sock.sendall(head + body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed before the whole body was sent
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except ConnectionResetError:
            pass
    status_line, _, rest = data.partition(b"\r\n")
    _, _, payload = rest.partition(b"\r\n\r\n")
    return int(status_line.split()[1]), json.loads(payload)
