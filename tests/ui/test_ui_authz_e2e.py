"""The web UI is a client like any other: on a real ``kubesched serve --authorization-mode
RBAC`` (bearer tokens, the scheduler inside), what a user reads and writes through
``/ui/api/...`` and ``/debug/explain`` is what the equivalent API requests would let them
read and write, even when an administrator has granted them every UI path.

The user ``bob`` may get, list and watch pods, list events and create secrets in ``ns-a``,
nothing in ``ns-b``; ``carol`` may do nothing (no role, no UI path). Expected texts are upstream's 403 messages
(``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go``,
``forbiddenMessage``; the ``<resource> "<name>" is forbidden: `` prefix of
``apimachinery/pkg/api/errors.NewForbidden``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from serve_harness import Server, eventually, started
from ui_harness import TINY, scheduling

pytestmark = pytest.mark.slow

TOKENS = 'admintok,admin,1,system:masters\nbobtok,bob,2\ncaroltok,carol,3\n'
RBAC = "rbac.authorization.k8s.io"
BOB = [{"apiGroup": RBAC, "kind": "User", "name": "bob"}]


def _pod(ns: str, name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": {"containers": [{"name": "c", "image": "registry.example/app:1",
                                     "resources": {"requests": {"cpu": "100"}}}]}}  # fits no node: stays queued


def _objects() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
                                  for ns in ("ns-a", "ns-b")]
    docs += [_pod("ns-a", "pa"), _pod("ns-b", "pb")]
    docs += [{"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"e-{ns}", "namespace": ns},
              "involvedObject": {"kind": "Pod", "namespace": ns, "name": pod}, "reason": "Noted",
              "message": f"only for {ns}", "type": "Normal"} for ns, pod in (("ns-a", "pa"), ("ns-b", "pb"))]
    docs += [{"apiVersion": f"{RBAC}/v1", "kind": "Role", "metadata": {"name": "bob", "namespace": "ns-a"},
              "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
                        {"apiGroups": [""], "resources": ["events"], "verbs": ["list"]},
                        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]}]},
             {"apiVersion": f"{RBAC}/v1", "kind": "RoleBinding", "metadata": {"name": "bob", "namespace": "ns-a"},
              "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "bob"}, "subjects": BOB},
             # an administrator lets bob use every UI path: that must not widen what bob may do
             {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole", "metadata": {"name": "ui-paths"},
              "rules": [{"nonResourceURLs": ["/", "/ui/*", "/debug/*"], "verbs": ["get", "post", "put"]}]},
             {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "ui-paths"},
              "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "ui-paths"}, "subjects": BOB}]
    return docs


@pytest.fixture(scope="module")
def rbac_ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("uiauthz")
    (base / "tokens").write_text(TOKENS)
    for server in started(base, "--token-file", str(base / "tokens"), "--authorization-mode", "RBAC", *TINY):
        scheduling(server)
        server.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(_objects()))
        # both pods have been tried (and failed) by the scheduler
        for ns, pod in (("ns-a", "pa"), ("ns-b", "pb")):
            eventually(lambda ns=ns, pod=pod: server.request("GET", f"/debug/explain/{ns}/{pod}")[0] == 200, 60)
        yield server


def _bob(server: Server, method: str, path: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
    return server.request(method, path, body, auth=False, headers={"Authorization": "Bearer bobtok"}, **kw)


def _forbidden(resource: str, verb: str, ns: str, name: str = "") -> str:
    where = f'in the namespace "{ns}"' if ns else "at the cluster scope"
    head = f'{resource} "{name}" is forbidden' if name else f"{resource} is forbidden"
    return f'{head}: User "bob" cannot {verb} resource "{resource}" in API group "" {where}'


def _secret(ns: str, name: str) -> str:
    return yaml.safe_dump({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": ns},
                           "stringData": {"k": "v"}})


def test_ui_writes_are_the_users_own_api_requests(rbac_ui: Server) -> None:
    code, out = _bob(rbac_ui, "POST", "/ui/api/apply", raw=_secret("ns-b", "planted").encode(),
                     content_type="application/yaml")
    assert code == 200 and out["results"] == [{"object": "secret/ns-b/planted", "ok": False, "code": 403,
                                               "message": _forbidden("secrets", "create", "ns-b")}], out
    assert rbac_ui.request("GET", "/api/v1/namespaces/ns-b/secrets/planted")[0] == 404
    code, out = _bob(rbac_ui, "POST", "/ui/api/apply", raw=_secret("ns-a", "mine").encode(),
                     content_type="application/yaml")
    assert code == 200 and out["ok"] is True, out
    assert rbac_ui.request("GET", "/api/v1/namespaces/ns-a/secrets/mine")[0] == 200
    code, out = _bob(rbac_ui, "POST", "/ui/api/delete", {"kind": "Pod", "namespace": "ns-b", "name": "pb"})
    assert code == 403 and out["message"] == _forbidden("pods", "delete", "ns-b", "pb"), out
    code, out = _bob(rbac_ui, "POST", "/ui/api/delete-yaml", raw=yaml.safe_dump(_pod("ns-b", "pb")).encode(),
                     content_type="application/yaml")
    assert code == 200 and [r["code"] for r in out["results"]] == [403], out
    assert rbac_ui.request("GET", "/api/v1/namespaces/ns-b/pods/pb")[0] == 200


def test_ui_reads_show_only_what_the_user_may_read(rbac_ui: Server) -> None:
    for path in ("/ui/api/pods", "/ui/api/pending"):
        code, page = _bob(rbac_ui, "GET", path)
        assert code == 200 and [(p["namespace"], p["name"]) for p in page["items"]] == [("ns-a", "pa")], page
        assert page["all"] == 1
    code, queue = _bob(rbac_ui, "GET", "/ui/api/queue")
    assert code == 200 and {p["namespace"] for rows in queue["pods"].values() for p in rows} == {"ns-a"}, queue
    assert sum(queue["counts"].values()) == 1
    assert _bob(rbac_ui, "GET", "/ui/api/pods/ns-a/pa")[0] == 200
    code, out = _bob(rbac_ui, "GET", "/ui/api/pods/ns-b/pb")
    assert code == 403 and out["error"] == _forbidden("pods", "get", "ns-b", "pb")
    code, out = _bob(rbac_ui, "GET", "/ui/api/nodes")
    assert code == 403 and out["error"] == _forbidden("nodes", "list", "")
    code, out = _bob(rbac_ui, "GET", "/ui/api/nodes/node-01")
    assert code == 403 and out["error"] == _forbidden("nodes", "get", "", "node-01")
    code, out = _bob(rbac_ui, "GET", "/ui/api/events?namespace=ns-b")
    assert code == 403 and out["error"] == _forbidden("events", "list", "ns-b")
    code, out = _bob(rbac_ui, "GET", "/ui/api/events")
    assert code == 200 and out["items"] and {r["object"].split("/")[1] for r in out["items"]} == {"ns-a"}, out
    # the administrator (the kubeconfig's system:masters certificate) sees both namespaces
    code, page = rbac_ui.request("GET", "/ui/api/pods")
    assert code == 200 and {p["namespace"] for p in page["items"]} == {"ns-a", "ns-b"}


def test_explain_needs_what_reading_the_pod_needs(rbac_ui: Server) -> None:
    code, doc = _bob(rbac_ui, "GET", "/debug/explain/ns-a/pa")
    assert code == 200 and isinstance(doc, dict), doc
    code, out = _bob(rbac_ui, "GET", "/debug/explain/ns-b/pb")
    assert code == 403 and out["message"] == _forbidden("pods", "get", "ns-b", "pb"), out
    code, out = _bob(rbac_ui, "GET", "/debug/explain/ns-b/pb?output=text")
    assert code == 403


def test_a_user_without_roles_gets_the_page_and_no_data(rbac_ui: Server) -> None:
    carol = {"Authorization": "Bearer caroltok"}
    code, html = rbac_ui.request("GET", "/", auth=False, headers={**carol, "Accept": "text/html"})
    assert code == 200 and "<title>kubesched</title>" in html
    code, page = rbac_ui.request("GET", "/ui/api/pods", auth=False, headers=carol)
    assert code == 200 and (page["items"], page["all"]) == ([], 0), page
    # the change events and the mode tell the store's revision and cluster-wide counts: granted by path
    code, out = rbac_ui.request("GET", "/ui/api/mode", auth=False, headers=carol)
    assert code == 403 and out["message"] == 'forbidden: User "carol" cannot get path "/ui/api/mode"', out
