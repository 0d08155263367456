"""The ClusterRole aggregation controller (upstream
``pkg/controller/clusterroleaggregation``): a ClusterRole with an ``aggregationRule`` gets
as its rules those of every other ClusterRole one of its ``clusterRoleSelectors`` matches,
selectors in order, matching roles sorted by name, each rule once, so adding a labelled
ClusterRole (``rbac.example.com/aggregate-to-monitoring: "true"``) extends the aggregate at
once, and removing it shrinks it. Any ClusterRole change re-queues every aggregated role.
"""

from __future__ import annotations

from typing import Any

from kubesched.api.errors import SelectorError
from kubesched.api.selectors import LabelSelector
from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import Controller, meta
from kubesched.server.controllers.informer import Informer, Obj

RESOURCE = "clusterroles.rbac.authorization.k8s.io"
MANAGER = "clusterrole-aggregation-controller"


def _normal(rule: Any) -> Any:
    """A rule as upstream's semantic equality sees it (an empty list is no list)."""
    if not isinstance(rule, dict):
        return rule
    return {k: v for k, v in rule.items() if v not in (None, [])}


def aggregate(role: Obj, roles: list[Obj]) -> list[Any]:
    """The rules ``role`` aggregates from ``roles`` (upstream ``syncClusterRole``)."""
    rule_spec = role.get("aggregationRule") or {}
    out: list[Any] = []
    seen: list[Any] = []
    for raw in rule_spec.get("clusterRoleSelectors") or []:
        try:
            selector = LabelSelector.parse(raw)
        except SelectorError:
            continue
        matching = sorted((r for r in roles if selector.matches(meta(r).get("labels") or {})),
                          key=lambda r: str(meta(r).get("name")))
        for other in matching:
            if meta(other).get("name") == meta(role).get("name"):
                continue
            for rule in other.get("rules") or []:
                if _normal(rule) not in seen:
                    seen.append(_normal(rule))
                    out.append(rule)
    return out


class ClusterRoleAggregationController(Controller[str]):
    name = "clusterrole-aggregation-controller"

    def __init__(self, registry: Registry, roles: Informer, *, workers: int = 1) -> None:
        super().__init__(workers)
        self.registry = registry
        self.roles = roles
        roles.add_handler(self._on_role)

    def _on_role(self, old: Obj | None, new: Obj | None) -> None:
        for role in self.roles.objects():
            if role.get("aggregationRule"):
                self.queue.add(str(meta(role).get("name")))

    def sync(self, key: str) -> None:
        role = self.roles.get("", key)
        if role is None or not role.get("aggregationRule"):
            return
        rules = aggregate(role, self.roles.objects())
        if [_normal(r) for r in rules] == [_normal(r) for r in role.get("rules") or []]:
            return
        try:
            out = self.registry.update(RESOURCE, None, key, {**role, "rules": rules}, field_manager=MANAGER)
        except ApiError as exc:
            if exc.code == 404:
                return
            raise  # a conflict: retried with the informer's newer copy
        self.expect(key, self.roles, out)
