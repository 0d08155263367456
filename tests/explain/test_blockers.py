"""Every blocker of a Pending pod, with its evidence (``kubesched.explanation.blockers``).

Hand computations use upstream v1.34.1's Filter order of the default profile
(``pkg/scheduler/apis/config/v1/default_plugins.go``: ... NodeResourcesFit, ...,
PodTopologySpread, InterPodAffinity) and PodTopologySpread's skew
(``podtopologyspread/filtering.go``: matches in the domain + self match - global min).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from kubesched.scheduler.whatif import SchedulerWhatIf
from kubesched.explanation.fixes import find_fixes
from tests.explain.scenarios import ZONE, node, pod, simulate
from tests.explain.test_fixes import _zones


def _world(tmp_path: Path, objs: list, target: str):  # type: ignore[no-untyped-def]
    sim = simulate(tmp_path, objs)
    out = next(o for o in sim.results() if o.pod.name == target)
    p = dataclasses.replace(sim.cluster.pods[out.pod.uid], nominated_node_name="")
    return sim, out, p, SchedulerWhatIf(sim.sched, list(sim.cluster.priority_classes.values()))


def test_spread_is_shown_beyond_upstreams_first_rejection(tmp_path: Path) -> None:
    sim, out, p, world = _world(tmp_path, _zones(), "web-6")
    b = world.blockers(p)
    # a1: cpu full (2 of 2) -> NodeResourcesFit decides; the spread constraint also rejects
    # it (zone-a: 2 + 1 - 1 = 2 > 1): upstream never says so.
    a1 = b.nodes["a1"]
    assert [x.plugin for x in a1] == ["NodeResourcesFit", "PodTopologySpread"]
    assert a1[0].upstream and not a1[1].upstream
    assert a1[0].evidence["resources"]["cpu"] == {
        "requested": "1", "allocatable": "2", "used": "2", "free": "0", "short": "1",
        "usedBy": [{"pod": "default/w1", "requested": "1", "priority": 0},
                   {"pod": "default/w2", "requested": "1", "priority": 0}], "usedByCount": 2}
    c = a1[1].evidence["constraints"][0]
    assert (c["counts"], c["globalMin"], c["skew"], c["neededDomains"]) == (
        {"zone-a": 2, "zone-b": 2, "zone-c": 1}, 1, 2, ["zone-c"])
    # c1 (zone-c) is allowed by the spread (1 + 1 - 1 = 1) and only full
    assert [x.plugin for x in b.nodes["c1"]] == ["NodeResourcesFit"]
    # the decisive verdict per node is the one the recorded attempt shows
    verdicts = out.attempts[-1].filter
    assert all(verdicts[n]["plugin"] == bs[0].plugin for n, bs in b.nodes.items())
    doc = b.to_json()
    assert doc["rejectionsBeyondUpstream"] == 2 and doc["byPlugin"] == {"NodeResourcesFit": 3, "PodTopologySpread": 2}


def test_taint_ports_and_anti_affinity_evidence(tmp_path: Path) -> None:
    port = {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "1"}},
                            "ports": [{"containerPort": 80, "hostPort": 8080}]}]}
    anti = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}}
    objs = [node("t", taints=[{"key": "k", "value": "v", "effect": "NoExecute"}]), node("h"),
            pod("holder", on="h", labels={"app": "web"}, spec=port),
            pod("new", labels={"app": "web"}, spec={**port, **anti})]
    _, _, p, world = _world(tmp_path, objs, "new")
    b = world.blockers(p)
    assert b.nodes["t"][0].evidence == {"untoleratedTaints": [{"key": "k", "value": "v", "effect": "NoExecute"}]}
    h = {x.plugin: x for x in b.nodes["h"]}
    assert h["NodePorts"].evidence["portsInUse"] == [
        {"port": 8080, "protocol": "TCP", "hostIP": "0.0.0.0", "usedBy": "default/holder"}]
    assert h["InterPodAffinity"].evidence["antiAffinityTerms"][0]["matchingPods"] == ["default/holder"]
    assert h["NodePorts"].upstream and not h["InterPodAffinity"].upstream


def test_questions_change_no_decision(tmp_path: Path) -> None:
    """The search leaves the scheduler as it found it: cache, start index, random state."""
    objs = _zones() + [node("d1", cpu="1", labels={ZONE: "zone-d"}, taints=[{"key": "x", "value": "y",
                                                                              "effect": "NoSchedule"}])]
    sim, _, p, world = _world(tmp_path, objs, "web-6")

    def state() -> tuple:
        return (sim.sched.next_start_node_index, sim.sched.rng.getstate(),
                {n: sorted(q.key for q in ni.pods) for n, ni in sim.cache.nodes.items()},
                sorted(sim.cache.nodes), {n: ni.node.taints for n, ni in sim.cache.nodes.items() if ni.node})

    before = state()
    report = find_fixes(world, p)
    assert report.checked > 0 and world.cycles > 0
    assert state() == before


def test_a_document_may_list_only_the_nodes_closest_to_fitting(tmp_path: Path) -> None:
    _, _, p, world = _world(tmp_path, _zones(), "web-6")
    doc = world.blockers(p).to_json(max_nodes=1)
    # c1 has one blocker (cpu); a1 and b1 have two (cpu and the spread)
    assert list(doc["nodes"]) == ["c1"] and doc["nodesOmitted"] == 2 and doc["blockedNodes"] == 3
    assert "nodesOmitted" not in world.blockers(p).to_json()


def test_nominated_pods_count_as_upstream_counts_them(tmp_path: Path) -> None:
    """A node holding a nominated pod of higher priority: upstream's Filter judges it with
    that pod added (``RunFilterPluginsWithNominatedPods``, framework/runtime/framework.go),
    so a 2-cpu node nominated for a 2-cpu pod has no room for a 1-cpu one."""
    gated = {"schedulingGates": [{"name": "example.com/hold"}]}  # stays pending, never tried
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
    objs = [high, node("n", cpu="2"), node("m", cpu="1"), pod("x", cpu="1", on="m"), pod("p", cpu="1", spec=gated),
            pod("hi", cpu="2", spec={**gated, "priorityClassName": "high"})]
    sim, _, p, world = _world(tmp_path, objs, "p")
    assert world.blockers(p).fits == ["n"]
    assert sim.queue is not None
    sim.queue.nominator.add(next(q for q in sim.cluster.pods.values() if q.name == "hi"), "n")
    b = world.blockers(p)
    assert b.fits == [] and [x.plugin for x in b.nodes["n"]] == ["NodeResourcesFit"]
    assert b.nodes["n"][0].evidence["resources"]["cpu"]["usedBy"][0]["pod"] == "default/hi"


def test_a_dry_cycle_preempts_only_when_asked(tmp_path: Path) -> None:
    """DefaultPreemption's dry run (defaultpreemption/default_preemption.go: lower-priority
    pods are victims) names a node only with ``preempt=True``; the profile's PostFilter
    plugins are the same afterwards."""
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
    objs = [high, node("n", cpu="2"), pod("low", cpu="2", on="n"), pod("p", cpu="1")]
    sim, _, p, world = _world(tmp_path, objs, "p")
    fw = sim.sched.profiles[p.scheduler_name]
    before = list(fw.post_filter_plugins)
    urgent = dataclasses.replace(p, priority=1000)
    assert world.try_pod(urgent).nominated is None
    got = world.try_pod(urgent, preempt=True)
    assert (got.node, got.nominated, [v.name for v in got.victims]) == (None, "n", ["low"])
    assert fw.post_filter_plugins == before and fw.points["postFilter"] == before
    assert sim.cluster.pods[next(u for u, q in sim.cluster.pods.items() if q.name == "low")].node_name == "n"


def test_volume_evidence_names_the_claim_its_volume_and_zones(tmp_path: Path) -> None:
    """VolumeZone (plugins/volumezone/volume_zone.go): a node whose zone label is not among
    the bound volume's zones is rejected; the evidence names claim, volume and both zones."""
    pv = {"apiVersion": "v1", "kind": "PersistentVolume",
          "metadata": {"name": "pv-a", "labels": {ZONE: "zone-a"}},
          "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "disk",
                   "gcePersistentDisk": {"pdName": "d1"}, "claimRef": {"namespace": "default", "name": "data"}},
          "status": {"phase": "Bound"}}
    # bound: volumeName set and the bind-completed annotation (upstream isPVCFullyBound)
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": "data", "namespace": "default",
                        "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
           "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "disk", "volumeName": "pv-a",
                    "resources": {"requests": {"storage": "10Gi"}}},
           "status": {"phase": "Bound"}}
    vol = {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]}
    objs = [pv, pvc, node("a", cpu="1", labels={ZONE: "zone-a"}), node("b", labels={ZONE: "zone-b"}),
            pod("x", cpu="1", on="a"), pod("p", spec=vol)]
    _, _, p, world = _world(tmp_path, objs, "p")
    b = world.blockers(p)
    zone = next(x for x in b.nodes["b"] if x.plugin == "VolumeZone")
    assert zone.evidence["claims"] == [{"claim": "data", "storageClass": "disk", "boundTo": "pv-a",
                                        "volumeZones": {ZONE: ["zone-a"]}, "nodeZones": {ZONE: "zone-b"}}]
    assert [x.plugin for x in b.nodes["a"]] == ["NodeResourcesFit"]


