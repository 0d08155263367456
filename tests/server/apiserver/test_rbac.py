"""RBAC rule matching, policy evaluation, request attributes and the self reviews.

Expected values are upstream facts: the rule-matching cases follow
``pkg/apis/rbac/v1/evaluation_helpers.go`` and the table of
``plugin/pkg/auth/authorizer/rbac/rbac_test.go`` (subresources need ``pods/binding`` or
``*/binding``; ``*`` everywhere; resourceNames; non-resource URL prefixes), the request
attributes ``k8s.io/apiserver/pkg/endpoints/request/requestinfo_test.go``, the 403 text
``responsewriters/errors.go`` (``forbiddenMessage``), validation messages
``pkg/apis/rbac/validation/validation.go``.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.server.apiserver.authn.authenticator import UserInfo
from kubesched.server.apiserver.authz.access import forbidden
from kubesched.server.apiserver.authz.middleware import access_review, rules_review
from kubesched.server.apiserver.authz.rbac import Attributes, Policy, Rule, rule_allows
from kubesched.server.apiserver.authz.requestinfo import request_attributes
from kubesched.server.apiserver.strategies.rbac import RBAC_STRATEGIES

G = "rbac.authorization.k8s.io"


def res(verb: str, resource: str, *, group: str = "", sub: str = "", name: str = "", ns: str = "default",
        user: str = "u", groups: tuple[str, ...] = ()) -> Attributes:
    return Attributes(user, groups, verb, True, namespace=ns, api_group=group, resource=resource,
                      subresource=sub, name=name)


def url(verb: str, path: str) -> Attributes:
    return Attributes("u", (), verb, False, path=path)


@pytest.mark.parametrize("rule, attrs, allowed", [
    (Rule(("get",), ("",), ("pods",)), res("get", "pods"), True),
    (Rule(("get",), ("",), ("pods",)), res("list", "pods"), False),
    (Rule(("*",), ("*",), ("*",)), res("delete", "deployments", group="apps"), True),
    (Rule(("get",), ("apps",), ("pods",)), res("get", "pods"), False),
    # a subresource is its own resource: "pods" does not grant pods/binding
    (Rule(("create",), ("",), ("pods",)), res("create", "pods", sub="binding"), False),
    (Rule(("create",), ("",), ("pods/binding",)), res("create", "pods", sub="binding"), True),
    (Rule(("create",), ("",), ("*/binding",)), res("create", "pods", sub="binding"), True),
    (Rule(("create",), ("",), ("*/status",)), res("create", "pods", sub="binding"), False),
    (Rule(("create",), ("",), ("pods/binding",)), res("create", "pods"), False),
    # "*" covers subresources too
    (Rule(("patch",), ("",), ("*",)), res("patch", "pods", sub="status"), True),
    # resourceNames: only those names; none listed: every name
    (Rule(("get",), ("coordination.k8s.io",), ("leases",), ("kube-scheduler",)),
     res("get", "leases", group="coordination.k8s.io", name="kube-scheduler"), True),
    (Rule(("get",), ("coordination.k8s.io",), ("leases",), ("kube-scheduler",)),
     res("get", "leases", group="coordination.k8s.io", name="other"), False),
    (Rule(("list",), ("",), ("pods",), ("p1",)), res("list", "pods"), False),
    # non-resource URLs: exact, "*" and a trailing-"*" prefix
    (Rule(("get",), non_resource_urls=("/healthz",)), url("get", "/healthz"), True),
    (Rule(("get",), non_resource_urls=("/healthz",)), url("get", "/healthz/etcd"), False),
    (Rule(("get",), non_resource_urls=("/apis/*",)), url("get", "/apis/apps/v1"), True),
    (Rule(("get",), non_resource_urls=("*",)), url("get", "/metrics"), True),
    (Rule(("get",), non_resource_urls=("/metrics",)), url("post", "/metrics"), False),
    # a resource rule never grants a URL, nor a URL rule a resource
    (Rule(("*",), ("*",), ("*",)), url("get", "/metrics"), False),
    (Rule(("*",), non_resource_urls=("*",)), res("get", "pods"), False),
])
def test_rule_matching(rule: Rule, attrs: Attributes, allowed: bool) -> None:
    assert rule_allows(attrs, rule) is allowed


def _policy(*objs: dict[str, Any]) -> Policy:
    by_kind: dict[str, list[dict[str, Any]]] = {"ClusterRole": [], "Role": [], "ClusterRoleBinding": [],
                                                  "RoleBinding": []}
    for o in objs:
        by_kind[o["kind"]].append(o)
    return Policy.build(by_kind["ClusterRole"], by_kind["Role"], by_kind["ClusterRoleBinding"],
                        by_kind["RoleBinding"])


def _role(kind: str, name: str, rules: list[dict[str, Any]], ns: str = "") -> dict[str, Any]:
    return {"kind": kind, "metadata": {"name": name, **({"namespace": ns} if ns else {})}, "rules": rules}


def _binding(kind: str, name: str, role_kind: str, role: str, subjects: list[dict[str, Any]],
             ns: str = "") -> dict[str, Any]:
    return {"kind": kind, "metadata": {"name": name, **({"namespace": ns} if ns else {})},
            "roleRef": {"apiGroup": G, "kind": role_kind, "name": role}, "subjects": subjects}


READ_PODS = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]


def test_cluster_role_binding_grants_everywhere_role_binding_only_in_its_namespace() -> None:
    p = _policy(_role("ClusterRole", "reader", READ_PODS),
                _binding("ClusterRoleBinding", "all", "ClusterRole", "reader", [{"kind": "User", "name": "alice"}]),
                _binding("RoleBinding", "dev", "ClusterRole", "reader", [{"kind": "User", "name": "bob"}], ns="dev"))
    assert p.authorize(res("list", "pods", ns="prod", user="alice"))[0]
    assert p.authorize(res("list", "pods", ns="", user="alice"))[0]  # cluster scope: all namespaces
    assert p.authorize(res("list", "pods", ns="dev", user="bob"))[0]
    assert not p.authorize(res("list", "pods", ns="prod", user="bob"))[0]
    assert not p.authorize(res("list", "pods", ns="", user="bob"))[0]


def test_role_in_its_own_namespace_and_subjects() -> None:
    p = _policy(_role("Role", "r", READ_PODS, ns="dev"),
                _binding("RoleBinding", "b", "Role", "r", [
                    {"kind": "Group", "name": "qa"},
                    # a ServiceAccount's namespace defaults to the binding's
                    {"kind": "ServiceAccount", "name": "builder"}], ns="dev"))
    assert p.authorize(res("get", "pods", ns="dev", user="carol", groups=("qa",)))[0]
    assert p.authorize(res("get", "pods", ns="dev", user="system:serviceaccount:dev:builder"))[0]
    assert not p.authorize(res("get", "pods", ns="dev", user="system:serviceaccount:prod:builder"))[0]
    assert not p.authorize(res("get", "pods", ns="dev", user="qa"))[0]  # a group is not a user


def test_system_masters_may_do_anything_and_a_missing_role_is_the_reason() -> None:
    p = _policy(_binding("ClusterRoleBinding", "x", "ClusterRole", "gone", [{"kind": "User", "name": "u"}]))
    assert p.authorize(res("delete", "nodes", ns="", groups=("system:masters",))) == (True, "")
    assert p.authorize(res("get", "pods")) == (False, 'RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found')


def test_malformed_stored_rules_grant_nothing() -> None:
    p = _policy({"kind": "ClusterRole", "metadata": {"name": "bad"}, "rules": [{"verbs": "get"}, 3]},
                {"kind": "ClusterRoleBinding", "metadata": {"name": "b"}, "roleRef": "bad", "subjects": "u"})
    assert p.authorize(res("get", "pods")) == (False, "")


@pytest.mark.parametrize("method, path, query, expect", [
    ("GET", "/api/v1/namespaces/default/pods", "", ("list", "default", "", "pods", "", "")),
    ("GET", "/api/v1/namespaces/default/pods", "watch=true", ("watch", "default", "", "pods", "", "")),
    ("GET", "/api/v1/watch/namespaces/default/pods/p", "", ("watch", "default", "", "pods", "p", "")),
    ("GET", "/api/v1/namespaces/default/pods/p", "", ("get", "default", "", "pods", "p", "")),
    ("POST", "/api/v1/namespaces/default/pods/p/binding", "", ("create", "default", "", "pods", "p", "binding")),
    ("PATCH", "/api/v1/namespaces/ns/pods/p/status", "", ("patch", "ns", "", "pods", "p", "status")),
    ("DELETE", "/api/v1/namespaces/ns/pods", "", ("deletecollection", "ns", "", "pods", "", "")),
    ("GET", "/api/v1/nodes", "", ("list", "", "", "nodes", "", "")),
    ("PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l", "",
     ("update", "kube-system", "coordination.k8s.io", "leases", "l", "")),
    # a namespace is its own resource; its status and finalize are its subresources
    ("GET", "/api/v1/namespaces/dev", "", ("get", "dev", "", "namespaces", "dev", "")),
    ("PUT", "/api/v1/namespaces/dev/finalize", "", ("update", "dev", "", "namespaces", "dev", "finalize")),
    # a list by metadata.name carries the name (so resourceNames rules apply)
    ("GET", "/api/v1/namespaces/ns/pods", "fieldSelector=metadata.name%3Dp1",
     ("list", "ns", "", "pods", "p1", "")),
    # a parameter given twice is its first value (Go's url.Values.Get), blank values kept
    ("GET", "/api/v1/namespaces/ns/secrets", "fieldSelector=metadata.name%3Ds1&fieldSelector=",
     ("list", "ns", "", "secrets", "s1", "")),
    ("GET", "/api/v1/namespaces/ns/secrets", "fieldSelector=&fieldSelector=metadata.name%3Ds1",
     ("list", "ns", "", "secrets", "", "")),
    ("GET", "/api/v1/namespaces/ns/secrets", "fieldSelector=metadata.name%21%3Ds1", ("list", "ns", "", "secrets", "", "")),
    ("GET", "/api/v1/namespaces/ns/secrets", "fieldSelector=metadata.name%3D..", ("list", "ns", "", "secrets", "", "")),
    # watch: anything but 0 or false (apimachinery's Convert_Slice_string_To_bool), the first value
    ("GET", "/api/v1/namespaces/ns/pods", "watch=false&watch=1", ("list", "ns", "", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods", "watch=1&watch=false", ("watch", "ns", "", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods", "watch=", ("watch", "ns", "", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods", "watch=FALSE", ("list", "ns", "", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods", "watch=0", ("list", "ns", "", "pods", "", "")),
])
def test_request_attributes(method: str, path: str, query: str, expect: tuple[str, ...]) -> None:
    a = request_attributes("u", (), method, path, query)
    assert a.resource_request
    assert (a.verb, a.namespace, a.api_group, a.resource, a.name, a.subresource) == expect


@pytest.mark.parametrize("method, path, verb", [
    ("GET", "/api", "get"), ("GET", "/apis/apps", "get"), ("GET", "/apis/apps/v1", "get"), ("GET", "/api/v1", "get"),
    ("GET", "/version", "get"), ("POST", "/metrics", "post"), ("GET", "/healthz/ping", "get")])
def test_non_resource_requests(method: str, path: str, verb: str) -> None:
    a = request_attributes("u", (), method, path, "")
    assert not a.resource_request and a.verb == verb and a.path == path


def test_forbidden_messages_as_upstream() -> None:
    e = forbidden(res("list", "pods", user="x"), "")
    assert e.code == 403 and e.reason == "Forbidden"
    assert e.message == 'pods is forbidden: User "x" cannot list resource "pods" in API group "" in the namespace "default"'
    assert e.status()["details"] == {"kind": "pods"}
    e = forbidden(res("create", "pods", sub="binding", name="p", user="x"), "")
    assert e.message == ('pods "p" is forbidden: User "x" cannot create resource "pods/binding" in API group "" '
                         'in the namespace "default"')
    e = forbidden(res("list", "deployments", group="apps", ns="", user="x"), "RBAC: r")
    assert e.message == ('deployments.apps is forbidden: User "x" cannot list resource "deployments" in API group '
                         '"apps" at the cluster scope: RBAC: r')
    e = forbidden(url("get", "/metrics"), "")
    assert e.message == 'forbidden: User "u" cannot get path "/metrics"'


def test_self_reviews() -> None:
    p = _policy(_role("ClusterRole", "reader", READ_PODS),
                _binding("RoleBinding", "b", "ClusterRole", "reader", [{"kind": "User", "name": "bob"}], ns="dev"))
    bob = UserInfo("bob", groups=("system:authenticated",))
    ask = {"kind": "SelfSubjectAccessReview", "spec": {"resourceAttributes": {"namespace": "dev", "verb": "list",
                                                                             "resource": "pods"}}}
    assert access_review(p, bob, ask)["status"] == {"allowed": True}
    ask["spec"]["resourceAttributes"]["namespace"] = "prod"
    assert access_review(p, bob, ask)["status"] == {"allowed": False}
    with pytest.raises(Exception, match="exactly one of nonResourceAttributes or resourceAttributes"):
        access_review(p, bob, {"spec": {}})
    rules = rules_review(p, bob, {"spec": {"namespace": "dev"}})["status"]
    assert rules == {"resourceRules": [{"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["pods"]}],
                     "nonResourceRules": [], "incomplete": False}
    assert rules_review(p, bob, {"spec": {"namespace": "prod"}})["status"]["resourceRules"] == []


def test_validation_messages() -> None:
    role, binding = RBAC_STRATEGIES[(G, "roles")], RBAC_STRATEGIES[(G, "clusterrolebindings")]
    ctx: Any = None
    causes = role.validate({"rules": [{"apiGroups": [""], "resources": ["pods"]},
                                      {"verbs": ["get"], "nonResourceURLs": ["/x"]}]}, ctx)
    assert [c[1] for c in causes] == ["rules[0].verbs", "rules[1].nonResourceURLs"]
    assert "namespaced rules cannot apply to non-resource URLs" in causes[1][2]
    causes = binding.validate({"roleRef": {"apiGroup": G, "kind": "Role", "name": "r"},
                               "subjects": [{"kind": "ServiceAccount", "name": "sa"}, {"kind": "Robot", "name": "r"}]},
                              ctx)
    assert [c[1] for c in causes] == ["roleRef.kind", "subjects[0].namespace", "subjects[1].kind"]
    old = {"roleRef": {"apiGroup": G, "kind": "ClusterRole", "name": "a"}}
    new = {"roleRef": {"apiGroup": G, "kind": "ClusterRole", "name": "b"}}
    assert binding.validate_update(new, old, ctx)[0][2].endswith("cannot change roleRef")


def _ld(num: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (wire type 2; lengths here are < 128)."""
    assert len(payload) < 128
    return bytes([(num << 3) | 2, len(payload)]) + payload


def test_protobuf_access_review_decodes() -> None:
    """authorization/v1 generated.proto: SelfSubjectAccessReview{spec=2}, Spec{resourceAttributes=1},
    ResourceAttributes{namespace=1, verb=2, group=3, resource=5, subresource=6}; runtime.Unknown
    {typeMeta=1 {apiVersion=1, kind=2}, raw=2}."""
    from kubesched.server.apiserver.protobuf import decode as protobuf

    attrs = _ld(1, b"dev") + _ld(2, b"create") + _ld(3, b"") + _ld(5, b"pods") + _ld(6, b"binding")
    raw = _ld(2, _ld(1, attrs))
    body = b"k8s\x00" + _ld(1, _ld(1, b"authorization.k8s.io/v1") + _ld(2, b"SelfSubjectAccessReview")) + _ld(2, raw)
    obj = protobuf.decode(body)
    assert obj == {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                   "spec": {"resourceAttributes": {"namespace": "dev", "verb": "create", "resource": "pods",
                                                   "subresource": "binding"}}}
