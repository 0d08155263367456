"""Escalation prevention rules as upstream's ``pkg/registry/rbac/validation``: rules broken
down to one group/resource/verb/name (``BreakdownRule``), covered piece by piece
(``ruleCovers``: ``*`` verbs/groups/resources, ``*/subresource``, resource names, URL
prefixes), missing pieces compacted (``CompactRules``) and printed as ``CompactString``
(Go's ``%q`` of a string slice: ``["a" "b"]``). Expected values are worked out by hand from
those rules."""

from __future__ import annotations

import pytest

from kubesched.server.apiserver.authn.authenticator import UserInfo
from kubesched.server.apiserver.authz.escalation import (
    breakdown, check, compact, compact_string, covers, missing,
)
from kubesched.server.apiserver.authz.rbac import Policy, Rule
from kubesched.server.apiserver.errors import ApiError


def test_breakdown_one_of_each() -> None:
    rule = Rule(("get", "list"), ("", "apps"), ("pods",), ("a", "b"))
    assert len(breakdown(rule)) == 2 * 2 * 2
    assert breakdown(Rule(("get",), non_resource_urls=("/healthz", "/metrics"))) == [
        Rule(("get",), non_resource_urls=("/healthz",)), Rule(("get",), non_resource_urls=("/metrics",))]


@pytest.mark.parametrize(("owner", "sub", "expected"), [
    (Rule(("*",), ("*",), ("*",)), Rule(("delete",), ("apps",), ("deployments",)), True),
    (Rule(("get",), ("",), ("pods",)), Rule(("delete",), ("",), ("pods",)), False),
    (Rule(("get",), ("",), ("*/status",)), Rule(("get",), ("",), ("pods/status",)), True),
    (Rule(("get",), ("",), ("pods",)), Rule(("get",), ("",), ("pods/status",)), False),
    (Rule(("get",), ("",), ("pods",), ("a",)), Rule(("get",), ("",), ("pods",)), False),  # names narrow
    (Rule(("get",), ("",), ("pods",)), Rule(("get",), ("",), ("pods",), ("a",)), True),
    (Rule(("get",), non_resource_urls=("/api/*",)), Rule(("get",), non_resource_urls=("/api/v1",)), True),
    (Rule(("get",), non_resource_urls=("/api",)), Rule(("get",), non_resource_urls=("/api/v1",)), False),
], ids=["star", "verb", "star-subresource", "subresource", "names-narrow", "names-broad", "url-prefix", "url"])
def test_rule_covers(owner: Rule, sub: Rule, expected: bool) -> None:
    assert covers(owner, sub) is expected


def test_missing_is_compacted_and_printed_as_go_does() -> None:
    owner = [Rule(("get", "list"), ("",), ("pods",))]
    lacking = missing(owner, [Rule(("get", "delete", "deletecollection"), ("",), ("pods", "services"))])
    assert [compact_string(r) for r in compact(lacking)] == [
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete" "deletecollection"]}',
        '{APIGroups:[""], Resources:["services"], Verbs:["get" "delete" "deletecollection"]}']
    assert compact_string(Rule(("get",), non_resource_urls=("/x",))) == '{NonResourceURLs:["/x"], Verbs:["get"]}'
    assert compact_string(Rule(("get",), ("",), ("pods",), ("a",))) == \
        '{APIGroups:[""], Resources:["pods"], ResourceNames:["a"], Verbs:["get"]}'


def _policy() -> Policy:
    role = {"metadata": {"name": "r", "namespace": "ns"}, "rules": [{"apiGroups": [""], "resources": ["pods"],
                                                                      "verbs": ["get"]}]}
    esc = {"metadata": {"name": "esc", "namespace": "ns2"}, "rules": [
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["escalate"]}]}
    binding = {"metadata": {"name": "b", "namespace": "ns"}, "roleRef": {"kind": "Role", "name": "r"},
               "subjects": [{"kind": "User", "name": "u"}]}
    esc_binding = {"metadata": {"name": "e", "namespace": "ns2"}, "roleRef": {"kind": "Role", "name": "esc"},
                   "subjects": [{"kind": "User", "name": "u"}]}
    return Policy.build([], [role, esc], [], [binding, esc_binding])


def test_check_roles_bindings_and_escalate() -> None:
    user = UserInfo("u", "1", ("system:authenticated",))
    wider = {"metadata": {"name": "w"}, "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]}
    check(_policy(), user, "roles", "ns", {"metadata": {"name": "same"}, "rules": wider["rules"][:0]}, None)
    with pytest.raises(ApiError) as err:
        check(_policy(), user, "roles", "ns", wider, None)
    assert err.value.code == 403 and err.value.message == (
        'roles.rbac.authorization.k8s.io "w" is forbidden: user "u" (groups=["system:authenticated"]) is '
        'attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["list"]}')
    check(_policy(), user, "roles", "ns2", wider, None)  # escalate on roles in ns2
    check(_policy(), UserInfo("m", "", ("system:masters",)), "clusterroles", "", wider, None)
    # an update that only changes owners/finalizers is not checked (IsOnlyMutatingGCFields)
    check(_policy(), user, "roles", "ns", {**wider, "metadata": {"name": "w", "finalizers": ["x"]}}, wider)
    with pytest.raises(ApiError) as err:
        check(_policy(), user, "rolebindings", "ns", {"metadata": {"name": "rb"},
                                                      "roleRef": {"kind": "Role", "name": "absent"}}, None)
    assert err.value.message.endswith('is forbidden: role.rbac.authorization.k8s.io "absent" not found')
    check(_policy(), user, "rolebindings", "ns", {"metadata": {"name": "rb"}, "roleRef": {"kind": "Role", "name": "r"}},
          None)  # binding a role whose rules it holds
