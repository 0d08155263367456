"""Hostile HTTP requests for a real ``kubesched serve``, as hypothesis strategies: methods
(including OPTIONS, TRACE and made-up ones), paths (every served resource, collection,
object, subresource and discovery path, and broken ones), query options, content types,
patch types, and bodies: objects of the path's kind with fields replaced by values of
the wrong type, JSON patches, deep nesting, non-finite numbers, YAML, raw bytes.

The fuzz test (``test_api_fuzz_e2e.py``) draws a few hundred; run as a script, it draws
many more and reports every 5xx with the server's traceback::

    python tests/server/e2e/apifuzz.py --requests 6000
"""

from __future__ import annotations

import argparse
import copy
import http.client
import json
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serve_harness import API_ONLY, Server, pod_manifest  # noqa: E402

NAMESPACES = ("default", "fz")
POD_TEMPLATE = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p0", "labels": {"app": "a"}, "annotations": {"k": "v"}, "finalizers": ["x/y"],
                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r", "uid": "u"}]},
    "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80, "hostPort": 8080}],
                             "resources": {"requests": {"cpu": "100m", "memory": "1Mi"}, "limits": {"cpu": "1"}},
                             "env": [{"name": "E", "value": "v"}]}],
             "initContainers": [{"name": "i", "image": "i", "restartPolicy": "Always"}],
             "tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute",
                              "tolerationSeconds": 5}],
             "nodeSelector": {"zone": "a"}, "priorityClassName": "", "priority": 0, "schedulerName": "default-scheduler",
             "overhead": {"cpu": "10m"}, "schedulingGates": [{"name": "g"}],
             "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                 {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}},
                 "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                     {"weight": 10, "podAffinityTerm": {"topologyKey": "zone",
                                                        "labelSelector": {"matchLabels": {"app": "a"}}}}]}},
             "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                            "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}}],
             "volumes": [{"name": "v", "emptyDir": {}}], "terminationGracePeriodSeconds": 30},
    "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False"}]},
}
TEMPLATES: dict[str, dict[str, Any]] = {
    "pods": POD_TEMPLATE,
    "nodes": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "fz-node", "labels": {"zone": "a"}},
              "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}], "unschedulable": False,
                       "podCIDR": "10.0.0.0/24"},
              "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                         "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                         "conditions": [{"type": "Ready", "status": "True"}],
                         "images": [{"names": ["i"], "sizeBytes": 100}], "addresses": [{"type": "InternalIP",
                                                                                        "address": "10.0.0.1"}]}},
    "services": {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"},
                 "spec": {"selector": {"app": "a"}, "ports": [{"port": 80, "targetPort": 8080, "protocol": "TCP"}],
                          "type": "ClusterIP"}},
    "configmaps": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"k": "v"}},
    "namespaces": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fz"}, "spec": {"finalizers": ["kubernetes"]}},
    "events": {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "ev"}, "reason": "R", "message": "m",
               "type": "Normal", "count": 1, "involvedObject": {"kind": "Pod", "name": "p0", "namespace": "default"},
               "firstTimestamp": "2024-01-01T00:00:00Z", "source": {"component": "c"}},
    "events.events.k8s.io": {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "ev1"},
                             "eventTime": "2024-01-01T00:00:00.000000Z", "reason": "R", "note": "n", "type": "Normal",
                             "action": "A", "reportingController": "c", "reportingInstance": "i",
                             "regarding": {"kind": "Pod", "name": "p0", "namespace": "default"},
                             "series": {"count": 2, "lastObservedTime": "2024-01-01T00:00:00.000000Z"}},
    "priorityclasses": {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "pc"},
                        "value": 100, "globalDefault": False, "preemptionPolicy": "PreemptLowerPriority"},
    "poddisruptionbudgets": {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"},
                             "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "a"}}},
                             "status": {"disruptionsAllowed": 1, "currentHealthy": 1, "desiredHealthy": 1}},
    "leases": {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
               "spec": {"holderIdentity": "h", "leaseDurationSeconds": 15, "leaseTransitions": 1,
                        "renewTime": "2024-01-01T00:00:00.000000Z"}},
    "deployments": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d0"},
                    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "a"}},
                             "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%",
                                                                                     "maxUnavailable": 1}},
                             "template": {"metadata": {"labels": {"app": "a"}}, "spec": POD_TEMPLATE["spec"]}}},
    "replicasets": {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "r0"},
                    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "a"}},
                             "template": {"metadata": {"labels": {"app": "a"}}, "spec": POD_TEMPLATE["spec"]}}},
    "podgroups": {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": "pg"},
                  "spec": {"minMember": 2, "scheduleTimeoutSeconds": 10}},
    "binding": {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p0"},
                "target": {"apiVersion": "v1", "kind": "Node", "name": "node-01"}},
    "eviction": {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p0"},
                 "deleteOptions": {"gracePeriodSeconds": 0, "preconditions": {"uid": "u"}}},
    "scale": {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "d0"}, "spec": {"replicas": 2}},
    "deleteoptions": {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0,
                      "propagationPolicy": "Background", "preconditions": {"resourceVersion": "1"}, "dryRun": ["All"]},
}
# (group/version prefix, plural, namespaced, names of objects the fuzz creates first)
RESOURCES = (
    ("/api/v1", "pods", True, ("p0",)), ("/api/v1", "nodes", False, ("node-01", "fz-node")),
    ("/api/v1", "services", True, ("svc",)), ("/api/v1", "configmaps", True, ("cm",)),
    ("/api/v1", "namespaces", False, ("fz",)), ("/api/v1", "events", True, ("ev",)),
    ("/apis/events.k8s.io/v1", "events", True, ("ev1",)),
    ("/apis/scheduling.k8s.io/v1", "priorityclasses", False, ("pc",)),
    ("/apis/policy/v1", "poddisruptionbudgets", True, ("pdb",)),
    ("/apis/coordination.k8s.io/v1", "leases", True, ("l",)), ("/apis/apps/v1", "deployments", True, ("d0",)),
    ("/apis/apps/v1", "replicasets", True, ("r0",)),
    ("/apis/scheduling.x-k8s.io/v1alpha1", "podgroups", True, ("pg",)),
)
SUBRESOURCES = ("status", "binding", "eviction", "scale", "log", "")
CONTENT_TYPES = ("application/json", "application/yaml", "application/merge-patch+json",
                 "application/json-patch+json", "application/strategic-merge-patch+json",
                 "application/apply-patch+yaml", "application/vnd.kubernetes.protobuf", "text/plain", "",
                 "application/json; charset=utf-8", "*/*", "multipart/form-data; boundary=x")
