"""RBAC rule matching and policy evaluation, as upstream's RBAC authorizer decides.

Facts from kubernetes ``pkg/apis/rbac/v1/evaluation_helpers.go`` and
``plugin/pkg/auth/authorizer/rbac/rbac.go`` / ``pkg/registry/rbac/validation/rule.go``:

* a rule allows a resource request when its verbs, apiGroups, resources and resourceNames
  all match; ``*`` matches anything; a subresource request matches ``pods/binding`` or
  ``*/binding``, never plain ``pods``; empty resourceNames match every name;
* a rule allows a non-resource request when its verbs and nonResourceURLs match; a URL
  ending in ``*`` matches by prefix;
* ClusterRoleBindings grant their ClusterRole everywhere; a RoleBinding grants its Role
  or ClusterRole in its own namespace only;
* a ServiceAccount subject is the user ``system:serviceaccount:<ns>:<name>``, its
  namespace defaulting to the RoleBinding's;
* a binding whose role is missing grants nothing and is reported in the reason
  (``RBAC: clusterrole.rbac.authorization.k8s.io "x" not found``).

Stored objects are user input: every field is read defensively (a malformed rule grants
nothing), so evaluation never raises.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

GROUP = "rbac.authorization.k8s.io"
SA_PREFIX = "system:serviceaccount:"
MASTERS = "system:masters"


@dataclass(frozen=True, slots=True)
class Attributes:
    """What a request asks to do (upstream ``authorizer.AttributesRecord``)."""

    user: str
    groups: tuple[str, ...]
    verb: str
    resource_request: bool
    namespace: str = ""
    api_group: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    path: str = ""


@dataclass(frozen=True, slots=True)
class Rule:
    verbs: tuple[str, ...] = ()
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, str))


def parse_rules(obj: Mapping[str, Any]) -> tuple[Rule, ...]:
    rules = obj.get("rules")
    if not isinstance(rules, list):
        return ()
    return tuple(Rule(_strings(r.get("verbs")), _strings(r.get("apiGroups")), _strings(r.get("resources")),
                      _strings(r.get("resourceNames")), _strings(r.get("nonResourceURLs")))
                 for r in rules if isinstance(r, dict))


def verb_matches(rule: Rule, verb: str) -> bool:
    return "*" in rule.verbs or verb in rule.verbs


def api_group_matches(rule: Rule, group: str) -> bool:
    return "*" in rule.api_groups or group in rule.api_groups


def resource_matches(rule: Rule, combined: str, subresource: str) -> bool:
    for r in rule.resources:
        if r == "*" or r == combined:
            return True
        if subresource and r.startswith("*/") and r[2:] == subresource:
            return True
    return False


def resource_name_matches(rule: Rule, name: str) -> bool:
    return not rule.resource_names or name in rule.resource_names


def non_resource_url_matches(rule: Rule, path: str) -> bool:
    for url in rule.non_resource_urls:
        if url == "*" or url == path or (url.endswith("*") and path.startswith(url[:-1])):
            return True
    return False


def rule_allows(attrs: Attributes, rule: Rule) -> bool:
    if attrs.resource_request:
        combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
        return (verb_matches(rule, attrs.verb) and api_group_matches(rule, attrs.api_group)
                and resource_matches(rule, combined, attrs.subresource)
                and resource_name_matches(rule, attrs.name))
    return verb_matches(rule, attrs.verb) and non_resource_url_matches(rule, attrs.path)


def subject_applies(subject: Any, user: str, groups: Sequence[str], binding_namespace: str) -> bool:
    if not isinstance(subject, dict):
        return False
    kind, name = subject.get("kind"), subject.get("name")
    if not isinstance(name, str):
        return False
    if kind == "User":
        return user == name
    if kind == "Group":
        return name in groups
    if kind == "ServiceAccount":
        ns = subject.get("namespace") or binding_namespace
        return isinstance(ns, str) and bool(ns) and user == f"{SA_PREFIX}{ns}:{name}"
    return False


@dataclass(slots=True)
class Policy:
    """A snapshot of the cluster's roles and bindings, indexed for evaluation."""

    cluster_roles: dict[str, tuple[Rule, ...]] = field(default_factory=dict)
    roles: dict[tuple[str, str], tuple[Rule, ...]] = field(default_factory=dict)
    cluster_role_bindings: list[dict[str, Any]] = field(default_factory=list)
    role_bindings: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @classmethod
    def build(cls, cluster_roles: Iterable[Mapping[str, Any]], roles: Iterable[Mapping[str, Any]],
              cluster_role_bindings: Iterable[dict[str, Any]], role_bindings: Iterable[dict[str, Any]]) -> "Policy":
        p = cls()
        for o in cluster_roles:
            p.cluster_roles[_meta(o)[1]] = parse_rules(o)
        for o in roles:
            p.roles[_meta(o)] = parse_rules(o)
        p.cluster_role_bindings = list(cluster_role_bindings)
        for o in role_bindings:
            p.role_bindings.setdefault(_meta(o)[0], []).append(o)
        return p

    def _binding_rules(self, binding: Mapping[str, Any], namespace: str,
                       errors: list[str]) -> tuple[Rule, ...]:
        ref = binding.get("roleRef")
        if not isinstance(ref, dict):
            return ()
        kind, name = ref.get("kind"), ref.get("name")
        if kind == "ClusterRole" and isinstance(name, str):
            found = self.cluster_roles.get(name)
            if found is None:
                errors.append(f'clusterrole.{GROUP} "{name}" not found')
            return found or ()
        if kind == "Role" and namespace and isinstance(name, str):
            found = self.roles.get((namespace, name))
            if found is None:
                errors.append(f'role.{GROUP} "{name}" not found')
            return found or ()
        return ()

    def visit(self, user: str, groups: Sequence[str], namespace: str,
              errors: list[str]) -> Iterator[Rule]:
        """Every rule that applies to the user in ``namespace`` ("" : cluster-wide only),
        cluster role bindings first, as upstream's ``VisitRulesFor``."""
        for b in self.cluster_role_bindings:
            if any(subject_applies(s, user, groups, "") for s in _subjects(b)):
                yield from self._binding_rules(b, "", errors)
        if namespace:
            for b in self.role_bindings.get(namespace, ()):
                if any(subject_applies(s, user, groups, namespace) for s in _subjects(b)):
                    yield from self._binding_rules(b, namespace, errors)

    def authorize(self, attrs: Attributes) -> tuple[bool, str]:
        """(allowed, reason): ``reason`` is upstream's RBAC reason for a refusal ("" if none)."""
        if MASTERS in attrs.groups:
            return True, ""
        errors: list[str] = []
        for rule in self.visit(attrs.user, attrs.groups, attrs.namespace, errors):
            if rule_allows(attrs, rule):
                return True, ""
        if not errors:
            return False, ""
        return False, "RBAC: " + (errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")


def _meta(o: Mapping[str, Any]) -> tuple[str, str]:
    m = o.get("metadata") or {}
    return str(m.get("namespace") or ""), str(m.get("name") or "")


def _subjects(binding: Mapping[str, Any]) -> list[Any]:
    s = binding.get("subjects")
    return s if isinstance(s, list) else []
