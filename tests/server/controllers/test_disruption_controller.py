"""The disruption controller: the arithmetic of ``pkg/controller/disruption/disruption.go``
(``getExpectedPodCount``, ``countHealthyPods``, ``updatePdbStatus``) and its status writes
over a real registry with a fake clock.

Expected values are computed by hand from upstream's rules, shown next to each case:
maxUnavailable → desired = expected − ceil(pct × expected / 100); percentage minAvailable →
desired = ceil(pct × expected / 100); integer minAvailable → expected = number of pods.
The percentage cases follow upstream's ``TestMaxUnavailable``/``TestMinAvailable*`` shape
in ``disruption_test.go``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.apiserver.registry.subresources import evict
from kubesched.server.apiserver.errors import ApiError
from kubesched.server.controllers.disruption import (
    DisruptionController, SyncError, disruptions_allowed, expected_and_desired, scaled_value,
)
from kubesched.server.controllers.events import EventRecorder
from kubesched.server.controllers.informer import Informer, by_namespace, wait_synced
from kubesched.server.store import Store

T0 = 1_800_000_000.0


@pytest.mark.parametrize(("value", "total", "want"), [
    (3, 10, 3),          # an integer is taken as is
    ("50%", 3, 2),       # ceil(1.5)
    ("34%", 3, 2),       # ceil(1.02)
    ("33%", 3, 1),       # ceil(0.99)
    ("0%", 5, 0),
    ("100%", 7, 7),
], ids=["int", "50pct-of-3", "34pct-of-3", "33pct-of-3", "0pct", "100pct"])
def test_scaled_value_rounds_up(value: int | str, total: int, want: int) -> None:
    assert scaled_value(value, total, "x") == want


def test_scaled_value_refuses_a_bad_percentage() -> None:
    with pytest.raises(SyncError, match="not a percentage"):
        scaled_value("half", 4, "maxUnavailable")


@pytest.mark.parametrize(("min_av", "max_un", "pods", "scale", "want"), [
    (2, None, 3, 99, (3, 2)),         # integer minAvailable: expected = pods, scale unused
    ("50%", None, 3, 4, (4, 2)),      # ceil(0.5 × 4) = 2 of the controllers' 4
    ("51%", None, 3, 4, (4, 3)),      # ceil(2.04) = 3
    (None, 1, 3, 3, (3, 2)),          # 3 − 1
    (None, "25%", 3, 3, (3, 2)),      # 3 − ceil(0.75) = 2
    (None, 5, 3, 3, (3, 0)),          # 3 − 5 < 0 → 0
    (None, None, 2, 0, (2, 0)),
], ids=["min-int", "min-50pct", "min-51pct", "max-int", "max-25pct", "max-more-than-all", "neither"])
def test_expected_and_desired(min_av: Any, max_un: Any, pods: int, scale: int, want: tuple[int, int]) -> None:
    assert expected_and_desired(min_av, max_un, pods, scale) == want


@pytest.mark.parametrize(("current", "desired", "expected", "want"), [
    (3, 2, 3, 1), (2, 2, 3, 0), (1, 2, 3, 0), (3, 0, 0, 0),  # expected 0: a safe 0 (upstream's race guard)
])
def test_disruptions_allowed(current: int, desired: int, expected: int, want: int) -> None:
    assert disruptions_allowed(current, desired, expected) == want


# -- over a registry ---------------------------------------------------------------------------
class Clock:
    def __init__(self) -> None:
        self.t = T0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def env(tmp_path: Path) -> Iterator[tuple[Registry, DisruptionController, Clock]]:
    clock = Clock()
    store = Store(tmp_path / "db")
    reg = Registry(store, clock=clock)
    reg.bootstrap()
    pods = Informer(reg, "pods")
    pods.add_index("namespace", by_namespace)
    pdbs = Informer(reg, "poddisruptionbudgets.policy")
    ctl = DisruptionController(reg, pdbs, pods, EventRecorder(reg, "controllermanager"))
    for inf in (pods, pdbs):
        inf.start()
    assert wait_synced([pods, pdbs])
    yield reg, ctl, clock
    for inf in (pods, pdbs):
        inf.stop()
    store.close()


def _rs(reg: Registry, name: str, replicas: int) -> dict[str, Any]:
    return reg.create("replicasets.apps", "default", {
        "metadata": {"name": name}, "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                                             "template": {"metadata": {"labels": {"app": name}},
                                                          "spec": {"containers": [{"name": "c", "image": "i"}]}}}})


def _pod(reg: Registry, name: str, app: str, owner: dict[str, Any] | None, ready: bool) -> None:
    meta: dict[str, Any] = {"name": name, "labels": {"app": app}}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner["metadata"]["name"],
                                    "uid": owner["metadata"]["uid"], "controller": True}]
    reg.create("pods", "default", {"metadata": meta, "spec": {"containers": [{"name": "c", "image": "i"}],
                                                              "nodeName": "n1"}})
    cur = reg.get("pods", "default", name)
    cur["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    reg.update("pods", "default", name, cur, subresource="status")


def _sync(reg: Registry, ctl: DisruptionController, name: str) -> dict[str, Any]:
    ctl.pdbs.wait_for(reg.store.list("policy/poddisruptionbudgets").rv)
    ctl.pods.wait_for(reg.store.list("core/pods").rv)
    ctl.sync(("default", name))
    return dict(reg.get("poddisruptionbudgets.policy", "default", name)["status"])


def test_status_of_an_allowing_and_a_blocking_budget_and_eviction(
        env: tuple[Registry, DisruptionController, Clock]) -> None:
    reg, ctl, clock = env
    rs = _rs(reg, "web", 4)  # scale 4, 3 pods exist (one not created yet), 1 of them not ready
    for i, ready in enumerate((True, True, False)):
        _pod(reg, f"web-{i}", "web", rs, ready)
    reg.create("poddisruptionbudgets.policy", "default", {
        "metadata": {"name": "web-pdb"}, "spec": {"maxUnavailable": "25%", "selector": {"matchLabels": {"app": "web"}}}})
    st = _sync(reg, ctl, "web-pdb")
    # expected = scale 4; desired = 4 − ceil(1.0) = 3; current = 2 ready → 0 allowed
    assert (st["expectedPods"], st["desiredHealthy"], st["currentHealthy"], st["disruptionsAllowed"]) == (4, 3, 2, 0)
    [cond] = st["conditions"]
    assert (cond["type"], cond["status"], cond["reason"]) == ("DisruptionAllowed", "False", "InsufficientPods")
    assert st["observedGeneration"] == 1
    with pytest.raises(ApiError) as err:
        evict(reg, "default", "web-0", {"kind": "Eviction"})
    assert err.value.code == 429
    assert "Cannot evict pod as it would violate the pod's disruption budget." in err.value.message

    _pod(reg, "web-3", "web", rs, True)  # 3 ready of 4 → 3 − 3 = 0 still
    cur = reg.get("pods", "default", "web-2")
    cur["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    reg.update("pods", "default", "web-2", cur, subresource="status")  # 4 ready → 1 allowed
    st = _sync(reg, ctl, "web-pdb")
    assert (st["currentHealthy"], st["disruptionsAllowed"]) == (4, 1)
    assert st["conditions"][0]["reason"] == "SufficientPods" and st["conditions"][0]["status"] == "True"

    evict(reg, "default", "web-0", {"kind": "Eviction"})  # consumes the one disruption
    st = reg.get("poddisruptionbudgets.policy", "default", "web-pdb")["status"]
    assert st["disruptionsAllowed"] == 0 and "web-0" in st["disruptedPods"]
    # the evicted pod is terminating (a bound pod is deleted gracefully): it no longer counts
    st = _sync(reg, ctl, "web-pdb")
    assert st["currentHealthy"] == 3 and st["disruptionsAllowed"] == 0


def test_a_pod_recorded_as_disrupted_stops_counting_for_two_minutes(
        env: tuple[Registry, DisruptionController, Clock]) -> None:
    reg, ctl, clock = env
    rs = _rs(reg, "db", 2)
    for i in range(2):
        _pod(reg, f"db-{i}", "db", rs, True)
    reg.create("poddisruptionbudgets.policy", "default", {
        "metadata": {"name": "db"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}}})
    assert _sync(reg, ctl, "db")["disruptionsAllowed"] == 1
    pdb = reg.get("poddisruptionbudgets.policy", "default", "db")
    pdb["status"]["disruptedPods"] = {"db-1": "2027-01-15T08:00:00Z"}  # = T0, as eviction records it
    pdb["status"]["disruptionsAllowed"] = 0
    reg.update("poddisruptionbudgets.policy", "default", "db", pdb, subresource="status")
    st = _sync(reg, ctl, "db")
    assert st["currentHealthy"] == 1 and st["disruptionsAllowed"] == 0 and "db-1" in st["disruptedPods"]
    clock.t = T0 + 121  # DeletionTimeout (2 min) passed and the pod still exists: counted again
    st = _sync(reg, ctl, "db")
    assert st["currentHealthy"] == 2 and st["disruptionsAllowed"] == 1 and "disruptedPods" not in st


def test_unmanaged_pods_and_pods_without_a_scale(env: tuple[Registry, DisruptionController, Clock]) -> None:
    reg, ctl, clock = env
    _pod(reg, "solo", "solo", None, True)
    reg.create("poddisruptionbudgets.policy", "default", {
        "metadata": {"name": "solo"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "solo"}}}})
    st = _sync(reg, ctl, "solo")  # integer minAvailable never reads the scale: 1 pod, 1 desired
    assert (st["expectedPods"], st["desiredHealthy"], st["currentHealthy"], st["disruptionsAllowed"]) == (1, 1, 1, 0)
    reg.create("poddisruptionbudgets.policy", "default", {
        "metadata": {"name": "solo-max"}, "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "solo"}}}})
    st = _sync(reg, ctl, "solo-max")  # unmanaged pods are left out of the scale: expected 0 → 0 allowed
    assert (st["expectedPods"], st["disruptionsAllowed"]) == (0, 0)
    events = reg.list("events", "default")["items"]
    assert any(e["reason"] == "UnmanagedPods" for e in events)


def test_eviction_reads_the_status_as_upstream(env: tuple[Registry, DisruptionController, Clock]) -> None:
    """``pkg/registry/core/pod/storage/eviction.go``: a budget whose status lags its generation
    refuses ("still being processed"); a Running pod that is not Ready is evicted without
    using the budget while the budget is met (IfHealthyBudget, the default)."""
    reg, ctl, clock = env
    rs = _rs(reg, "api", 3)
    for i, ready in enumerate((True, True, False)):
        _pod(reg, f"api-{i}", "api", rs, ready)
    reg.create("poddisruptionbudgets.policy", "default", {
        "metadata": {"name": "api"}, "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "api"}}}})
    with pytest.raises(ApiError) as err:  # no status yet: observedGeneration 0 < generation 1
        evict(reg, "default", "api-0", {})
    assert err.value.code == 429 and "still being processed" in str(err.value.status())
    st = _sync(reg, ctl, "api")
    assert (st["currentHealthy"], st["desiredHealthy"], st["disruptionsAllowed"]) == (2, 2, 0)
    evict(reg, "default", "api-2", {})  # not Ready, budget met (2 >= 2): evicted, budget untouched
    assert reg.get("poddisruptionbudgets.policy", "default", "api")["status"]["disruptionsAllowed"] == 0
    with pytest.raises(ApiError) as err:  # a Ready one would break the budget
        evict(reg, "default", "api-0", {})
    assert "needs 2 healthy pods and has 2 currently" in str(err.value.status())
