"""DynamicResources' Score from v1.35 (upstream ``plugins/dynamicresources/dynamicresources.go``
``Score``, ``computeScore``, ``NormalizeScore``; weight 2 in ``apis/config/v1/default_plugins.go``).

Expected values are hand computed from that source: a picked subrequest at index i of
``firstAvailable`` adds ``FirstAvailableDeviceRequestMaxSize`` (8) minus i; NormalizeScore is
``DefaultNormalizeScore(100, reverse=false)`` (score * 100 / highest, Go's truncating division);
the default profile weighs it 2. v1.34 has no Score. The claim/allocation pairing by index
up to v1.36 and its fix in v1.37 are kubernetes/kubernetes#139017 ("Fix dra scoring bug with
mixed allocated and unallocated claims", reproduced on 1.35.5 and 1.36.1 in that PR).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.decode import Manifest
from kubesched.api.defaults import default_manifest
from kubesched.api.dra import parse_dra_object
from kubesched.api.objects import Node, Pod
from kubesched.config import load_config
from kubesched.framework.features import Features
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.driver import Simulation
from tests.plugins.test_dynamicresources_plugin import GPU_CLASS, gpus, node

PRIORITIZED = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
               "metadata": {"name": "big-or-small", "namespace": "default"},
               "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "firstAvailable": [
                   {"name": "big", "deviceClassName": "gpu",
                    "selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "big"'}}]},
                   {"name": "small", "deviceClassName": "gpu",
                    "selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "small"'}}]},
               ]}]}}}}
EXACT = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
         "metadata": {"name": "one-gpu", "namespace": "default"},
         "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}}
# allocated before the run (a device on node-c, no node selector: usable from every node)
SHARED = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
          "metadata": {"name": "shared", "namespace": "default", "uid": "shared-uid"},
          "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
          "status": {"allocation": {"devices": {"results": [
              {"request": "gpu", "driver": "gpu.example.com", "pool": "node-c", "device": "gpu-0"}]}}}}


def claim_pod(name: str, *claims: tuple[str, str]) -> dict[str, Any]:
    """``claims``: (pod claim name, "claim:NAME" or "template:NAME")."""
    rcs = []
    for cname, ref in claims:
        kind, _, target = ref.partition(":")
        rcs.append({"name": cname, ("resourceClaimName" if kind == "claim" else "resourceClaimTemplateName"): target})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {
                "requests": {"cpu": "100m"}, "claims": [{"name": c} for c, _ in claims]}}],
                "resourceClaims": rcs}}


def simulate(version: str, *objects: dict[str, Any]) -> Simulation:
    m = Manifest()
    for raw in default_manifest(list(objects)):
        if raw["kind"] == "Node":
            m.nodes.append(Node.from_dict(raw))
        elif raw["kind"] == "Pod":
            p = Pod.from_dict(raw, require_limits=False)
            p.seq = len(m.pods)
            m.pods.append(p)
        else:
            m.dra.append(parse_dra_object(raw))
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "percentageOfNodesToScore": 100}, in_tree_registry())
    sim = Simulation(m, cfg, tie_break="name", explain=True, features=Features.for_version(version))
    sim.run(single_pass=True)
    return sim


def first_attempt(sim: Simulation, name: str) -> dict[str, Any]:
    o = next(o for o in sim.results() if o.pod.name == name)
    doc: dict[str, Any] = o.attempts[0].to_json()
    return doc


def dra_scores(att: dict[str, Any]) -> dict[str, Any]:
    return {n: s.get("DynamicResources") for n, s in att["scores"].items()}


def cluster() -> list[dict[str, Any]]:
    return [GPU_CLASS, node("node-a"), node("node-b"), gpus("node-a", "big", "small"), gpus("node-b", "small")]


@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
def test_earlier_subrequest_scores_higher(version: str) -> None:
    # node-a: "gpu/big" (index 0) -> 8 -> 8*100/8 = 100 -> x2 = 200
    # node-b: "gpu/small" (index 1) -> 7 -> 7*100/8 = 87 -> x2 = 174
    sim = simulate(version, *cluster(), PRIORITIZED, claim_pod("p", ("gpu", "template:big-or-small")))
    att = first_attempt(sim, "p")
    assert dra_scores(att) == {"node-a": 200, "node-b": 174}
    assert att["chosen"] == "node-a"


def test_no_score_before_v1_35() -> None:
    sim = simulate("1.34", *cluster(), PRIORITIZED, claim_pod("p", ("gpu", "template:big-or-small")))
    assert dra_scores(first_attempt(sim, "p")) == {"node-a": None, "node-b": None}


@pytest.mark.parametrize("objects", [
    pytest.param([EXACT, claim_pod("p", ("gpu", "template:one-gpu"))], id="exactly-request"),
    pytest.param([{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                   "spec": {"containers": [{"name": "c", "image": "i"}]}}], id="pod-without-claims"),
])
def test_zero_without_subrequests(objects: list[dict[str, Any]]) -> None:
    sim = simulate("1.35", *cluster(), *objects)
    assert dra_scores(first_attempt(sim, "p")) == {"node-a": 0, "node-b": 0}


@pytest.mark.parametrize("version", ["1.35", "1.36"])
def test_allocated_claim_before_unallocated_one_cannot_be_scored(version: str) -> None:
    # claims [shared (allocated), template (not)]: Filter made 1 allocation; the claim at
    # index 1 has none -> Score error, the pod is not scheduled
    sim = simulate(version, *cluster(), node("node-c"), gpus("node-c", "big"), SHARED, PRIORITIZED,
                   claim_pod("p", ("a", "claim:shared"), ("b", "template:big-or-small")))
    att = first_attempt(sim, "p")
    assert att["result"] == "Error"
    assert "number of allocations 1 is smaller than number of claims" in att["message"]


def test_allocated_claim_uses_its_own_allocation_from_v1_37() -> None:
    sim = simulate("1.37", *cluster(), node("node-c"), gpus("node-c", "big"), SHARED, PRIORITIZED,
                   claim_pod("p", ("a", "claim:shared"), ("b", "template:big-or-small")))
    att = first_attempt(sim, "p")
    # the shared claim asks "exactly" (adds 0); the template claim scores as above, and
    # node-c's only device is taken by the shared claim
    assert dra_scores(att) == {"node-a": 200, "node-b": 174}
    assert att["chosen"] == "node-a"