METHODS = ("POST",) * 6 + ("PUT",) * 3 + ("PATCH",) * 4 + ("GET",) * 2 + ("DELETE",) * 2 + (
    "OPTIONS", "TRACE", "HEAD", "FOO", "CONNECT")
ODD_PATHS = ("/", "/api", "/apis", "/apis/", "/api/v1", "/apis/apps", "/apis/apps/v1", "/apis/nope/v1", "/version",
             "/openapi/v2", "/openapi/v3", "/openapi/v3/api/v1", "/metrics", "/healthz", "/readyz/x", "/api/v2/pods",
             "/api/v1/namespaces/default/pods/p0/status/extra", "/api/v1/watch/pods", "/api/v1/namespaces//pods",
             "/api/v1/namespaces/default/pods/%00", "/api/v1/namespaces/default/pods/" + "x" * 300,
             "/api/v1/namespaces/%E2%98%83/pods", "/apis/apps/v1/namespaces/default/deployments/d0/scale",
             "/api/v1/namespaces/default/pods/p0/binding", "/api/v1/namespaces/default/pods/p0/eviction",
             "/api/v1/namespaces/fz/finalize", "/api/v1/namespaces/fz/status")


@dataclass(frozen=True, slots=True)
class Req:
    method: str
    path: str
    content_type: str
    body: bytes | None
    accept: str = "application/json"

    def describe(self) -> str:
        excerpt = (self.body or b"")[:160].decode("utf-8", "replace").replace("\n", "\\n")
        return f"{self.method} {self.path} [{self.content_type}] {excerpt}"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12)
    | st.sampled_from(["", "1", "100m", "1.5.5", "1e999", "9" * 400, "Always", "NoSchedule", "In", "-1", "0x10"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6)


WRONG_TYPES = st.sampled_from([5, -1, 2**64, 1.5, "x", "", [], [1], ["a"], {}, {"a": 1}, {"a": "b"}, None, True])


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, prefix + (i,))
    return out


