"""RBAC's privilege-escalation prevention, as kube-apiserver's policy-based RBAC storage
(``pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased``).

Under ``--authorization-mode RBAC`` a user may write a Role or ClusterRole only with rules
it already holds (upstream ``ConfirmNoEscalation``: each rule broken down to one group,
resource, verb and name, each piece covered by one of the user's rules), unless it is in
``system:masters`` or may ``escalate`` that role; a ClusterRole with an ``aggregationRule``
needs full authority. A binding is allowed if the user may ``bind`` the referenced role,
or holds every rule of it. A refusal is upstream's 403: ``roles.rbac.authorization.k8s.io
"r" is forbidden: user "u" (groups=["g"]) is attempting to grant RBAC permissions not
currently held:`` then the missing rules, compacted (same group and resource: verbs
merged) and sorted, in Go's ``CompactString`` form.

The object checked is the write's result (a dry run of the same request), so patches and
server-side applies are judged on what they would store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.authn.authenticator import UserInfo
from kubesched.server.apiserver.authz.rbac import GROUP, MASTERS, Attributes, Policy, Rule, parse_rules

ROLE_KINDS = {"roles": "Role", "clusterroles": "ClusterRole"}
BINDING_KINDS = {"rolebindings": "RoleBinding", "clusterrolebindings": "ClusterRoleBinding"}
FULL_AUTHORITY = (Rule(("*",), ("*",), ("*",)), Rule(("*",), non_resource_urls=("*",)))
_GC_FIELDS = ("ownerReferences", "finalizers", "resourceVersion", "managedFields", "generation")


def watched(plural: str, group: str) -> bool:
    return group == GROUP and (plural in ROLE_KINDS or plural in BINDING_KINDS)


def breakdown(rule: Rule) -> list[Rule]:
    """One rule per group, resource, verb and resource name (upstream ``BreakdownRule``)."""
    out: list[Rule] = []
    for group in rule.api_groups:
        for resource in rule.resources:
            for verb in rule.verbs:
                names = rule.resource_names or ("",)
                out.extend(Rule((verb,), (group,), (resource,), (n,) if n else ()) for n in names)
    out.extend(Rule((verb,), non_resource_urls=(url,)) for url in rule.non_resource_urls for verb in rule.verbs)
    return out


def _resources_cover(owner: Sequence[str], wanted: Sequence[str]) -> bool:
    if "*" in owner:
        return True
    for path in wanted:
        if path in owner:
            continue
        if "/" not in path or "*/" + path.split("/", 1)[1] not in owner:
            return False
    return True


def _url_covers(owner: str, path: str) -> bool:
    return owner == path or (owner.endswith("*") and path.startswith(owner.rstrip("*")))


def covers(owner: Rule, sub: Rule) -> bool:
    """Whether ``owner`` grants all of the broken-down rule ``sub`` (upstream ``ruleCovers``)."""
    return (("*" in owner.verbs or set(sub.verbs) <= set(owner.verbs))
            and ("*" in owner.api_groups or set(sub.api_groups) <= set(owner.api_groups))
            and _resources_cover(owner.resources, sub.resources)
            and all(any(_url_covers(o, p) for o in owner.non_resource_urls) for p in sub.non_resource_urls)
            and (not owner.resource_names
                 or (bool(sub.resource_names) and set(sub.resource_names) <= set(owner.resource_names))))


def missing(owner: Sequence[Rule], wanted: Sequence[Rule]) -> list[Rule]:
    return [sub for rule in wanted for sub in breakdown(rule) if not any(covers(o, sub) for o in owner)]


def compact(rules: Sequence[Rule]) -> list[Rule]:
    """Rules of one group and resource (and at most one name) merged (upstream ``CompactRules``)."""
    simple: dict[tuple[str, str, tuple[str, ...]], list[str]] = {}
    out: list[Rule] = []
    for r in rules:
        if len(r.resource_names) > 1 or r.non_resource_urls or len(r.api_groups) != 1 or len(r.resources) != 1:
            out.append(r)
            continue
        verbs = simple.setdefault((r.api_groups[0], r.resources[0], r.resource_names), [])
        verbs.extend(v for v in r.verbs if v not in verbs)
    out.extend(Rule(tuple(v), (g,), (res,), names) for (g, res, names), v in simple.items())
    return out


def _q(values: Sequence[str]) -> str:
    """Go's ``%q`` of a string slice: ``["a" "b"]``."""
    return "[" + " ".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values) + "]"


