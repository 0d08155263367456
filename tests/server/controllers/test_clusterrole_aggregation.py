"""The ClusterRole aggregation rule of upstream ``pkg/controller/clusterroleaggregation``
(``syncClusterRole``): for each selector in order, matching ClusterRoles sorted by name,
the aggregating role itself skipped, each rule kept once (semantic equality: an empty
list equals an absent one)."""

from __future__ import annotations

from kubesched.server.controllers.clusterroleaggregation import aggregate

AGG = {"metadata": {"name": "agg"}, "aggregationRule": {"clusterRoleSelectors": [
    {"matchLabels": {"a": "1"}}, {"matchExpressions": [{"key": "b", "operator": "Exists"}]}]}}


def _role(name: str, labels: dict[str, str], *verbs: str) -> dict[str, object]:
    return {"metadata": {"name": name, "labels": labels},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": [v]} for v in verbs]}


def test_rules_by_selector_then_name_once_each() -> None:
    roles = [AGG, _role("z", {"a": "1"}, "get"), _role("m", {"a": "1"}, "list", "get"),
             _role("b-role", {"b": "x"}, "watch", "list"), _role("other", {}, "delete")]
    rule = lambda v: {"apiGroups": [""], "resources": ["pods"], "verbs": [v]}  # noqa: E731
    assert aggregate(AGG, roles) == [rule("list"), rule("get"), rule("watch")]


def test_self_and_semantic_duplicates() -> None:
    me = {**AGG, "metadata": {"name": "agg", "labels": {"a": "1"}}, "rules": [{"verbs": ["x"]}]}
    dup = {"metadata": {"name": "d", "labels": {"a": "1"}},
           "rules": [{"verbs": ["get"], "resourceNames": []}, {"verbs": ["get"]}]}
    assert aggregate(me, [me, dup]) == [{"verbs": ["get"], "resourceNames": []}]
    assert aggregate({"metadata": {"name": "n"}, "aggregationRule": {}}, [dup]) == []