@st.composite
def mutated(draw: st.DrawFn, template: dict[str, Any]) -> Any:
    """``template`` with a few of its values (at any depth) replaced by arbitrary JSON."""
    obj = copy.deepcopy(template)
    for _ in range(draw(st.integers(0, 4))):
        paths = _paths(obj)[1:]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = obj
        for key in path[:-1]:
            parent = parent[key]
        if draw(st.booleans()) or not isinstance(parent, dict):
            parent[path[-1]] = copy.deepcopy(draw(WRONG_TYPES | json_values))
        else:
            del parent[path[-1]]
    return obj


@st.composite
def json_patch_ops(draw: st.DrawFn) -> Any:
    op = st.fixed_dictionaries({"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"]),
                                "path": st.sampled_from(["/spec", "/spec/containers/0", "/spec/containers/-",
                                                         "/metadata/labels/a", "/metadata", "", "/x/y/z", "bad",
                                                         "/spec/replicas", "/status/conditions/9"])},
                               optional={"value": json_values, "from": st.sampled_from(["/metadata", "/spec", 5])})
    return draw(st.lists(op, max_size=3) | json_values)


@st.composite
def bodies(draw: st.DrawFn, kind: str, content_type: str) -> bytes | None:
    choice = draw(st.integers(0, 19))
    if choice == 0:
        return None
    if choice == 1:
        return draw(st.binary(max_size=64))
    if choice == 2:
        depth = draw(st.sampled_from([50, 150, 1200, 20000]))
        return b'{"metadata":{"name":"deep"},"x":' + b"[" * depth + b"]" * depth + b"}"
    if choice == 3:
        return draw(st.sampled_from([b'{"spec": Infinity}', b'{"spec": {"replicas": NaN}}', b"[1e999]",
                                     b'{"metadata": {"name": "n", "generation": ' + b"9" * 400 + b"}}",
                                     b'"\\ud800"', b"null", b"[]", b"42", b'{"a": -Infinity}']))
    if choice == 4 and "json-patch" in content_type:  # patches are mostly objects of the kind (below)
        return json.dumps(draw(json_patch_ops())).encode()
    value = draw(mutated(TEMPLATES.get(kind) or TEMPLATES["configmaps"])) if choice < 18 else draw(json_values)
    if "yaml" in content_type and draw(st.booleans()):
        import yaml

        return yaml.safe_dump(value).encode()
    return json.dumps(value).encode()


QUERY = st.lists(st.sampled_from([
    "dryRun=All", "dryRun=Bogus", "dryRun=", "resourceVersion=0", "resourceVersion=1", "resourceVersion=-5",
    "resourceVersion=abc", "resourceVersion=99999999999999999999", "resourceVersionMatch=Exact",
    "resourceVersionMatch=Bogus", "limit=1", "limit=-1", "limit=x", "continue=abc", "continue=eyJ2IjoxfQ",
    "labelSelector=a%20in%20(b", "labelSelector=a!%3D", "labelSelector=app%3Da", "fieldSelector=spec.nodeName%3D",
    "fieldSelector=status.phase!%3DRunning", "fieldSelector=nope%3D1", "fieldSelector=%3D%3D%3D",
    "gracePeriodSeconds=-1", "gracePeriodSeconds=99999999999999", "gracePeriodSeconds=9223372036854775807",
    "gracePeriodSeconds=x",
    "propagationPolicy=Bogus", "propagationPolicy=Foreground", "includeObject=Object", "includeObject=Bogus",
    "watch=true", "watch=1", "timeoutSeconds=x", "allowWatchBookmarks=true", "sendInitialEvents=true",
    "fieldManager=x", "force=true", "pretty=true"]), max_size=3, unique=True)