def compact_string(r: Rule) -> str:
    parts = [f"{label}:{_q(v)}" for label, v in (
        ("APIGroups", r.api_groups), ("Resources", r.resources), ("NonResourceURLs", r.non_resource_urls),
        ("ResourceNames", r.resource_names), ("Verbs", r.verbs)) if v]
    return "{" + ", ".join(parts) + "}"


def confirm_no_escalation(policy: Policy, user: UserInfo, namespace: str, rules: Sequence[Rule]) -> str:
    """"" if the user holds every rule in ``namespace``, else upstream's explanation."""
    errors: list[str] = []
    owner = list(policy.visit(user.name, user.groups, namespace, errors))
    lacking = missing(owner, rules)
    if not lacking:
        return ""
    text = "\n".join(sorted({compact_string(r) for r in compact(lacking)}))
    msg = (f'user "{user.name}" (groups={_q(user.groups)}) is attempting to grant RBAC permissions '
           f"not currently held:\n{text}")
    if errors:
        msg += "; resolution errors: [" + " ".join(errors) + "]"
    return msg


def _allowed(policy: Policy, user: UserInfo, verb: str, plural: str, namespace: str, name: str) -> bool:
    attrs = Attributes(user.name, user.groups, verb, True, namespace=namespace, api_group=GROUP,
                       resource=plural, name=name)
    return policy.authorize(attrs)[0]


def _only_gc_changes(new: Mapping[str, Any], old: Mapping[str, Any] | None) -> bool:
    """Upstream lets an update through unchecked when it changes only what garbage collection
    needs (owners, finalizers)."""
    if old is None:
        return False

    def strip(o: Mapping[str, Any]) -> dict[str, Any]:
        meta = {k: v for k, v in (o.get("metadata") or {}).items() if k not in _GC_FIELDS}
        return {**o, "metadata": meta}
    return strip(new) == strip(old)


def check(policy: Policy, user: UserInfo, plural: str, namespace: str, new: Mapping[str, Any],
          old: Mapping[str, Any] | None) -> None:
    """Raise upstream's 403 when writing ``new`` (over ``old``) would grant rights ``user`` lacks."""
    if MASTERS in user.groups or _only_gc_changes(new, old):
        return
    name = str((new.get("metadata") or {}).get("name") or "")
    scope_ns = namespace if plural in ("roles", "rolebindings") else ""
    if plural in ROLE_KINDS:
        if _allowed(policy, user, "escalate", plural, scope_ns, name):
            return
        reason = confirm_no_escalation(policy, user, scope_ns, parse_rules(new))
        if not reason and plural == "clusterroles" and new.get("aggregationRule"):
            if confirm_no_escalation(policy, user, "", FULL_AUTHORITY):
                reason = "must have cluster-admin privileges to use the aggregationRule"
    else:
        ref = new.get("roleRef") if isinstance(new.get("roleRef"), dict) else {}
        assert isinstance(ref, dict)
        kind, role = str(ref.get("kind") or ""), str(ref.get("name") or "")
        role_plural = "clusterroles" if kind == "ClusterRole" else "roles"
        if _allowed(policy, user, "bind", role_plural, scope_ns, role):
            return
        found = policy.cluster_roles.get(role) if kind == "ClusterRole" else policy.roles.get((scope_ns, role))
        if found is None:
            reason = f'{kind.lower()}.{GROUP} "{role}" not found'
        else:
            reason = confirm_no_escalation(policy, user, scope_ns, found)
    if reason:
        raise E.forbidden(plural, GROUP, name, reason)
