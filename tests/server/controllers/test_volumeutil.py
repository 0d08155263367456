"""The PV controller's choice of a volume for a claim (pure): upstream's
``pkg/controller/volume/persistentvolume/index.go`` (``findByClaim``: access-mode groups,
fewest modes first) and ``k8s.io/component-helpers/storage/volume/pv_helpers.go``
(``FindMatchingVolume``: pre-bound first, delayed binding, phase, selector, class,
smallest fit). Expected picks are worked out by hand in each case's comment."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.server.controllers.volumeutil import bound_to_claim, find_best_match

RWO, ROX, RWX = "ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany"


def pv(name: str, size: str, *modes: str, phase: str = "Available", cls: str = "", labels: dict[str, str] | None = None,
       claim: dict[str, Any] | None = None, mode: str = "Filesystem") -> dict[str, Any]:
    spec: dict[str, Any] = {"capacity": {"storage": size}, "accessModes": list(modes), "storageClassName": cls,
                            "volumeMode": mode}
    if claim is not None:
        spec["claimRef"] = claim
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": spec, "status": {"phase": phase}}


def claim(size: str = "1Gi", *modes: str, cls: str = "", selector: dict[str, Any] | None = None,
          mode: str = "Filesystem") -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": list(modes or (RWO,)), "resources": {"requests": {"storage": size}},
                            "storageClassName": cls, "volumeMode": mode}
    if selector is not None:
        spec["selector"] = selector
    return {"metadata": {"name": "c", "namespace": "ns", "uid": "u1"}, "spec": spec}


CASES = [
    # smallest volume that fits, among those of exactly the claim's modes: 2Gi
    ("smallest-fit", claim("1500Mi"), [pv("a", "5Gi", RWO), pv("b", "2Gi", RWO), pv("c", "1Gi", RWO)], False, "b"),
    # RWO group has nothing big enough, so the RWO+ROX group is searched: its 3Gi
    ("next-mode-group", claim("2Gi"), [pv("a", "1Gi", RWO), pv("b", "3Gi", RWO, ROX), pv("c", "2Gi", RWO, ROX, RWX)],
     False, "b"),
    # a volume that is Bound, Released or has a claimRef is skipped
    ("only-available", claim(), [pv("a", "1Gi", RWO, phase="Released"),
                                 pv("b", "1Gi", RWO, claim={"namespace": "x", "name": "y"}), pv("c", "9Gi", RWO)],
     False, "c"),
    # a volume pre-bound to this claim wins over a better fit
    ("pre-bound", claim(), [pv("a", "1Gi", RWO), pv("b", "9Gi", RWO, phase="Bound",
                                                    claim={"namespace": "ns", "name": "c", "uid": "u1"})],
     False, "b"),
    # delayed binding (WaitForFirstConsumer): only a pre-bound volume matches
    ("delayed", claim(cls="wffc"), [pv("a", "1Gi", RWO, cls="wffc")], True, None),
    ("delayed-pre-bound", claim(cls="wffc"), [pv("a", "1Gi", RWO, cls="wffc", claim={"namespace": "ns", "name": "c"})],
     True, "a"),
    # class, selector and volume mode must match
    ("class", claim(cls="fast"), [pv("a", "1Gi", RWO), pv("b", "5Gi", RWO, cls="fast")], False, "b"),
    ("selector", claim(selector={"matchLabels": {"tier": "gold"}}),
     [pv("a", "1Gi", RWO), pv("b", "5Gi", RWO, labels={"tier": "gold"})], False, "b"),
    ("volume-mode", claim(mode="Block"), [pv("a", "1Gi", RWO), pv("b", "5Gi", RWO, mode="Block")], False, "b"),
    # the claim's modes must all be offered
    ("modes", claim("1Gi", RWX), [pv("a", "1Gi", RWO), pv("b", "1Gi", RWO, ROX)], False, None),
]


@pytest.mark.parametrize("pvc,volumes,delay,want", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_find_best_match(pvc: dict[str, Any], volumes: list[dict[str, Any]], delay: bool, want: str | None) -> None:
    got = find_best_match(pvc, volumes, delay_binding=delay)
    assert (got["metadata"]["name"] if got is not None else None) == want


def test_bound_to_claim_checks_the_uid_only_when_the_reference_has_one() -> None:
    pvc = claim()
    assert bound_to_claim(pv("a", "1Gi", RWO, claim={"namespace": "ns", "name": "c"}), pvc)
    assert bound_to_claim(pv("a", "1Gi", RWO, claim={"namespace": "ns", "name": "c", "uid": "u1"}), pvc)
    assert not bound_to_claim(pv("a", "1Gi", RWO, claim={"namespace": "ns", "name": "c", "uid": "u2"}), pvc)
    assert not bound_to_claim(pv("a", "1Gi", RWO, claim={"namespace": "other", "name": "c"}), pvc)
    assert not bound_to_claim(pv("a", "1Gi", RWO), pvc)