PATCH_TYPES = ("application/merge-patch+json", "application/strategic-merge-patch+json",
               "application/json-patch+json")
# what a request does: (method, shape of the path, subresource)
OPERATIONS = (("POST", "collection", ""),) * 5 + (("PUT", "object", ""),) * 2 + (("PATCH", "object", ""),) * 3 + (
    ("PUT", "object", "status"), ("PATCH", "object", "status"), ("POST", "object", "binding"),
    ("POST", "object", "eviction"), ("PUT", "object", "scale"), ("PATCH", "object", "scale"), ("GET", "object", "scale"),
    ("DELETE", "object", ""), ("DELETE", "collection", ""), ("GET", "collection", ""), ("GET", "object", ""))


def _resource_path(draw: st.DrawFn, shape: str, sub: str, strict: bool = False) -> tuple[str, str]:
    candidates = RESOURCES + RESOURCES[:2] * 3
    if strict and sub in ("binding", "eviction"):
        candidates = RESOURCES[:1]
    elif strict and sub == "scale":
        candidates = tuple(r for r in RESOURCES if r[1] in ("deployments", "replicasets"))
    prefix, plural, namespaced, names = draw(st.sampled_from(candidates))
    kind = plural if prefix != "/apis/events.k8s.io/v1" else "events.events.k8s.io"
    spaces = NAMESPACES if strict and shape == "object" else NAMESPACES + ("",)
    ns = draw(st.sampled_from(spaces)) if namespaced else ""
    path = f"{prefix}/namespaces/{ns}/{plural}" if ns else f"{prefix}/{plural}"
    if shape == "object":
        path += "/" + draw(st.sampled_from(names + ("missing", "UPPER")))
        if sub:
            path += "/" + sub
            kind = sub if sub in TEMPLATES else kind
    return path, kind


@st.composite
def requests(draw: st.DrawFn) -> Req:
    if draw(st.integers(0, 4)) == 0:  # anything at all: methods, paths and types at random
        method = draw(st.sampled_from(METHODS))
        content_type = draw(st.sampled_from(CONTENT_TYPES))
        if draw(st.booleans()):
            path, kind = draw(st.sampled_from(ODD_PATHS)), "configmaps"
        else:
            path, kind = _resource_path(draw, draw(st.sampled_from(["collection", "object"])),
                                        draw(st.sampled_from(SUBRESOURCES)))
    else:
        method, shape, sub = draw(st.sampled_from(OPERATIONS))
        path, kind = _resource_path(draw, shape, sub, strict=True)
        if method == "PATCH":
            content_type = draw(st.sampled_from(PATCH_TYPES + ("application/apply-patch+yaml", "text/plain")))
        else:
            content_type = draw(st.sampled_from(("application/json",) * 6 + ("application/yaml",
                                                                               "application/vnd.kubernetes.protobuf")))
    if method == "DELETE" and draw(st.booleans()):
        kind = "deleteoptions"
    query = draw(QUERY)
    if any(q.startswith("watch=") for q in query):
        query = [q for q in query if not q.startswith("timeoutSeconds")] + ["timeoutSeconds=1"]
    if any(q.startswith("resourceVersion=9999") for q in query):
        query = [q for q in query if not q.startswith("resourceVersion=9999")]  # 3 s each: the test stays short
    if query:
        path += "?" + "&".join(query)
    body = draw(bodies(kind, content_type)) if method not in ("GET", "HEAD") or draw(st.integers(0, 9)) == 0 \
        else None
    accept = draw(st.sampled_from(["application/json", "application/json;as=Table;v=v1;g=meta.k8s.io",
                                   "application/vnd.kubernetes.protobuf", "*/*"]))
    return Req(method, path, content_type, body, accept)


