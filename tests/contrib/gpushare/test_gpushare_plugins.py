"""GpuShare and the score plugins inside the scheduler (kubesched.simulate), placements and
scores computed by hand from the simulator's definitions (hkust-adsl/kubernetes-scheduler-simulator
``pkg/simulator/plugin/open_gpu_share.go``, ``fgd_score.go``, ``gpu_packing_score.go``;
``pkg/utils/frag.go`` for the target workload and fragmentation).
"""

from typing import Any

import pytest

import kubesched
from kubesched.api.errors import KubeschedError

GS = "kubesched.contrib.gpushare:"
IDX = "alibabacloud.com/gpu-index"


def node(name: str, gpus: int, model: str = "V100", cpu: str = "8") -> dict[str, Any]:
    alloc = {"cpu": cpu, "memory": "32Gi", "pods": "110"}
    if gpus:
        alloc |= {"alibabacloud.com/gpu-count": str(gpus), "alibabacloud.com/gpu-milli": str(gpus * 1000)}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"alibabacloud.com/gpu-card-model": model} if gpus else {}},
            "status": {"allocatable": alloc}}


def pod(name: str, milli: int = 0, count: int = 1, models: str = "", on: str = "", index: str = "") -> dict[str, Any]:
    ann = {}
    if milli:
        ann = {"alibabacloud.com/gpu-milli": str(milli), "alibabacloud.com/gpu-count": str(count)}
    if models:
        ann["alibabacloud.com/gpu-card-model"] = models
    if index:
        ann[IDX] = index
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i",
                                            "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}
    if on:
        spec["nodeName"] = on
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "annotations": ann}, "spec": spec}


def config(score: str, selection: str = "tightest") -> dict[str, Any]:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler",
                          "plugins": {"multiPoint": {"enabled": [{"name": GS + "GpuShare"}]},
                                      "score": {"disabled": [{"name": "*"}],
                                                "enabled": [{"name": GS + score, "weight": 1000}]}},
                          "pluginConfig": [{"name": GS + "GpuShare", "args": {"gpuSelection": selection}}]}]}


def placed(result: kubesched.Result) -> dict[str, tuple[str, str, str | None]]:
    return {p.name: (p.status, p.node, p.annotations.get(IDX)) for p in result.pods}


def test_fgd_fills_the_half_used_gpu() -> None:
    # m1's GPU 1 holds a bound 500-milli pod. Target workload (every pod): 3 x (1 CPU, 500)
    # and 1 x (1 CPU, 1 whole GPU): 95% of 4 = 3.8 -> both shapes, .75 and .25.
    # q1 on m1: before: S fits, nothing below 500; W fits GPU 0, GPU 1's 500 < 1000: .25*500 = 125.
    #   GPU 1 -> [1000, 0]: 0 -> 100*sigmoid(0.125) = 53; GPU 0 -> [500, 500]: W lacks a GPU: 250 -> 46.
    # q1 on m2 (idle, 0): [500, 1000]: W fragments 500 -> .25*500 -> 46.  q1 -> m1, GPU 1.
    # q2: m1 [1000, 0] -> [500, 0]: W lacks a GPU: .25*500 = 125 -> 46; m2 likewise 46: tie, by name m1, GPU 0.
    # w: only m2 has a free GPU.
    objs = [node("m1", 2), node("m2", 2), pod("bound", 500, on="m1", index="1"),
            pod("q1", 500), pod("q2", 500), pod("w", 1000)]
    result = kubesched.simulate(*objs, config=config("FGDScore", "fgd"), tie_break="name")
    assert placed(result) == {"q1": ("Scheduled", "m1", "1"), "q2": ("Scheduled", "m1", "0"),
                              "w": ("Scheduled", "m2", "0")}
    why = kubesched.explain("default/q1", *objs, config=config("FGDScore", "fgd"), tie_break="name")
    assert why.to_json()["attempts"][0]["scores"] == {"m1": {"FGDScore": 53000}, "m2": {"FGDScore": 46000}}


def test_gpupacking_and_model_restriction() -> None:
    # p1 (700): idle 2-GPU V100s score max(33-2, 2) = 31, the idle 1-GPU T4 max(33-1, 1) = 32 -> t4.
    # p2 (500): t4 has 300 left: filtered; n1 = n2 = 31 -> n1 by name, tightest GPU: 0.
    # p3 (whole T4): t4's only GPU is partly used -> unschedulable.
    # p4 (2 whole): n1 has one free GPU -> n2, GPUs 0 and 1.
    # p5 (400): n1 GPU 0 has 500: 100 - (50 / 10) = 95 -> n1 GPU 0.
    objs = [node("n1", 2), node("n2", 2), node("t4", 1, "T4"), pod("p1", 700), pod("p2", 500),
            pod("p3", 1000, models="T4"), pod("p4", 1000, count=2), pod("p5", 400)]
    got = placed(kubesched.simulate(*objs, config=config("GpuPackingScore"), tie_break="name"))
    assert got["p1"] == ("Scheduled", "t4", "0")
    assert got["p2"] == ("Scheduled", "n1", "0")
    assert got["p3"][0] == "Unschedulable" and got["p3"][1] == ""
    assert got["p4"] == ("Scheduled", "n2", "0-1")
    assert got["p5"] == ("Scheduled", "n1", "0")


def test_unschedulable_message_names_the_gpu_reasons() -> None:
    objs = [node("n1", 1), node("t4", 1, "T4"), node("cpu", 0), pod("big", 1000, count=2, models="T4")]
    res = kubesched.simulate(*objs, config=config("BestFitScore"))
    msg = res.pod("default/big").message
    assert "node has no GPU" in msg and "node's GPU model is not requested" in msg
    assert "insufficient free GPU" in msg


def test_malformed_annotation_is_a_clear_rejection() -> None:
    res = kubesched.simulate(node("n1", 1), pod("bad", 1500), config=config("BestFitScore"))
    assert res.pod("default/bad").status == "Unschedulable"
    assert "1500 is more than one GPU" in res.pod("default/bad").message


def test_bad_plugin_args_name_the_field() -> None:
    cfg = config("BestFitScore", "smallest")
    with pytest.raises(KubeschedError, match="gpuSelection"):
        kubesched.simulate(node("n1", 1), pod("p", 500), config=cfg)


def test_a_pod_naming_its_gpus_gets_them() -> None:
    # open-gpu-share's AllocateGpuId honours a gpu-index annotation: GPU 1 of n1, else nowhere
    objs = [node("n1", 2), node("n2", 2), pod("first", 600, index="1"), pod("full", 500, index="1")]
    got = placed(kubesched.simulate(*objs, config=config("GpuPackingScore"), tie_break="name"))
    assert got["first"] == ("Scheduled", "n1", "1")
    # n1's GPU 1 has 400 left; n2's GPU 1 is free: the 500-milli pod naming GPU 1 goes to n2
    assert got["full"] == ("Scheduled", "n2", "1")


def test_random_score_picks_a_feasible_node_per_seed() -> None:
    cfg = config("RandomScore", "random")
    cfg["profiles"][0]["plugins"]["preScore"] = {"enabled": [{"name": GS + "RandomScore"}]}
    objs = [node("n1", 1), node("n2", 1), node("n3", 1, "T4"), pod("p", 500, models="V100")]
    chosen = {placed(kubesched.simulate(*objs, config=cfg, seed=s))["p"][1] for s in range(12)}
    assert chosen == {"n1", "n2"}
