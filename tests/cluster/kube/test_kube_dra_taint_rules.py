"""``KubeDra``'s DeviceTaintRules: one optional informer per version a release may serve
them in (resource.k8s.io v1alpha3, v1beta2, v1; upstream's scheduler watches the one of
its release), merged by name; a server that serves none (``kubesched serve``) leaves the
list empty and the informers synced."""

from __future__ import annotations

from typing import Any, cast

from kubesched.api.devicetaints import DeviceTaintRule
from kubesched.cluster.kube import KubeClient
from kubesched.cluster.kube.dra import KubeDra
from kubesched.cluster.kube.informer import Informer
from kubesched.cluster.kube.resources import DEVICE_TAINT_RULES, DRA_RESOURCES


def rule(name: str, key: str) -> DeviceTaintRule:
    return DeviceTaintRule.from_dict({"metadata": {"name": name}, "spec": {"taint": {"key": key, "effect": "NoSchedule"}}})


class _Listed:
    def __init__(self, *rules: DeviceTaintRule) -> None:
        self.rules = list(rules)

    def values(self) -> list[DeviceTaintRule]:
        return list(self.rules)


def kube_dra(client: KubeClient, *rule_informers: Any) -> KubeDra:
    infs: list[Any] = [Informer(client, r) for r in DRA_RESOURCES]
    return KubeDra(client, classes=infs[0], slices=infs[1], claims=infs[2], templates=infs[3],
                   taint_rules=cast("list[Informer[DeviceTaintRule]]", list(rule_informers)))


def test_rules_of_every_served_version_are_merged_by_name(client: KubeClient) -> None:
    alpha, beta = _Listed(rule("b", "old"), rule("a", "x")), _Listed(rule("b", "new"))
    dra = kube_dra(client, alpha, beta)
    assert [(r.name, r.taint.key) for r in dra.device_taint_rules()] == [("a", "x"), ("b", "new")]
    first = dra.device_taint_rules()
    assert dra.device_taint_rules() is first  # the same list until an informer event
    beta.rules = []
    dra.changed()
    assert [(r.name, r.taint.key) for r in dra.device_taint_rules()] == [("a", "x"), ("b", "old")]


def test_a_server_without_device_taint_rules_has_none(client: KubeClient) -> None:
    infs: list[Informer[DeviceTaintRule]] = [Informer(client, r) for r in DEVICE_TAINT_RULES]
    for i in infs:
        i.start()
    try:
        assert all(i.wait_for_sync(10) for i in infs)
        assert kube_dra(client, *infs).device_taint_rules() == []
    finally:
        for i in infs:
            i.stop()