def send(server: Server, req: Req) -> tuple[int, bytes, str]:
    """(status, body, content type) of one request on a fresh connection."""
    host, port = server.url.split("//")[1].rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        headers = {"Accept": req.accept}
        if req.body is not None:
            headers["Content-Type"] = req.content_type
        conn.request(req.method, req.path, body=req.body, headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.read(), resp.getheader("content-type") or ""
    finally:
        conn.close()


def problem(req: Req, status: int, body: bytes, content_type: str) -> str | None:
    """What is wrong with an answer, or None: no 5xx; every error a Status."""
    if status >= 500:
        return f"{status}: {body[:300]!r}"
    if status >= 400 and req.method != "HEAD":
        try:
            doc = json.loads(body)
        except ValueError:
            return f"{status} not JSON ({content_type}): {body[:200]!r}"
        if not (isinstance(doc, dict) and doc.get("kind") == "Status" and doc.get("code") == status):
            return f"{status} not a Status: {body[:200]!r}"
    return None


def seed(server: Server) -> None:
    """The objects the fuzz's object paths name."""
    order = ("namespaces", "priorityclasses", "pods", "services", "configmaps", "events", "events.events.k8s.io",
             "poddisruptionbudgets", "leases", "deployments", "replicasets", "podgroups", "nodes")
    paths = {kind: (prefix, plural, namespaced) for prefix, plural, namespaced, _ in RESOURCES
             for kind in ([plural] if prefix != "/apis/events.k8s.io/v1" else ["events.events.k8s.io"])}
    for kind in order:
        prefix, plural, namespaced = paths[kind]
        for ns in (NAMESPACES if namespaced else ("",)):
            path = f"{prefix}/namespaces/{ns}/{plural}" if ns else f"{prefix}/{plural}"
            objs = [pod_manifest("p0") if kind == "pods" else TEMPLATES[kind]]
            if kind == "nodes":
                objs.append({**TEMPLATES["nodes"], "metadata": {"name": "node-01"}})
            for obj in objs:
                code, body = server.request("POST", path, obj)
                assert code in (201, 409), (path, code, body)


def snapshot(server: Server) -> dict[str, Any]:
    """Every object of every served resource, as listed."""
    out = {}
    for prefix, plural, _, _ in RESOURCES:
        code, body = server.request("GET", f"{prefix}/{plural}")
        assert code == 200, (plural, body)
        out[f"{prefix}/{plural}"] = sorted((json.dumps(i, sort_keys=True) for i in body["items"]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=6000)
    args = ap.parse_args()
    found: dict[str, tuple[Req, str]] = {}
    sent = [0]
    codes: Counter[int] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp) / "data", *API_ONLY).start()
        log = Path(tmp) / "data-stderr.log"
        try:
            seed(server)

            @settings(max_examples=args.requests, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck))
            @given(requests())
            def fuzz(req: Req) -> None:
                seen = log.stat().st_size if log.exists() else 0
                status, body, ct = send(server, req)
                sent[0] += 1
                codes[status] += 1
                wrong = problem(req, status, body, ct)
                if wrong is not None:
                    tail = log.read_bytes()[seen:].decode(errors="replace").strip().splitlines()
                    last = next((ln for ln in reversed(tail) if ln and not ln.startswith(" ")), "")
                    where = [ln.strip() for ln in tail if ln.strip().startswith('File "')][-2:]
                    last = f"{last} at {' <- '.join(reversed(where))}"
                    found.setdefault(f"{wrong[:60]}|{last}", (req, f"{wrong} | {last}"))

            fuzz()
            before = snapshot(server)
            server.restart()
            after = snapshot(server)
            for key in before:
                if before[key] != after[key]:
                    print("CHANGED", key, set(before[key]) ^ set(after[key]))
            assert after == before, "the store did not reopen intact"
        finally:
            server.stop_if_running()
    print(f"requests: {sent[0]}; answers: {dict(sorted(codes.items()))}; distinct problems: {len(found)}")
    for req, what in found.values():
        print(f"- {req.describe()}\n    {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