def test_device_evidence_names_the_claim_and_the_nodes_devices(tmp_path: Path) -> None:
    """DynamicResources (plugins/dynamicresources/dynamicresources.go): a claim asking 2
    devices of a class cannot be allocated on a node publishing 1."""
    cls = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}
    rs = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "a-gpu"},
          "spec": {"driver": "gpu.example.com", "nodeName": "a",
                   "pool": {"name": "a", "generation": 1, "resourceSliceCount": 1}, "devices": [{"name": "gpu-0"}]}}
    request = {"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 2}}
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "two", "namespace": "default"}, "spec": {"devices": {"requests": [request]}}}
    spec = {"resourceClaims": [{"name": "g", "resourceClaimName": "two"}]}
    objs = [cls, rs, claim, node("a"), pod("p", spec=spec)]
    _, _, p, world = _world(tmp_path, objs, "p")
    dra = next(x for x in world.blockers(p).nodes["a"] if x.plugin == "DynamicResources")
    assert dra.evidence["resourceClaims"][0]["claim"] == "two"
    assert dra.evidence["resourceClaims"][0]["allocated"] == []
    assert dra.evidence["resourceClaims"][0]["requests"][0]["exactly"]["count"] == 2
    assert dra.evidence["nodeDevices"] == {"gpu.example.com": 1}
    assert "gpu" in dra.evidence["detail"]  # the plugin's own account of the failed request
