"""Validation of Roles, ClusterRoles and their bindings, as upstream's
``pkg/apis/rbac/validation/validation.go`` checks them, so a malformed rule is a 422
naming the field rather than a rule the authorizer silently ignores.

* names are path segments (``system:discovery`` is a valid name);
* a rule needs verbs; a non-resource rule may not also name groups or resources, nor
  sit in a namespaced Role; a resource rule needs apiGroups and resources;
* a binding's ``roleRef`` names the RBAC group, a kind it may refer to and a name, and
  may not change on update; subjects are User, Group or ServiceAccount with a name (a
  ServiceAccount in a ClusterRoleBinding also needs its namespace).
"""

from __future__ import annotations

from typing import Any

from kubesched.server.apiserver.strategies.base import Context, Strategy
from kubesched.server.apiserver.strategies.validation import Cause, invalid, required

GROUP = "rbac.authorization.k8s.io"


def _list(obj: dict[str, Any], key: str, path: str, causes: list[Cause]) -> list[Any]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        causes.append(invalid(f"{path}.{key}", value, "must be a list of strings"))
        return []
    return value


def _not_supported(path: str, value: Any, allowed: tuple[str, ...]) -> Cause:
    choices = ", ".join(f'"{a}"' for a in allowed)
    return ("FieldValueNotSupported", path, f'Unsupported value: "{value}": supported values: {choices}')


class RoleStrategy(Strategy):
    name_rule = "path"

    def __init__(self, namespaced: bool) -> None:
        self.namespaced = namespaced

    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        causes: list[Cause] = []
        rules = obj.get("rules")
        if rules is None:
            return causes
        if not isinstance(rules, list):
            return [invalid("rules", rules, "must be a list of rules")]
        for i, rule in enumerate(rules):
            path = f"rules[{i}]"
            if not isinstance(rule, dict):
                causes.append(invalid(path, rule, "must be a rule object"))
                continue
            verbs = _list(rule, "verbs", path, causes)
            groups, resources = _list(rule, "apiGroups", path, causes), _list(rule, "resources", path, causes)
            _list(rule, "resourceNames", path, causes)
            urls = _list(rule, "nonResourceURLs", path, causes)
            if not verbs:
                causes.append(("FieldValueRequired", f"{path}.verbs", "Required value: verbs must contain at least one value"))
            if urls:
                if self.namespaced:
                    causes.append(invalid(f"{path}.nonResourceURLs", urls,
                                          "namespaced rules cannot apply to non-resource URLs"))
                elif groups or resources:
                    causes.append(invalid(f"{path}.nonResourceURLs", urls,
                                          "rules cannot apply to both regular resources and non-resource URLs"))
                continue
            if not groups:
                causes.append(("FieldValueRequired", f"{path}.apiGroups",
                               "Required value: resource rules must supply at least one api group"))
            if not resources:
                causes.append(("FieldValueRequired", f"{path}.resources",
                               "Required value: resource rules must supply at least one resource"))
        return causes


class BindingStrategy(Strategy):
    name_rule = "path"

    def __init__(self, namespaced: bool) -> None:
        self.namespaced = namespaced
        self.kinds = ("Role", "ClusterRole") if namespaced else ("ClusterRole",)

    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        causes: list[Cause] = []
        ref = obj.get("roleRef")
        if not isinstance(ref, dict):
            return [required("roleRef")]
        if ref.get("apiGroup") != GROUP:
            causes.append(_not_supported("roleRef.apiGroup", ref.get("apiGroup", ""), (GROUP,)))
        if ref.get("kind") not in self.kinds:
            causes.append(_not_supported("roleRef.kind", ref.get("kind", ""), self.kinds))
        if not isinstance(ref.get("name"), str) or not ref["name"]:
            causes.append(required("roleRef.name"))
        subjects = obj.get("subjects")
        if subjects is None:
            return causes
        if not isinstance(subjects, list):
            return [*causes, invalid("subjects", subjects, "must be a list of subjects")]
        for i, s in enumerate(subjects):
            path = f"subjects[{i}]"
            if not isinstance(s, dict):
                causes.append(invalid(path, s, "must be a subject object"))
                continue
            if not isinstance(s.get("name"), str) or not s["name"]:
                causes.append(required(f"{path}.name"))
            kind = s.get("kind")
            if kind not in ("ServiceAccount", "User", "Group"):
                causes.append(_not_supported(f"{path}.kind", kind or "", ("ServiceAccount", "User", "Group")))
            elif kind == "ServiceAccount":
                if s.get("apiGroup") not in (None, ""):
                    causes.append(_not_supported(f"{path}.apiGroup", s.get("apiGroup"), ("",)))
                if not self.namespaced and not s.get("namespace"):
                    causes.append(required(f"{path}.namespace"))
        return causes

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: Context) -> list[Cause]:
        if new.get("roleRef") != old.get("roleRef"):
            return [invalid("roleRef", new.get("roleRef"), "cannot change roleRef")]
        return []


RBAC_STRATEGIES: dict[tuple[str, str], Strategy] = {
    (GROUP, "clusterroles"): RoleStrategy(namespaced=False),
    (GROUP, "roles"): RoleStrategy(namespaced=True),
    (GROUP, "clusterrolebindings"): BindingStrategy(namespaced=False),
    (GROUP, "rolebindings"): BindingStrategy(namespaced=True),
}
